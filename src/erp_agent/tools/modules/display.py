"""display.*: the model chooses how a stored result is shown; the values come from the store.

The model passes a result id and column names, never values, so it cannot alter a number on
its way to the screen.
"""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.errors import ToolInputError
from erp_agent.results.model_view import rows_of
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


def _check_columns(rows: list[dict[str, Any]], wanted: list[str]) -> None:
    known = {k for r in rows for k in r}
    missing = [c for c in wanted if c not in known]
    if missing:
        raise ToolInputError(
            f"Unknown column(s) {', '.join(missing)}; the result has {', '.join(sorted(known))}."
        )


async def table(ctx: ToolContext, args: Args) -> dict[str, Any]:
    rows, _ = await _rows(ctx, args["result_id"])
    # None: the result's own columns, internal ones (a statement's indent, is_group…) hidden.
    columns = args.get("columns") or None
    _check_columns(rows, columns or [])
    return {
        "block": {
            "type": "table",
            "title": args.get("title") or "",
            "result_id": args["result_id"],
            "columns": columns,
            "total_rows": len(rows),
        }
    }


async def chart(ctx: ToolContext, args: Args) -> dict[str, Any]:
    rows, _ = await _rows(ctx, args["result_id"])
    label, values = args["label"], args["values"]
    _check_columns(rows, [label, *values])
    block: dict[str, Any] = {
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
    return {"block": block}


async def cards(ctx: ToolContext, args: Args) -> dict[str, Any]:
    rows, _ = await _rows(ctx, args["result_id"])
    return {
        "block": {
            "type": "cards",
            "title": args.get("title") or "",
            "result_id": args["result_id"],
            "count": len(rows),
        }
    }


async def choices(ctx: ToolContext, args: Args) -> dict[str, Any]:
    """A question with options to pick from; picking one sends its value as the next message."""
    del ctx
    options = [
        {"label": str(o["label"])[:120], "value": str(o.get("value") or o["label"])[:500]}
        for o in args["options"]
    ]
    block: dict[str, Any] = {"type": "choices", "question": args["question"], "options": options}
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
            "Show a stored result as a table (with paging and links). Pass the result_id and, "
            "optionally, which columns to show. Values come from the stored result.",
            {"type": "object", "properties": {"result_id": _RESULT_ID, "columns": columns, "title": title},
             "required": ["result_id"], "additionalProperties": False},
            Effect.READ, "display", run=table, action="table", shape=Shape.DISPLAY,
            prompt_rules="Use display tools to show rows; never retype values from a result.",
        ),
        Tool(
            "display.chart",
            "Show a stored result as a chart: `label` is the column for the x-axis or slices, "
            "`values` the numeric column(s). Types: bar, line, pie, doughnut; leave `type` out "
            "for a line over time periods and bars otherwise. `top`: chart only the N largest "
            "rows (\"top 5 as a chart\" is top 5). Amounts in different currencies get one chart "
            "each.",
            {"type": "object", "properties": {
                "result_id": _RESULT_ID, "type": {"type": "string", "enum": list(CHART_TYPES)},
                "label": {"type": "string"}, "values": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 6},
                "top": {"type": "integer", "minimum": 1, "maximum": 100},
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
            "Ask the user ONE clarifying question with 2-8 options shown as buttons; the option "
            "picked comes back as the user's next message (its `value`). Use only when the request "
            "is truly ambiguous (two customers match a name, several companies and none is the "
            "user's default). `slot` names what is being chosen (e.g. company, customer).",
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
