"""Analytics tools, ``analytics.<name>``: exact aggregates with shares of total, and named
analyses (trend, period comparison, ageing, concentration, forecast, anomalies).

Every tool reads as the signed-in user — only the fields its analysis needs, every matching
record — and returns the summary the analysis computed (KPIs, chart, observations, a small
table) with how the figures were obtained; never the rows. Each analysis is of one currency:
documents in several run once per currency (``_currencies.each_currency``).

Requirements: the tools choose their entity per call (``entity`` or ``side``), so none can
name its ERP right up front (``Requirement`` is per tool) and they carry none; the ERP refuses
per entity as the user, and its refusal reaches the model verbatim.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Callable
from typing import Any

from erp_agent.analytics import DEFAULT_RANGES, THRESHOLD
from erp_agent.catalog import Catalog, Entity, Operation
from erp_agent.connectors.query import AggregateRequest, Filter, Func, Op
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import Args, Effect, ReadHandler, Shape, Tool, ToolContext
from erp_agent.tools.factories import documents as documents_of
from erp_agent.tools.factories import filters as grammar
from erp_agent.tools.factories.entity import aggregate_text
from erp_agent.tools.factories.schemas import Schema, obj
from erp_agent.tools.modules import _fetch
from erp_agent.tools.modules._currencies import each_currency
from erp_agent.tools.modules._schemas import (
    DATE,
    DOCUMENTS,
    FILTERS,
    GROUP_BY,
    MEASURES,
    entity_enum,
)

MODULE = "analytics"
RULE = ""  # quoting figures as returned is the core prompt's rule for every tool


def _analysis(module: str, function: str) -> Any:
    """An analysis function, imported on first use (pandas and scipy are slow to import)."""
    return getattr(importlib.import_module(f"erp_agent.analytics.{module}"), function)


def _aggregatable(catalog: Catalog) -> list[Entity]:
    return [e for e in catalog.entities.values() if e.allows(Operation.AGGREGATE)]


def _dated(catalog: Catalog) -> list[Entity]:
    return [e for e in _aggregatable(catalog) if e.date_field and e.amount_field]


def _entity(catalog: Catalog, args: Args) -> Entity:
    return catalog.entity(str(args["entity"]))


def _entity_of(catalog: Catalog) -> Callable[[Args], Entity]:
    return lambda args: _entity(catalog, args)


def _side_of(catalog: Catalog) -> Callable[[Args], Entity]:
    return lambda args: catalog.entity(SIDES[str(args.get("side", "receivable"))][0])


def _measure_field(entity: Entity, args: Args) -> str:
    name = str(args.get("field") or entity.amount_field or "")
    if name not in grammar.measurable(entity):
        raise ToolInputError(
            f"{entity.name} cannot sum {name!r}; numeric fields: "
            f"{', '.join(grammar.measurable(entity)) or 'none'}"
        )
    return name


def _answer(name: str, entity: Entity, source: _fetch.Source, result: Any) -> dict[str, Any]:
    return {"analysis": name, "entity": entity.name, "source": source.as_dict(), **result.as_dict()}


# ------------------------------------------------------------------ analytics.aggregate


def _check_fields(entity: Entity, args: Args) -> None:
    measurable, groupable = grammar.measurable(entity), grammar.groupable(entity)
    for m in args.get("measures") or ():
        if m.get("field") and m["field"] not in measurable:
            raise ToolInputError(
                f"{entity.name} cannot {m['func']} {m['field']!r}; numeric fields: "
                f"{', '.join(measurable) or 'none'}"
            )
    for g in args.get("group_by") or ():
        if g["field"] not in groupable:
            raise ToolInputError(
                f"{entity.name} cannot be grouped by {g['field']!r}; groupable fields: "
                f"{', '.join(groupable)}"
            )


def _aggregate(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        entity = _entity(catalog, args)
        _check_fields(entity, args)
        filters, basis = _fetch.base_filters(
            entity, args.get("filters") or (), args.get("documents", "submitted")
        )
        request = AggregateRequest(
            measures=grammar.parse_measures(entity, args["measures"]),
            group_by=grammar.parse_group_by(entity, args.get("group_by") or ()),
            filters=tuple(filters),
        )
        result = await _fetch.aggregate(ctx, entity, request)
        sums = [m.alias for m in request.measures if m.func in (Func.SUM, Func.COUNT)]
        if request.group_by:
            rows, totals = _analysis("shares", "with_shares")(result.rows, sums)
        else:
            rows, totals = result.rows, {}
        return {
            "entity": entity.name,
            "rows": rows,
            "totals": totals,
            "record_count": result.record_count,
            "groups": len(rows),
            "method": result.method,
            "detail": result.detail,
            "basis": basis,
            "definition": documents_of.definition(
                entity, aggregate_text(entity, request), filters, basis, result.record_count,
                f"{'ERP aggregate' if result.method == 'pushdown' else result.method}: "
                f"{result.detail}",
            ),
        }  # fmt: skip

    return run


def aggregate_tool(catalog: Catalog) -> Tool:
    entities = _aggregatable(catalog)
    return Tool(
        name="analytics.aggregate",
        description=(
            "Exact sum, count, average, minimum and maximum over any entity you can read, "
            "optionally grouped by a field or by year/quarter/month of a date, with each group's "
            "share of the total (share_<measure>, in percent) for sums and counts. Computed by "
            "the ERP (or exactly from every record when it cannot), never capped. Returns rows "
            "(one per group), totals, record_count, and method/detail saying how. Fields are the "
            "entity's canonical fields; an unknown one is refused with the valid ones listed."
        ),
        parameters=obj(
            {
                "entity": entity_enum(entities),
                "measures": MEASURES,
                "group_by": GROUP_BY,
                "filters": FILTERS,
                "documents": DOCUMENTS,
            },
            ["entity", "measures"],
        ),
        effect=Effect.READ,
        module=MODULE,
        run=_aggregate(catalog),
        prompt_rules=RULE,
        action="aggregate",
        shape=Shape.WHOLE,
    )


# ------------------------------------------------------------------ monthly series analyses


def _series_schema(catalog: Catalog, extra: dict[str, Schema]) -> Schema:
    return obj(
        {
            "entity": entity_enum(_dated(catalog)),
            "field": {
                "type": "string",
                "description": "The amount to analyse; default: the entity's amount field.",
            },
            "filters": FILTERS,
            "documents": DOCUMENTS,
            **extra,
        },
        ["entity"],
    )


def _months_ahead(default: int, maximum: int) -> Schema:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "default": default,
        "description": f"Months to project ahead (default {default}).",
    }


async def _monthly(
    ctx: ToolContext, catalog: Catalog, args: Args
) -> tuple[Entity, list[dict[str, Any]], _fetch.Source]:
    entity = _entity(catalog, args)
    field = _measure_field(entity, args)
    filters, basis = _fetch.base_filters(
        entity, args.get("filters") or (), args.get("documents", "submitted")
    )
    rows, source = await _fetch.monthly_totals(ctx, entity, field, filters, basis)
    return entity, rows, source


def _trend(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        entity, rows, source = await _monthly(ctx, catalog, args)
        result = _analysis("trend", "monthly_trend")(
            rows, months_ahead=int(args.get("months_ahead", 3))
        )
        return _answer("monthly_trend", entity, source, result)

    return run


def _forecast(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        entity, rows, source = await _monthly(ctx, catalog, args)
        if not args.get("include_current_month", False):
            # A month still running would read as a collapse and drag the forecast down.
            current = _fetch.today(ctx).replace(day=1).isoformat()
            rows = [r for r in rows if r["date"] < current]
        result = _analysis("_forecast", "forecast")(
            rows, months_ahead=int(args.get("months_ahead", 6))
        )
        return _answer("forecast", entity, source, result)

    return run


def _comparison(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        entity = _entity(catalog, args)
        assert entity.date_field is not None
        field = _measure_field(entity, args)
        as_of = dt.date.fromisoformat(args["as_of"]) if args.get("as_of") else _fetch.today(ctx)
        period = args.get("period", "year")
        yoy = bool(args.get("year_on_year", False))
        windows = _analysis("trend", "comparison_windows")(as_of, period, year_on_year=yoy)
        filters, basis = _fetch.base_filters(
            entity, args.get("filters") or (), args.get("documents", "submitted")
        )
        rows, source = await _fetch.window_totals(ctx, entity, field, filters, windows, basis)
        result = _analysis("trend", "period_comparison")(
            rows, as_of=as_of, period=period, year_on_year=yoy, count="count"
        )
        return _answer("period_comparison", entity, source, result)

    return run


def series_tools(catalog: Catalog) -> list[Tool]:
    common: dict[str, Any] = {"effect": Effect.READ, "module": MODULE, "prompt_rules": RULE}
    return [
        Tool(
            name="analytics.trend",
            description=(
                "Monthly totals of an entity's amount with month-on-month and year-on-year "
                "growth, the fitted linear trend (slope, R²) and a straight-line projection. "
                "Totals come from the ERP, grouped by month. Returns kpis, a line chart, "
                "observations and the last 12 months as a table."
            ),
            parameters=_series_schema(catalog, {"months_ahead": _months_ahead(3, 12)}),
            run=each_currency(_entity_of(catalog), _trend(catalog)),
            action="trend",
            shape=Shape.WHOLE,
            **common,
        ),
        Tool(
            name="analytics.comparison",
            description=(
                "This year, quarter or month to date against the previous one (or, with "
                "year_on_year, the same period last year) up to the same day, so the comparison "
                "is like for like. Returns both totals and counts, the change and the change in "
                "percent, a bar chart and observations."
            ),
            parameters=_series_schema(
                catalog,
                {
                    "period": {
                        "type": "string",
                        "enum": ["year", "quarter", "month"],
                        "default": "year",
                    },
                    "year_on_year": {
                        "type": "boolean",
                        "default": False,
                        "description": "Compare with the same period a year "
                        "earlier instead of the period before.",
                    },
                    "as_of": {**DATE, "description": "Compare up to this day (default today)."},
                },
            ),
            run=each_currency(_entity_of(catalog), _comparison(catalog)),
            action="comparison",
            shape=Shape.WHOLE,
            **common,
        ),
        Tool(
            name="analytics.forecast",
            description=(
                "Forecast an entity's monthly amount with a 95% prediction interval: Holt-Winters "
                "with 12-month seasonality when there are 24+ months of history, otherwise a "
                "linear trend or exponential smoothing. The running month is left out unless "
                "include_current_month. Returns the method, kpis, a line chart with the interval, "
                "observations and the forecast table."
            ),
            parameters=_series_schema(
                catalog,
                {
                    "months_ahead": _months_ahead(6, 24),
                    "include_current_month": {"type": "boolean", "default": False},
                },
            ),
            run=each_currency(_entity_of(catalog), _forecast(catalog)),
            action="forecast",
            shape=Shape.WHOLE,
            **common,
        ),
    ]


# ------------------------------------------------------------------ ageing

# side → (entity, party field)
SIDES = {"receivable": ("sales_invoice", "customer"), "payable": ("purchase_invoice", "supplier")}


def _ageing(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        side = str(args.get("side", "receivable"))
        name, party = SIDES[side]
        entity = catalog.entity(name)
        as_of = dt.date.fromisoformat(args["as_of"]) if args.get("as_of") else _fetch.today(ctx)
        filters, basis = _fetch.base_filters(entity, args.get("filters") or (), "submitted")
        filters.append(Filter("outstanding", Op.NE, 0))
        fields = ["id", party, "due_date", "date", "outstanding"]
        rows, source = await _fetch.all_records(ctx, entity, fields, filters, basis)
        result = _analysis("_ageing", "ageing")(
            rows,
            as_of=as_of,
            ranges=args.get("ranges") or DEFAULT_RANGES,
            party=party,
            side=side,
            top=int(args.get("top", 10)),
        )
        return _answer(f"{side}s ageing", entity, source, result)

    return run


def ageing_tool(catalog: Catalog) -> Tool:
    return Tool(
        name="analytics.ageing",
        description=(
            "Ageing of receivables (open sales invoices) or payables (open purchase invoices): "
            "the outstanding balance by days past due date (not yet due, then the ranges), the "
            "overdue total and share, average days overdue, and the customers or suppliers "
            "with most overdue. Balances are today's; as_of sets the day ages count to. For "
            "the ERP's own ageing report use report.accounts_receivable/payable."
        ),
        parameters=obj(
            {
                "side": {"type": "string", "enum": list(SIDES), "default": "receivable"},
                "as_of": {**DATE, "description": "Age to this day (default today)."},
                "ranges": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1},
                    "minItems": 1,
                    "maxItems": 8,
                    "description": "Upper bounds of the overdue ranges in days "
                    "(default [30, 60, 90, 120]).",
                },
                "top": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "filters": FILTERS,
            },
        ),
        effect=Effect.READ,
        module=MODULE,
        run=each_currency(_side_of(catalog), _ageing(catalog)),
        prompt_rules=RULE,
        action="ageing",
        shape=Shape.WHOLE,
    )


# ------------------------------------------------------------------ concentration, anomalies


def _concentration(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        entity = _entity(catalog, args)
        field = _measure_field(entity, args)
        by = str(args["by"])
        if by not in grammar.groupable(entity) or not entity.field(by).groupable:
            raise ToolInputError(
                f"{entity.name} cannot be grouped by {by!r}; groupable fields: "
                + ", ".join(n for n in grammar.groupable(entity) if entity.field(n).groupable)
            )
        filters, basis = _fetch.base_filters(
            entity, args.get("filters") or (), args.get("documents", "submitted")
        )
        request = AggregateRequest(
            measures=grammar.parse_measures(entity, [{"func": "sum", "field": field}]),
            group_by=grammar.parse_group_by(entity, [{"field": by}]),
            filters=tuple(filters),
        )
        result = await _fetch.aggregate(ctx, entity, request)
        alias = request.measures[0].alias
        rows = [{"key": r.get(by), "amount": r.get(alias)} for r in result.rows]
        source = _fetch.Source(result.method, result.detail, result.record_count, basis)
        noun = entity.field(by).label.lower() + "s"
        answer = _analysis("_concentration", "concentration")(
            rows, top_n=int(args.get("top_n", 10)), noun=noun
        )
        return _answer("concentration", entity, source, answer)

    return run


def _anomalies(catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        entity = _entity(catalog, args)
        assert entity.date_field is not None
        field = _measure_field(entity, args)
        filters, basis = _fetch.base_filters(
            entity, args.get("filters") or (), args.get("documents", "submitted")
        )
        party = next((p for p in ("customer", "supplier", "party") if p in entity.fields), None)
        fields = ["id", entity.date_field, field] + ([party] if party else [])
        rows, source = await _fetch.all_records(ctx, entity, fields, filters, basis)
        result = _analysis("_anomalies", "anomalies")(
            rows,
            threshold=float(args.get("threshold", THRESHOLD)),
            date=entity.date_field,
            amount=field,
            party=party,
            top=int(args.get("top", 20)),
        )
        return _answer("anomalies", entity, source, result)

    return run


def other_tools(catalog: Catalog) -> list[Tool]:
    common: dict[str, Any] = {"effect": Effect.READ, "module": MODULE, "prompt_rules": RULE}
    groupable_entities = [e for e in _aggregatable(catalog) if e.amount_field]
    return [
        Tool(
            name="analytics.concentration",
            description=(
                "How concentrated an amount is across customers, suppliers, items or any "
                "groupable field (by): the top-N share, how many make up 80% (Pareto), the "
                "largest one's share and the Herfindahl-Hirschman index. Totals per group come "
                "from the ERP. Returns kpis, a doughnut chart, observations and the top-N table."
            ),
            parameters=obj(
                {
                    "entity": entity_enum(groupable_entities),
                    "by": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The groupable field, e.g. customer, supplier, item.",
                    },
                    "field": {
                        "type": "string",
                        "description": "The amount; default: the entity's amount field.",
                    },
                    "top_n": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                    "filters": FILTERS,
                    "documents": DOCUMENTS,
                },
                ["entity", "by"],
            ),
            run=each_currency(_entity_of(catalog), _concentration(catalog)),
            action="concentration",
            shape=Shape.WHOLE,
            **common,
        ),
        Tool(
            name="analytics.anomalies",
            description=(
                "Unusual document amounts and unusual daily totals by the robust z-score "
                "(median and MAD; flagged beyond ±3.5 by default). Reads every matching "
                "document's id, date and amount. Returns counts, the most unusual documents "
                "(table) and days (kpis.unusual_days), a chart and observations."
            ),
            parameters=_series_schema(
                catalog,
                {
                    "threshold": {"type": "number", "minimum": 1, "maximum": 20, "default": 3.5},
                    "top": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                },
            ),
            run=each_currency(_entity_of(catalog), _anomalies(catalog)),
            action="anomalies",
            shape=Shape.WHOLE,
            **common,
        ),
    ]


def tools(catalog: Catalog) -> list[Tool]:
    """Every ``analytics.*`` tool."""
    return [
        aggregate_tool(catalog),
        *series_tools(catalog),
        ageing_tool(catalog),
        *other_tools(catalog),
    ]
