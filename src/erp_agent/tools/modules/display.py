"""display.*: the model chooses how a stored result is shown; the values come from the store.

The model passes a result id and column names, never values, so it cannot alter a number on
its way to the screen.
"""

from __future__ import annotations

from typing import Any

from erp_agent.calls.outcome import ChoiceOption
from erp_agent.catalog import Catalog
from erp_agent.errors import ToolInputError
from erp_agent.results import charts
from erp_agent.results.blocks import CardsBlock, ChartBlock, ChoicesBlock, TableBlock
from erp_agent.results.layout import layout
from erp_agent.results.model_view import rows_of
from erp_agent.results.presentation import columns_of
from erp_agent.results.store import ResultStore
from erp_agent.tools.base import Args, Effect, Shape, Tool, ToolContext

CHART_TYPES = ("bar", "line", "pie", "doughnut")
_RESULT_ID = {"type": "string", "pattern": "^res_", "description": "The result_id a tool returned."}


async def _rows(ctx: ToolContext, result_id: str) -> tuple[list[dict[str, Any]], Any]:
    if ctx.results is None:
        raise ToolInputError("Results are not kept in this session; nothing can be displayed.")
    data = await ctx.results.fetch(result_id, ctx.session.user)
    if data is None:
        raise ToolInputError(
            f"There is no result {result_id} of yours; use a result_id returned in this conversation."
        )
    rows = rows_of(data)
    if rows is None:
        raise ToolInputError(f"Result {result_id} has no rows to display.")
    return rows, data


async def _made_by(ctx: ToolContext, result_id: str) -> tuple[str | None, str]:
    """The entity and tool of a stored result, when the store keeps them."""
    if isinstance(ctx.results, ResultStore):
        stored = await ctx.results.fetch_stored(result_id, ctx.session.user)
        if stored is not None:
            return stored.entity, stored.tool
    return None, ""


def _check_columns(rows: list[dict[str, Any]], wanted: list[str]) -> None:
    known = {k for r in rows for k in r}
    missing = [c for c in wanted if c not in known]
    if missing:
        raise ToolInputError(
            f"Unknown column(s) {', '.join(missing)}; the result has {', '.join(sorted(known))}."
        )


async def table(ctx: ToolContext, args: Args) -> dict[str, Any]:
    rows, data = await _rows(ctx, args["result_id"])
    # None: the columns the shared rule picks (results.layout); the rest one click away.
    columns = args.get("columns") or None
    _check_columns(rows, columns or [])
    entity, tool = await _made_by(ctx, args["result_id"])
    chosen = layout(data, rows, ctx.catalog, entity, tool)
    info = columns_of(data, rows, ctx.catalog, entity)
    shown = list(columns or chosen.shown)
    hidden = [k for k in [*chosen.shown, *chosen.more] if k not in shown]
    block: TableBlock = {
        "type": "table",
        "title": args.get("title") or "",
        "result_id": args["result_id"],
        "columns": columns,
        "total_rows": len(rows),
    }
    return {
        "block": block,
        # What the user sees, so the model can say it (and name other columns to show).
        "columns_shown": [info[k].label if k in info else k for k in shown],
        "other_columns": hidden,
    }


async def chart(ctx: ToolContext, args: Args) -> dict[str, Any]:
    rows, data = await _rows(ctx, args["result_id"])
    label, values = args["label"], args["values"]
    _check_columns(rows, [label, *values])
    if args.get("others") and not any(charts.is_others(r) for r in rows):
        raise ToolInputError(
            f"Result {args['result_id']} has no 'All others' row; run metrics.query again with "
            "top and others: true, then chart that result."
        )
    block: ChartBlock = {
        "type": "chart",
        "title": args.get("title") or "",
        "result_id": args["result_id"],
        # None: a line for a time series, bars otherwise (decided when the chart is drawn).
        "chart_type": args.get("type"),
        "label": label,
        "values": values,
    }
    if args.get("top"):
        block["top"] = int(args["top"])
    if args.get("others"):
        block["others"] = True
    entity, _ = await _made_by(ctx, args["result_id"])
    # The series as drawn, for the model to check against what it meant to show.
    return {
        "block": block,
        "drawn": charts.drawn(charts.draw(block, data, rows, ctx.catalog, entity)),
    }


async def cards(ctx: ToolContext, args: Args) -> dict[str, Any]:
    rows, _ = await _rows(ctx, args["result_id"])
    block: CardsBlock = {
        "type": "cards",
        "title": args.get("title") or "",
        "result_id": args["result_id"],
        "count": len(rows),
    }
    return {"block": block}


async def choices(ctx: ToolContext, args: Args) -> dict[str, Any]:
    """A question with options to pick from; picking one sends its value as the next message."""
    del ctx
    options: list[ChoiceOption] = [
        {"label": str(o["label"])[:120], "value": str(o.get("value") or o["label"])[:500]}
        for o in args["options"]
    ]
    block: ChoicesBlock = {"type": "choices", "question": args["question"], "options": options}
    if args.get("slot"):
        block["slot"] = args["slot"]
    return {"block": block}


def tools(catalog: Catalog) -> list[Tool]:
    del catalog
    title = {"type": "string", "maxLength": 120}
    columns = {"type": "array", "items": {"type": "string"}, "maxItems": 20}
    return [
        Tool(
            "display.table",
            "Show a stored result as a table (paging, links). Give columns only when the user "
            "asked for particular ones; the record's title fields come first otherwise.",
            {"type": "object", "properties": {"result_id": _RESULT_ID, "columns": columns, "title": title},
             "required": ["result_id"], "additionalProperties": False},
            Effect.READ, "display", run=table, action="table", shape=Shape.DISPLAY,
        ),
        Tool(
            "display.chart",
            "Chart a stored result: `label` is the x-axis column, `values` the numeric ones; no "
            "`type`: a line over periods, else bars. `top`: the N largest (`others` adds the "
            "'All others' row). One chart per currency: keep currencies out of `title`.",
            {"type": "object", "properties": {
                "result_id": _RESULT_ID, "type": {"type": "string", "enum": list(CHART_TYPES)},
                "label": {"type": "string"}, "values": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 6},
                "top": {"type": "integer", "minimum": 1, "maximum": 100},
                "others": {"type": "boolean"},
                "title": title}, "required": ["result_id", "label", "values"], "additionalProperties": False},
            Effect.READ, "display", run=chart, action="chart", shape=Shape.DISPLAY,
        ),
        Tool(
            "display.cards",
            "Show a stored result's rows as cards (one per record, with links).",
            {"type": "object", "properties": {"result_id": _RESULT_ID, "title": title},
             "required": ["result_id"], "additionalProperties": False},
            Effect.READ, "display", run=cards, action="cards", shape=Shape.DISPLAY,
        ),
        Tool(
            "display.choices",
            "Ask ONE question with 2-8 options as buttons, only when the request is truly "
            "ambiguous (two customers match a name); the pick is the next message.",
            {"type": "object", "properties": {
                "question": {"type": "string", "minLength": 1, "maxLength": 300},
                "options": {"type": "array", "minItems": 2, "maxItems": 8, "items": {
                    "type": "object", "properties": {
                        "label": {"type": "string", "minLength": 1, "maxLength": 120},
                        "value": {"type": "string", "minLength": 1, "maxLength": 500}},
                    "required": ["label"], "additionalProperties": False}},
                "slot": {"type": "string", "maxLength": 60}},
             "required": ["question", "options"], "additionalProperties": False},
            Effect.READ, "display", run=choices, action="choices", shape=Shape.DISPLAY,
        ),
    ]  # fmt: skip
