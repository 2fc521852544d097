"""Tool results kept server-side: the model gets an id, a summary and a page, never more."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

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


def summarize_rows(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Columns, row count, and exact totals/min/max of numeric columns — computed here."""
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    numeric: dict[str, dict[str, Any]] = {}
    for column in columns:
        values = [r.get(column) for r in rows]
        numbers = [
            Decimal(str(v))
            for v in values
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        ]
        if numbers and len(numbers) == len([v for v in values if v is not None]):
            numeric[column] = {
                "sum": float(sum(numbers)),
                "min": float(min(numbers)),
                "max": float(max(numbers)),
            }
    return {"columns": columns, "row_count": len(rows), "numeric": numeric}


@dataclass
class StoredResult:
    id: str
    user: str
    tool: str
    data: Any
    entity: str | None = None


@dataclass
class MemoryResults:
    """Results of the current process. A persistent store implements the same two methods."""

    items: dict[str, StoredResult] = field(default_factory=dict)

    async def put(self, user: str, tool: str, data: Any, entity: str | None = None) -> str:
        result_id = f"res_{secrets.token_urlsafe(8)}"
        self.items[result_id] = StoredResult(result_id, user, tool, data, entity)
        return result_id

    async def fetch(self, result_id: str, user: str) -> Any | None:
        found = self.items.get(result_id)
        return found.data if found and found.user == user else None

    async def fetch_stored(self, result_id: str, user: str) -> StoredResult | None:
        found = self.items.get(result_id)
        return found if found and found.user == user else None


def for_model(result_id: str, data: Any) -> dict[str, Any]:
    """What the model sees of a result: all of a small one; a summary and a page of a big one."""
    text = json.dumps(data, default=str)
    if len(text) <= INLINE_CHARS:
        return {"result_id": result_id, "result": data}
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
    return {
        "result_id": result_id,
        "summary": summarize_rows(rows),
        "page": rows[:PAGE_ROWS],
        "note": f"Showing {min(PAGE_ROWS, len(rows))} of {len(rows)} rows; the rest stay on the "
        "server. Totals above are exact; use display tools with result_id to show the table.",
        **{k: v for k, v in meta.items() if len(json.dumps(v, default=str)) < 2000},
    }
