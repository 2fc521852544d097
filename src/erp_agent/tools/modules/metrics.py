"""metrics.query and metrics.catalog: business figures from the catalog's metric definitions.

Each metric names its documents, filters, date, dimensions and currency once (catalog
``data/metrics.yaml``), so every answer counts the same rows and says how (``definition``).
Reads run as the user: a metric is offered only when the user may read its entity.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from erp_agent.catalog import Catalog, Metric
from erp_agent.connectors.query import Filter, Op
from erp_agent.errors import ErpError, ToolInputError
from erp_agent.metrics.answer import answer
from erp_agent.metrics.compute import MetricComputer
from erp_agent.metrics.periods import COMPARISONS, GRAINS
from erp_agent.metrics.request import FILTER_OPS, HAVING_OPS, MAX_TOP, parse_query
from erp_agent.tools.base import (
    Args,
    Effect,
    ReadHandler,
    Restrictions,
    Shape,
    Specialise,
    Tool,
    ToolContext,
)
from erp_agent.tools.factories.documents import has_documents
from erp_agent.tools.factories.schemas import Schema, obj
from erp_agent.tools.modules import _fetch

if TYPE_CHECKING:
    from erp_agent.calls.session import Session

MODULE = "metrics"
DESCRIPTION = (
    "The exact tool for any business figure (total, count, average, share, top N, by customer/"
    "item/branch/month, overdue or aged amounts, stock on hand, headcount, payroll): the metric "
    "whose definition fits, grouped, filtered, compared with an earlier period, top N or past "
    "a threshold. Computed by the ERP as the user; returns labelled rows, per-currency totals "
    "and the definition. Say which metric you used; never add figures in different currencies."
)
_READS = ("aggregate", "count", "list")


def readable_by(allowed: frozenset[str], metric: Metric, catalog: Catalog) -> bool:
    """Whether a user with ``allowed`` tools may read the metric's entities (the ERP still
    checks every read)."""
    entities = {metric.entity}
    if metric.measure.numerator:
        entities |= {
            catalog.metric(str(metric.measure.numerator)).entity,
            catalog.metric(str(metric.measure.denominator)).entity,
        }
    return all(any(f"{e}.{op}" in allowed for op in _READS) for e in entities)


def readable(ctx: ToolContext, metric: Metric, catalog: Catalog) -> bool:
    return readable_by(ctx.session.allowed_tools, metric, catalog)


def query_handler(catalog: Catalog) -> ReadHandler:
    """metrics.query's handler (a report's fallback runs it too)."""
    return _query(catalog)


def _query(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        query = parse_query(catalog, args)
        if not readable(ctx, query.metric, catalog):
            entity = catalog.entity(query.metric.entity)
            raise ToolInputError(
                f"you cannot read {entity.plural} in the ERP, so {query.metric.name} is not "
                "available to you"
            )
        try:
            today = dt.date.fromisoformat(query.as_of) if query.as_of else _fetch.today(ctx)
        except ValueError:
            raise ToolInputError(f"as_of {query.as_of!r} is not a date (YYYY-MM-DD)") from None
        result = await answer(MetricComputer(ctx, catalog, today), catalog, query)
        await with_names(ctx, catalog, result)
        return result

    return run


MAX_NAMED = 200  # codes named per dimension (a longer result keeps its codes only)


async def with_names(ctx: ToolContext, catalog: Catalog, result: dict[str, Any]) -> None:
    """Rows grouped by records that have a name besides their code (an item, a customer)
    carry the name in a column beside the code, read as the user: a model answering "which
    items" needs no second call to say what SKU-4410-BLK is."""
    if not isinstance(result.get("rows"), list):
        return
    rows: list[dict[str, Any]] = result["rows"]
    columns: list[dict[str, Any]] = list(result.get("columns") or [])
    for column in list(columns):
        key = str(column.get("key"))
        dimension = catalog.dimensions.get(key) if column.get("kind") == "dimension" else None
        entity = catalog.entities.get(dimension.entity or "") if dimension else None
        title = entity.title_field if entity is not None else None
        if entity is None or title is None or title.name == "id":
            continue
        codes = sorted({str(r[key]) for r in rows if isinstance(r.get(key), str)})[:MAX_NAMED]
        if not codes:
            continue
        try:
            page = await ctx.connector.list(
                ctx.session.credential,
                entity.name,
                fields=["id", title.name],
                filters=[Filter("id", Op.IN, codes)],
                limit=len(codes),
            )
        except ErpError:
            continue  # the codes stay; a name the user cannot read is not shown
        names = {str(r.get("id")): r.get(title.name) for r in page.records}
        if not any(names.get(c) not in (None, "", c) for c in codes):
            continue
        name_key = f"{key}_name"
        for row in rows:
            if isinstance(row.get(key), str):
                row[name_key] = names.get(row[key])
        at = columns.index(column) + 1
        columns.insert(at, {**column, "key": name_key, "label": f"{column.get('label')} name"})
    result["columns"] = columns


def _query_schema(catalog: Catalog, metrics: Sequence[Metric] | None = None) -> Schema:
    """The arguments of metrics.query over ``metrics`` (default: all): the dimension names
    defined once (``$defs``) and referenced where a dimension goes."""
    chosen = list(catalog.metrics.values()) if metrics is None else list(metrics)
    used = {d for m in chosen for d in m.dimensions}
    dimensions = sorted(d for d in catalog.dimensions if metrics is None or d in used)
    schema = obj(
        {
            "metric": {
                "type": "string",
                "enum": [m.name for m in chosen],
                "description": "metrics.catalog defines each.",
            },
            "group_by": {
                "type": "array",
                "maxItems": 4,
                "uniqueItems": True,
                "items": {"anyOf": [{"$ref": "#/$defs/dimension"}, {"enum": list(GRAINS)}]},
                "description": "The metric's dimensions, at most one time grain.",
            },
            "filters": {
                "type": "array",
                "items": obj(
                    {
                        "dimension": {"$ref": "#/$defs/dimension"},
                        "op": {"type": "string", "enum": list(FILTER_OPS)},
                        "value": {
                            "type": ["string", "number", "boolean", "array"],
                            "items": {"type": ["string", "number"]},
                        },
                    },
                    ["dimension", "value"],
                ),
                "description": "e.g. branch = Kisumu (ids as in the ERP).",
            },
            "period": obj(
                {
                    "from": {"type": "string", "format": "date"},
                    "to": {"type": "string", "format": "date"},
                    "fiscal_year": {"type": "string"},
                },
                [],
            )
            | {"description": "Inclusive dates, or a fiscal year."},
            "compare_to": {"type": "string", "enum": list(COMPARISONS)},
            "compare_period": obj(
                {
                    "from": {"type": "string", "format": "date"},
                    "to": {"type": "string", "format": "date"},
                },
                ["from", "to"],
            )
            | {"description": "Instead of compare_to."},
            "top": {"type": "integer", "minimum": 1, "maximum": MAX_TOP},
            "others": {
                "type": "boolean",
                "description": "With top: an 'All others' row.",
            },
            "order": {"type": "string", "enum": ["desc", "asc"]},
            "having": obj(
                {
                    "measure": {"type": "string"},
                    "op": {"type": "string", "enum": list(HAVING_OPS)},
                    "value": {"type": "number"},
                },
                ["value"],
            )
            | {"description": "Keep groups past it, e.g. > 10000."},
            "as_of": {
                "type": "string",
                "format": "date",
                "description": "The day 'today' means (default today).",
            },
        },
        ["metric"],
    )
    schema["$defs"] = {"dimension": {"type": "string", "enum": dimensions}}
    return schema


def _for_user(catalog: Catalog) -> Specialise:
    """metrics.query as a user sees it: only the metrics over records they may read (and the
    dimensions those metrics have). A function of the permitted tools only, so one schema per
    role serves every user of it."""

    @functools.lru_cache(maxsize=64)
    def schema(allowed: frozenset[str]) -> str:
        return json.dumps(
            _query_schema(
                catalog, [m for m in catalog.metrics.values() if readable_by(allowed, m, catalog)]
            )
        )

    def specialise(parameters: Schema, session: Session, restrictions: Restrictions) -> Schema:
        found: Schema = json.loads(schema(session.allowed_tools))
        return found

    return specialise


def _describe(metric: Metric, catalog: Catalog) -> dict[str, Any]:
    entity = catalog.entity(metric.entity)
    return {
        "name": metric.name,
        "label": metric.label,
        "group": metric.group,
        "description": " ".join(metric.description.split()),
        "synonyms": list(metric.synonyms),
        "entity": entity.label,
        "measure": str(metric.measure),
        "filters": [str(f) for f in metric.filters]
        + ([metric.returns_text] if metric.returns_text else []),
        "documents": "submitted only"
        if metric.documents == "submitted" and has_documents(entity)
        else "as filtered",
        "date_field": metric.date_field,
        "dimensions": list(metric.dimensions),
        "currency": metric.currency,
        "unit": metric.unit,
        **({"unit_of_measure": f"per {metric.unit_field}, never added across units"}
           if metric.unit_field else {}),
        **({"balance": "everything dated on or before the period's end (or as_of)"}
           if metric.cumulative else {}),
        **({"report": catalog.report(metric.report.name).label} if metric.report else {}),
        **({"also": {k: c.label for k, c in metric.also.items()}} if metric.also else {}),
    }  # fmt: skip


def _catalog(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        visible = [m for m in catalog.metrics.values() if readable(ctx, m, catalog)]
        name = args.get("metric")
        if name:
            match = next((m for m in visible if m.name == name), None)
            if match is None:
                raise ToolInputError(
                    f"unknown metric {name!r}; available: {', '.join(m.name for m in visible)}"
                )
            return {"metrics": [_describe(match, catalog)]}
        words = str(args.get("query") or "").lower().split()
        group = args.get("group")

        def hit(metric: Metric) -> bool:
            text = " ".join([metric.name, metric.label, *metric.synonyms, metric.description])
            return (not group or metric.group == group) and all(w in text.lower() for w in words)

        found = [m for m in visible if hit(m)]
        return {
            "metrics": [
                {"name": m.name, "label": m.label, "group": m.group, "synonyms": list(m.synonyms)}
                for m in found
            ],
            "note": "Call metrics.catalog with metric=<name> for its full definition.",
        }

    return run


def tools(catalog: Catalog) -> list[Tool]:
    groups = sorted({m.group for m in catalog.metrics.values() if m.group})
    return [
        Tool(
            name="metrics.query",
            description=DESCRIPTION,
            parameters=_query_schema(catalog),
            effect=Effect.READ,
            module=MODULE,
            run=_query(catalog),
            specialise=_for_user(catalog),
            action="query",
            shape=Shape.METRIC,
        ),
        Tool(
            name="metrics.catalog",
            description=(
                "The metrics you can query, found by words or group, or one metric's definition "
                "(documents, filters, date, dimensions, currency): pick the one whose definition "
                "matches the question's meaning."
            ),
            parameters=obj(
                {
                    "query": {"type": "string", "maxLength": 200},
                    "group": {"type": "string", "enum": groups},
                    "metric": {"type": "string"},
                },
                [],
            ),
            effect=Effect.READ,
            module=MODULE,
            run=_catalog(catalog),
            action="catalog",
            shape=Shape.METRIC,
        ),
    ]
