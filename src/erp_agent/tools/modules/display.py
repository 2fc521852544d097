"""display.*: the model chooses how a stored result is shown; the values come from the store.

The model passes a result id and column names, never values, so it cannot alter a number on
its way to the screen.
"""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.engine.results import rows_of
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import Args, Effect, Tool, ToolContext

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
    columns = args.get("columns") or list(dict.fromkeys(k for r in rows for k in r))
    _check_columns(rows, columns)
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
    return {
        "block": {
            "type": "chart",
            "title": args.get("title") or "",
            "result_id": args["result_id"],
            "chart_type": args["type"],
            "label": label,
            "values": values,
        }
    }


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
            Effect.READ, "display", run=table, action="table",
            prompt_rules="Use display tools to show rows; never retype values from a result.",
        ),
        Tool(
            "display.chart",
            "Show a stored result as a chart: `label` is the column for the x-axis or slices, "
            "`values` the numeric column(s). Types: bar, line, pie, doughnut.",
            {"type": "object", "properties": {
                "result_id": _RESULT_ID, "type": {"type": "string", "enum": list(CHART_TYPES)},
                "label": {"type": "string"}, "values": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 6},
                "title": title}, "required": ["result_id", "type", "label", "values"], "additionalProperties": False},
            Effect.READ, "display", run=chart, action="chart",
        ),
        Tool(
            "display.cards",
            "Show a stored result's rows as cards (one per record, with links).",
            {"type": "object", "properties": {"result_id": _RESULT_ID, "title": title},
             "required": ["result_id"], "additionalProperties": False},
            Effect.READ, "display", run=cards, action="cards",
        ),
    ]  # fmt: skip
