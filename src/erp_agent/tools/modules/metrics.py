"""metrics.query and metrics.catalog: business figures from the catalog's metric definitions.

Each metric names its documents, filters, date, dimensions and currency once (catalog
``data/metrics.yaml``), so every answer counts the same rows and says how (``definition``).
Reads run as the user: a metric is offered only when the user may read its entity.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from erp_agent.catalog import Catalog, Metric
from erp_agent.errors import ToolInputError
from erp_agent.metrics.answer import answer
from erp_agent.metrics.compute import MetricComputer
from erp_agent.metrics.periods import COMPARISONS, GRAINS
from erp_agent.metrics.request import FILTER_OPS, HAVING_OPS, MAX_TOP, parse_query
from erp_agent.tools.base import Args, Effect, ReadHandler, Shape, Tool, ToolContext
from erp_agent.tools.factories.schemas import Schema, obj
from erp_agent.tools.modules import _fetch

MODULE = "metrics"
RULE = (
    "For any figure (totals, counts, sums by customer/branch/month, top N, overdue, stock on "
    "hand, headcount, payroll) call metrics.query with the metric whose definition fits; look "
    "one up with metrics.catalog when unsure. Quote figures as returned, per currency, and say "
    "which metric you used (e.g. 'billed, incl. tax' vs 'revenue, net of tax') and its "
    "definition's filters and period. Never add figures in different currencies."
)
_READS = ("aggregate", "count", "list")


def readable(ctx: ToolContext, metric: Metric, catalog: Catalog) -> bool:
    """Whether the user may read the metric's entities (the ERP still checks every read)."""
    entities = {metric.entity}
    if metric.measure.numerator:
        entities |= {
            catalog.metric(str(metric.measure.numerator)).entity,
            catalog.metric(str(metric.measure.denominator)).entity,
        }
    allowed = ctx.session.allowed_tools
    return all(any(f"{e}.{op}" in allowed for op in _READS) for e in entities)


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
        return await answer(MetricComputer(ctx, catalog, today), catalog, query)

    return run


def _query_schema(catalog: Catalog) -> Schema:
    dimensions = sorted(catalog.dimensions)
    return obj(
        {
            "metric": {
                "type": "string",
                "enum": list(catalog.metrics),
                "description": "The metric (metrics.catalog describes each).",
            },
            "group_by": {
                "type": "array",
                "maxItems": 4,
                "uniqueItems": True,
                "items": {"type": "string", "enum": [*dimensions, *GRAINS]},
                "description": "Dimensions the metric allows, and at most one time grain "
                "(day, week, month, quarter, year, fiscal_year).",
            },
            "filters": {
                "type": "array",
                "items": obj(
                    {
                        "dimension": {"type": "string", "enum": dimensions},
                        "op": {"type": "string", "enum": list(FILTER_OPS)},
                        "value": {
                            "type": ["string", "number", "boolean", "array"],
                            "items": {"type": ["string", "number"]},
                        },
                    },
                    ["dimension", "value"],
                ),
                "description": "Conditions on dimensions, e.g. branch = Kisumu (ids as in the ERP).",
            },
            "period": obj(
                {
                    "from": {"type": "string", "format": "date"},
                    "to": {"type": "string", "format": "date"},
                    "fiscal_year": {"type": "string"},
                },
                [],
            )
            | {"description": "Dates the metric's date falls in (inclusive), or a fiscal year."},
            "compare_to": {"type": "string", "enum": list(COMPARISONS)},
            "top": {"type": "integer", "minimum": 1, "maximum": MAX_TOP},
            "others": {
                "type": "boolean",
                "description": "With top: add an 'All others' row summing the rest.",
            },
            "order": {"type": "string", "enum": ["desc", "asc"]},
            "having": obj(
                {
                    "measure": {"type": "string", "description": "The metric's name (default)."},
                    "op": {"type": "string", "enum": list(HAVING_OPS)},
                    "value": {"type": "number"},
                },
                ["value"],
            )
            | {"description": "Keep only groups whose value passes, e.g. > 10000."},
            "as_of": {
                "type": "string",
                "format": "date",
                "description": "The day 'today' means in the metric's filters (default today).",
            },
        },
        ["metric"],
    )


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
        if metric.documents == "submitted" and "docstatus" in entity.fields
        else "as filtered",
        "date_field": metric.date_field,
        "dimensions": list(metric.dimensions),
        "currency": metric.currency,
        "unit": metric.unit,
    }


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
            description=(
                "The exact tool for business figures: a catalog metric (revenue, billed, "
                "receivables, overdue_receivables, purchases, cash_received, stock_on_hand, "
                "stock_value, headcount, payroll_gross...) grouped by its dimensions and/or a "
                "time grain, filtered by dimensions and a period, optionally compared with the "
                "previous period or the same period last year, top N with an 'All others' row, "
                "or a having threshold. Computed by the ERP as you; returns rows with labelled "
                "columns, per-currency totals and the definition (documents, filters, period, "
                "records counted, source)."
            ),
            parameters=_query_schema(catalog),
            effect=Effect.READ,
            module=MODULE,
            run=_query(catalog),
            prompt_rules=RULE,
            action="query",
            shape=Shape.METRIC,
        ),
        Tool(
            name="metrics.catalog",
            description=(
                "List the business metrics you can query (by words or group: "
                f"{', '.join(groups)}), or describe one: its definition, documents counted, "
                "filters, date, dimensions and currency rule."
            ),
            parameters=obj(
                {
                    "query": {"type": "string", "maxLength": 200},
                    "group": {"type": "string", "enum": groups},
                    "metric": {"type": "string", "enum": list(catalog.metrics)},
                },
                [],
            ),
            effect=Effect.READ,
            module=MODULE,
            run=_catalog(catalog),
            prompt_rules="Pick the metric whose definition matches the question's meaning.",
            action="catalog",
            shape=Shape.METRIC,
        ),
    ]
