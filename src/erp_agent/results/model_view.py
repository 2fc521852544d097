"""What the model sees of a tool result: small ones whole; big ones as an id, exact summary
and a page (the rest stays in the result store, ``erp_agent.results``)."""

from __future__ import annotations

import json
from typing import Any

from erp_agent.results.summary import summarize_report, summarize_rows
from erp_agent.tools.base import Shape

PAGE_ROWS = 20
INLINE_CHARS = 4000  # a result this small goes to the model whole


def rows_of(data: Any) -> list[dict[str, Any]] | None:
    """The table inside a tool result, if it has one (lists, pages, aggregates, reports)."""
    if isinstance(data, list) and all(isinstance(r, dict) for r in data):
        return data
    if isinstance(data, dict):
        for key in ("records", "rows", "result", "table"):
            value = data.get(key)
            if isinstance(value, list) and all(isinstance(r, dict) for r in value):
                return value
    return None


def for_model(result_id: str, data: Any, shape: Shape = Shape.ROWS) -> dict[str, Any]:
    """What the model sees of a result: all of a small one; a summary and a page of a big one.

    Analyses are summaries already and go whole; a report's summary quotes the ERP's own total
    row rather than re-adding rows.
    """
    if shape is Shape.METRIC and isinstance(data, dict) and "drill" in data:
        # What a drill-down re-runs stays with the stored result: the model opens a figure's
        # documents by reference (results.drill), never by re-stating the query.
        data = {k: v for k, v in data.items() if k != "drill"}
    text = json.dumps(data, default=str)
    if len(text) <= INLINE_CHARS or shape is Shape.WHOLE:
        return {"result_id": result_id, "result": data}
    if shape is Shape.METRIC and isinstance(data, dict):
        # Per-currency totals come with the result; never re-add rows across currencies here.
        rows = data.get("rows") or []
        return {
            **{k: v for k, v in data.items() if k != "rows"},
            "result_id": result_id,
            "page": rows[:PAGE_ROWS],
            "note": f"Showing {min(PAGE_ROWS, len(rows))} of {len(rows)} rows; the rest stay on "
            "the server. Totals are per currency; use display tools with result_id to show them.",
        }
    if shape is Shape.REPORT and isinstance(data, dict):
        return {
            "result_id": result_id,
            "definition": data.get("definition"),
            "summary": summarize_report(data),
            "note": "The whole report stays on the server; use display tools with result_id to show it.",
        }
    rows = rows_of(data)
    if rows is None:
        return {
            "result_id": result_id,
            "note": f"The result is large ({len(text)} characters) and stays on the server.",
            "preview": text[:INLINE_CHARS],
        }
    meta = (
        {k: v for k, v in data.items() if k not in ("records", "rows", "result", "table")}
        if isinstance(data, dict)
        else {}
    )
    # The result's own small fields first: the engine's keys below must not be overwritten.
    return {
        **{k: v for k, v in meta.items() if len(json.dumps(v, default=str)) < 2000},
        "result_id": result_id,
        "summary": summarize_rows(rows),
        "page": rows[:PAGE_ROWS],
        "note": f"Showing {min(PAGE_ROWS, len(rows))} of {len(rows)} rows; the rest stay on the "
        "server. Totals above are exact; use display tools with result_id to show the table.",
    }
