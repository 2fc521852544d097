"""Structured responses: text (markdown with document links), table, cards, chart, file,
proposal, citations. Values in tables and charts are read from stored results here, so the
model cannot alter a number on its way to the screen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.engine import presentation
from erp_agent.results.links import Linker
from erp_agent.results.model_view import PAGE_ROWS, rows_of
from erp_agent.results.store import ResultRecord, ResultStore

Block = dict[str, Any]


def _links(
    stored: ResultRecord, rows: Sequence[dict[str, Any]], linker: Linker
) -> list[str | None]:
    if not stored.entity:
        return [None] * len(rows)
    return [linker(stored.entity, r) if r.get("id") else None for r in rows]


def table_page(
    stored: ResultRecord,
    rows: Sequence[dict[str, Any]],
    columns: list[str],
    catalog: Catalog | None,
    all_rows: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One page of a table as shown: labels, rounded amounts, periods in words, indentation."""
    every = list(all_rows if all_rows is not None else rows)
    info = presentation.columns_of(stored.data, every, catalog, stored.entity)
    year = presentation.year_of(_definition(stored.data))
    out: dict[str, Any] = {
        "columns": columns,
        "labels": [info[c].label if c in info else c for c in columns],
        "rows": [
            [
                presentation.shown(r.get(c), info[c], r, year) if c in info else r.get(c)
                for c in columns
            ]
            for r in rows
        ],
    }
    indent = presentation.indents(list(rows))
    if indent is not None:
        out["indent"] = indent
    return out


def _definition(data: Any) -> dict[str, Any] | None:
    found = data.get("definition") if isinstance(data, dict) else None
    return found if isinstance(found, dict) else None


async def materialise(
    block: Block, results: ResultStore, user: str, linker: Linker, catalog: Catalog | None = None
) -> Block:
    """Fill a display block's values from the stored result it names."""
    stored = await results.fetch_stored(str(block.get("result_id", "")), user)
    if stored is None:
        return block
    rows = rows_of(stored.data) or []
    kind = block["type"]
    # How the figures were computed travels with the table or chart that shows them.
    definition = stored.data.get("definition") if isinstance(stored.data, dict) else None
    if definition and kind in ("table", "chart", "cards"):
        block = {**block, "definition": definition}
    if kind == "table":
        columns = block.get("columns") or presentation.default_columns(stored.data, rows)
        page = rows[:PAGE_ROWS]
        return {
            **block,
            **table_page(stored, page, columns, catalog, rows),
            "links": _links(stored, page, linker),
            "total_rows": len(rows),
            "page": {"start": 0, "limit": PAGE_ROWS},
        }
    if kind == "chart":
        return {**block, **_chart(block, stored, rows, catalog)}
    if kind == "cards":
        links = _links(stored, rows, linker)
        return {
            **block,
            "cards": [
                {"title": str(r.get("id") or r.get("name") or ""), "fields": r, "link": link}
                for r, link in zip(rows[:PAGE_ROWS], links, strict=False)
            ],
        }
    return block


def _chart(
    block: Block, stored: ResultRecord, rows: list[dict[str, Any]], catalog: Catalog | None
) -> Block:
    """One chart per currency, of exactly the rows the table shows (the top N when asked)."""
    label, values = block["label"], list(block["values"])
    info = presentation.columns_of(stored.data, rows, catalog, stored.entity)
    year = presentation.year_of(_definition(stored.data))
    if block.get("top"):
        rows = presentation.top_rows(rows, values[0], int(block["top"]))
    chart_type = block.get("chart_type") or (
        "line" if presentation.is_time_series(info.get(label)) else "bar"
    )
    title = block.get("title") or ""
    groups = presentation.by_currency(rows)
    charts = [
        {
            "currency": currency,
            "title": f"{title} ({currency})" if currency and len(groups) > 1 else title,
            "spec": {
                "type": chart_type,
                "data": {
                    "labels": [_cell(info, r, label, year) for r in group],
                    "datasets": [
                        {
                            "label": _series(info, v, currency),
                            "data": [_cell(info, r, v, year) for r in group],
                        }
                        for v in values
                    ],
                },
            },
        }
        for currency, group in groups
    ]
    return {"chart_type": chart_type, "spec": charts[0]["spec"], "charts": charts}


def _cell(info: dict[str, Any], row: dict[str, Any], key: str, year: int | None) -> Any:
    column = info.get(key)
    return presentation.shown(row.get(key), column, row, year) if column else row.get(key)


def _series(info: dict[str, Any], key: str, currency: str | None) -> str:
    column = info.get(key)
    text = column.label if column else key
    if currency and column and column.money and f"({currency})" not in text:
        text += f" ({currency})"
    return str(text)
