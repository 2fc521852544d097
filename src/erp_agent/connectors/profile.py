"""The catalog as one connector can serve it: only the entities, fields, operations, reports and
metrics the active connector declares in its profile.

Tool factories, routing and the offline planner all read the catalog, so handing them this view
is what makes them generate only what the connector can do: a system without workflows gets no
workflow tools, a read-only mapping no write tools, an unmapped entity no tools at all.
"""

from __future__ import annotations

from erp_agent.catalog import Catalog, Entity, load_catalog
from erp_agent.catalog.entities import Operation
from erp_agent.catalog.maps import ConnectorMaps
from erp_agent.catalog.metrics import Dimension, Metric
from erp_agent.connectors.base import Capability, Connector, ConnectorProfile

_WORKFLOW_FIELD = "workflow_state"


def catalog_for(
    catalog: Catalog, profile: ConnectorProfile, maps: ConnectorMaps | None = None
) -> Catalog:
    """``catalog`` restricted to what ``profile`` serves; ``maps`` (the connector's native maps,
    for id patterns and links) replace any the catalog ships under the connector's name."""
    entities: dict[str, Entity] = {}
    for name, entity in catalog.entities.items():
        ops = profile.operations(name)
        if not ops:
            continue
        keep = profile.fields.get(name)
        fields = {
            n: f for n, f in entity.fields.items() if keep is None or n in keep or f.identifier
        }
        if not profile.can(Capability.WORKFLOWS):
            fields.pop(_WORKFLOW_FIELD, None)
        operations = tuple(op for op in entity.operations if op.value in ops)
        if not operations:
            continue
        entities[name] = entity.model_copy(
            update={
                "fields": fields,
                "operations": operations,
                "date_field": entity.date_field if entity.date_field in fields else None,
                "amount_field": entity.amount_field if entity.amount_field in fields else None,
                "status_field": entity.status_field if entity.status_field in fields else None,
            }
        )
    # A dimension whose entity this system does not keep as records (a payment method that is
    # only a column's value) still groups the metrics whose records carry the field.
    dimensions = dict(catalog.dimensions)
    metrics: dict[str, Metric] = {}
    for name, metric in catalog.metrics.items():
        if metric.report is not None and metric.report.name not in profile.reports:
            continue  # a figure the ERP's own report computes needs that report
        parts = [catalog.metrics.get(str(p)) for p in (metric.measure.numerator,
                                                        metric.measure.denominator)]  # fmt: skip
        if metric.measure.numerator and all(p is not None and p.report for p in parts):
            metrics[name] = metric  # a ratio of report figures: cut as its reports are
            continue
        kept = _metric_for(metric, entities, dimensions)
        if kept is not None:
            metrics[name] = kept
    # A ratio needs both of its metrics.
    metrics = {
        n: m
        for n, m in metrics.items()
        if all(
            part is None or part in metrics for part in (m.measure.numerator, m.measure.denominator)
        )
    }
    reports = {
        n: r
        for n, r in {**catalog.reports, **profile.declared_reports}.items()
        if n in profile.reports and (r.entity is None or r.entity in entities)
    }
    connectors = dict(catalog.connectors)
    if maps is not None:
        connectors[profile.name] = maps
    return catalog.model_copy(
        update={
            "entities": entities,
            "reports": reports,
            "metrics": metrics,
            "dimensions": dimensions,
            "connectors": connectors,
        }
    )


def connector_catalog(connector: Connector, catalog: Catalog | None = None) -> Catalog:
    """The (packaged) catalog as ``connector`` serves it."""
    return catalog_for(catalog or load_catalog(), connector.profile, connector.native_maps())


def _reaches(entities: dict[str, Entity], entity: Entity, path: str) -> bool:
    head, _, rest = path.partition(".")
    field = entity.fields.get(head)
    if field is None:
        return False
    if not rest:
        return True
    if not field.is_scalar:  # a table row's field: ``items.item``
        return rest in field.fields
    target = entities.get(field.target) if field.target else None
    return target is not None and _reaches(entities, target, rest)


def _metric_for(
    metric: Metric, entities: dict[str, Entity], dimensions: dict[str, Dimension]
) -> Metric | None:
    entity = entities.get(metric.entity)
    if entity is None or not entity.allows(Operation.AGGREGATE):
        return None
    if metric.report is None and not all(
        _reaches(entities, entity, f) for f in metric.measure.fields
    ):
        return None
    for companion in metric.also.values():
        if not all(_reaches(entities, entity, f) for f in companion.measure.fields):
            return None
    if metric.unit_field and not _reaches(entities, entity, metric.unit_field):
        return None
    if metric.date_field and metric.date_field not in entity.fields:
        return None
    if metric.returns is not None and "is_return" not in entity.fields:
        return None
    for flt in metric.filters:
        if not _reaches(entities, entity, flt.field):
            return None
        ref = flt.reference
        if ref and not _reaches(entities, entity, ref):
            return None
    if metric.currency not in ("none", "company") and metric.currency not in entity.fields:
        return None
    if metric.currency == "company":
        company = dimensions.get("company")
        path = company.path_for(entity.name, entity.fields) if company else None
        if path is None or not _reaches(entities, entity, path):
            return None
    if metric.report is not None:  # the report's own columns cut it
        return metric
    kept = tuple(
        d
        for d in metric.dimensions
        if d in dimensions
        and (path := dimensions[d].path_for(entity.name, entity.fields)) is not None
        and _reaches(entities, entity, path)
    )
    return metric.model_copy(update={"dimensions": kept})
