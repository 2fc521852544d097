"""Checks that every metric compiles: its entity, fields, filters, date, dimensions (through
links too) and currency exist in the catalog and in every connector's native maps."""

from __future__ import annotations

from erp_agent.catalog.catalog import Catalog
from erp_agent.catalog.entities import Entity, EntityKind
from erp_agent.catalog.fields import DATE_TYPES, NUMERIC_TYPES, Field, FieldType
from erp_agent.catalog.metrics import Dimension, MeasureFunc, Metric

_MEASURE_TYPES = NUMERIC_TYPES | {FieldType.PERCENT}


def resolve_path(catalog: Catalog, entity: Entity, path: str) -> list[tuple[Entity, Field]]:
    """Each hop of a dotted path as (entity it is read on, field); ``ValueError`` if broken."""
    hops: list[tuple[Entity, Field]] = []
    current = entity
    parts = path.split(".")
    for i, name in enumerate(parts):
        field = current.fields.get(name)
        if field is None or not field.is_scalar:
            raise ValueError(f"{current.name} has no scalar field {name!r} (path {path!r})")
        hops.append((current, field))
        if i < len(parts) - 1:
            if field.target is None or field.target not in catalog.entities:
                raise ValueError(f"{current.name}.{name} is not a link; cannot follow {path!r}")
            current = catalog.entities[field.target]
    return hops


def dimension_path(catalog: Catalog, metric: Metric, dimension: Dimension) -> str | None:
    entity = catalog.entities[metric.entity]
    return dimension.path_for(entity.name, entity.fields)


def check_metrics(catalog: Catalog) -> list[str]:
    """Every problem with the catalog's dimensions and metrics (empty when they compile)."""
    problems: list[str] = []
    for dim in catalog.dimensions.values():
        where = f"{dim.source}: dimension {dim.name!r}"
        if dim.entity is not None and dim.entity not in catalog.entities:
            problems.append(f"{where}: unknown entity {dim.entity!r}")
        for entity_name, path in dim.paths.items():
            entity = catalog.entities.get(entity_name)
            if entity is None:
                problems.append(f"{where}: path for unknown entity {entity_name!r}")
                continue
            try:
                resolve_path(catalog, entity, path)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
    for metric in catalog.metrics.values():
        problems += [
            f"{metric.source}: metric {metric.name!r}: {p}" for p in _metric(catalog, metric)
        ]
    return problems


def _metric(catalog: Catalog, metric: Metric) -> list[str]:
    entity = catalog.entities.get(metric.entity)
    if entity is None:
        return [f"unknown entity {metric.entity!r}"]
    problems: list[str] = []
    measure = metric.measure
    if measure.func is MeasureFunc.RATIO:
        for part in (measure.numerator, measure.denominator):
            other = catalog.metrics.get(str(part))
            if other is None:
                problems.append(f"ratio of unknown metric {part!r}")
            elif other.measure.func is MeasureFunc.RATIO:
                problems.append(f"ratio of a ratio ({part!r}) is not supported")
            elif not set(metric.dimensions) <= set(other.dimensions):
                extra = ", ".join(sorted(set(metric.dimensions) - set(other.dimensions)))
                problems.append(f"dimensions {extra} are not allowed by {part!r}")
    elif measure.field is not None:
        field = entity.fields.get(measure.field)
        if field is None or not field.is_scalar:
            problems.append(f"measure field {measure.field!r} is not a field of {entity.name}")
        elif measure.func is not MeasureFunc.COUNT_DISTINCT and field.type not in _MEASURE_TYPES:
            problems.append(f"{measure.func} of {measure.field!r}, a {field.type} field")
    for flt in metric.filters:
        for path in (flt.field, flt.reference):
            if path is None:
                continue
            try:
                hops = resolve_path(catalog, entity, path)
            except ValueError as exc:
                problems.append(f"filter {str(flt)!r}: {exc}")
                continue
            problems += _mapped(catalog, [(e.name, f.name) for e, f in hops])
    if metric.returns is not None and "is_return" not in entity.fields:
        problems.append(f"'returns' is set but {entity.name} has no is_return field")
    if (
        metric.returns is None
        and "is_return" in entity.fields
        and measure.func is not MeasureFunc.RATIO
    ):
        problems.append("say what happens to credit notes: returns included/excluded/only")
    if (
        metric.documents == "submitted"
        and measure.func is not MeasureFunc.RATIO
        and entity.kind is EntityKind.TRANSACTION
        and "docstatus" not in entity.fields
    ):
        problems.append(f"{entity.name} is a transaction without a docstatus field")
    if metric.date_field is not None:
        date = entity.fields.get(metric.date_field)
        if date is None or date.type not in DATE_TYPES:
            problems.append(f"date_field {metric.date_field!r} is not a date of {entity.name}")
    for name in metric.dimensions:
        dim = catalog.dimensions.get(name)
        if dim is None:
            problems.append(f"unknown dimension {name!r}")
            continue
        path = dim.path_for(entity.name, entity.fields)
        if path is None:
            problems.append(f"{entity.name} has no path to dimension {name!r}")
            continue
        try:
            hops = resolve_path(catalog, entity, path)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        problems += _mapped(catalog, [(e.name, f.name) for e, f in hops])
    if metric.currency == "company":
        company = catalog.dimensions.get("company")
        if company is None or company.path_for(entity.name, entity.fields) is None:
            problems.append(f"currency 'company' needs a path from {entity.name} to its company")
    elif metric.currency != "none":
        field = entity.fields.get(metric.currency)
        if field is None or field.target != "currency":
            problems.append(f"currency field {metric.currency!r} is not a link to currency")
    used = [measure.field, metric.date_field]
    if metric.currency not in ("none", "company"):
        used.append(metric.currency)
    problems += _mapped(catalog, [(entity.name, n) for n in used if n])
    return problems


def _mapped(catalog: Catalog, fields: list[tuple[str, str]]) -> list[str]:
    """Problems for (entity, field) pairs some connector cannot name."""
    problems = []
    for maps in catalog.connectors.values():
        for entity, field in fields:
            emap = maps.entities.get(entity)
            if emap is None:
                problems.append(f"the {maps.name} maps have no entity {entity!r}")
            elif field not in emap.fields:
                problems.append(f"the {maps.name} maps have no field {entity}.{field}")
    return problems
