"""Checks that every metric compiles: its entity, fields, filters, date, dimensions (through
links too) and currency exist in the catalog and in every connector's native maps."""

from __future__ import annotations

from erp_agent.catalog.catalog import Catalog
from erp_agent.catalog.entities import Entity, EntityKind
from erp_agent.catalog.fields import DATE_TYPES, NUMERIC_TYPES, Field, FieldType
from erp_agent.catalog.metrics import MeasureFunc, Metric, MetricMeasure

_MEASURE_TYPES = NUMERIC_TYPES | {FieldType.PERCENT}


def table_field(entity: Entity, path: str) -> tuple[Field, Field] | None:
    """``items.rate`` on an entity with an ``items`` table: (the table, the row field)."""
    head, _, rest = path.partition(".")
    table = entity.fields.get(head)
    if not rest or table is None or table.is_scalar:
        return None
    row = table.fields.get(rest)
    return (table, row) if row is not None and row.is_scalar else None


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


def check_metrics(catalog: Catalog) -> list[str]:
    """Every problem with the catalog's dimensions and metrics (empty when they compile)."""
    problems: list[str] = []
    for dim in catalog.dimensions.values():
        where = f"{dim.source}: dimension {dim.name!r}"
        if dim.entity is not None and dim.entity not in catalog.entities:
            problems.append(f"{where}: unknown entity {dim.entity!r}")
        if list(dim.age_ranges) != sorted(set(dim.age_ranges)):
            problems.append(f"{where}: age_ranges must ascend, e.g. [30, 60, 90, 120]")
        for entity_name, path in dim.paths.items():
            entity = catalog.entities.get(entity_name)
            if entity is None:
                problems.append(f"{where}: path for unknown entity {entity_name!r}")
                continue
            if table_field(entity, path) is not None:
                continue  # a table row's field (an invoice line's item)
            try:
                hops = resolve_path(catalog, entity, path)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if dim.age_ranges and hops[-1][1].type not in DATE_TYPES:
                problems.append(f"{where}: an ageing dimension's path {path!r} must be a date")
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
    for cut, target in metric.split_by.items():
        other = catalog.metrics.get(target)
        if other is None or cut not in other.dimensions or cut in metric.dimensions:
            problems.append(
                f"split_by {cut}: {target!r} must be a metric cut by {cut} (this one is not)"
            )
        elif other.entity != metric.entity or other.currency != metric.currency:
            problems.append(
                f"split_by {cut}: {target!r} must count the same records in the same currency"
            )
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
    elif metric.report is not None:
        problems += _report(catalog, metric)
    elif measure.func is MeasureFunc.LATEST:
        found = table_field(entity, str(measure.field))
        if found is None and not (
            measure.field in entity.fields and entity.fields[str(measure.field)].is_scalar
        ):
            problems.append(f"latest field {measure.field!r} is not a field of {entity.name}")
        if metric.date_field is None:
            problems.append("latest(...) needs a date_field to tell the latest record")
        for name in metric.details:
            if name not in entity.fields and table_field(entity, name) is None:
                problems.append(f"detail {name!r} is not a field of {entity.name}")
    else:
        problems += _measure_fields(catalog, entity, measure, "measure")
    for key, companion in metric.also.items():
        problems += _measure_fields(catalog, entity, companion.measure, f"also {key!r}")
    if metric.unit_field is not None:
        try:
            hops = resolve_path(catalog, entity, metric.unit_field)
            if hops[-1][1].target != "uom":
                problems.append(f"unit_field {metric.unit_field!r} is not a link to uom")
        except ValueError as exc:
            problems.append(f"unit_field: {exc}")
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
        if metric.report is not None:
            if name != "company" and name not in metric.report.cuts:
                problems.append(f"report metric dimension {name!r} has no cut in report.cuts")
            continue
        if _of_reports(catalog, metric):
            continue  # its two report metrics say how they are cut
        path = dim.path_for(entity.name, entity.fields)
        if path is not None and table_field(entity, path) is not None:
            continue
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
    used: list[str | None] = (
        [] if metric.report or measure.func is MeasureFunc.LATEST else [*measure.fields]
    )
    used.append(metric.date_field)
    if metric.currency not in ("none", "company"):
        used.append(metric.currency)
    problems += _mapped(catalog, [(entity.name, n) for n in used if n and "." not in n])
    return problems


def _measure_fields(
    catalog: Catalog, entity: Entity, measure: MetricMeasure, what: str
) -> list[str]:
    """Problems with the fields a sum/avg/min/max/net measure reads (a dotted path follows a
    link and is read from the linked records)."""
    problems: list[str] = []
    for name in measure.fields:
        if "." in name:
            try:
                hops = resolve_path(catalog, entity, name)
            except ValueError as exc:
                problems.append(f"{what}: {exc}")
                continue
            field = hops[-1][1]
            problems += _mapped(catalog, [(e.name, f.name) for e, f in hops])
        else:
            found = entity.fields.get(name)
            if found is None or not found.is_scalar:
                problems.append(f"{what} field {name!r} is not a field of {entity.name}")
                continue
            field = found
        if measure.func is not MeasureFunc.COUNT_DISTINCT and field.type not in _MEASURE_TYPES:
            problems.append(f"{measure.func} of {name!r}, a {field.type} field")
    return problems


def _of_reports(catalog: Catalog, metric: Metric) -> bool:
    """Whether a ratio's two metrics are both computed by the ERP's reports."""
    parts = [
        catalog.metrics.get(str(p)) for p in (metric.measure.numerator, metric.measure.denominator)
    ]
    return metric.measure.func is MeasureFunc.RATIO and all(
        p is not None and p.report is not None for p in parts
    )


def _report(catalog: Catalog, metric: Metric) -> list[str]:
    source = metric.report
    assert source is not None
    report = catalog.reports.get(source.name)
    if report is None:
        return [f"unknown report {source.name!r}"]
    problems = []
    params = [*source.params, *source.plain]
    for cut in source.cuts.values():
        params += [*cut.params, *([cut.filter_param] if cut.filter_param else [])]
    for name in params:
        if name not in report.params:
            problems.append(f"report {source.name!r} has no parameter {name!r}")
    for needed in ("company", "from_date", "to_date"):
        if needed not in report.params:
            problems.append(f"report {source.name!r} has no {needed!r}: it cannot be a metric")
    return problems


def _mapped(catalog: Catalog, fields: list[tuple[str, str]]) -> list[str]:
    """Problems for (entity, field) pairs some connector cannot name."""
    problems = []
    for maps in catalog.connectors.values():
        if maps.partial:
            continue  # a partial map offers only the metrics it can serve (catalog_for)
        for entity, field in fields:
            emap = maps.entities.get(entity)
            if emap is None:
                problems.append(f"the {maps.name} maps have no entity {entity!r}")
            elif field not in emap.fields:
                problems.append(f"the {maps.name} maps have no field {entity}.{field}")
    return problems
