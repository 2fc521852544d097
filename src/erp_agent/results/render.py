"""Structured responses: text (markdown with document links), table, cards, chart, file,
proposal, citations. Values in tables and charts are read from stored results here, so the
model cannot alter a number on its way to the screen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, cast

from erp_agent.catalog import Catalog
from erp_agent.metrics.drill import DrillTotal, drillable, row_refs, total_refs
from erp_agent.results import charts, presentation
from erp_agent.results.blocks import (
    Block,
    Card,
    CardsBlock,
    ChartBlock,
    DisplayBlock,
    MoreColumn,
    PageSpan,
    TableBlock,
    TablePage,
)
from erp_agent.results.layout import layout
from erp_agent.results.links import Linker
from erp_agent.results.model_view import PAGE_ROWS, rows_of
from erp_agent.results.store import ResultRecord, ResultStore
from erp_agent.results.summary import report_figures
from erp_agent.tools.base import Definition


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
) -> TablePage:
    """One page of a table as shown: labels, rounded amounts, periods in words, indentation."""
    every = list(all_rows if all_rows is not None else rows)
    info = presentation.columns_of(stored.data, every, catalog, stored.entity)
    year = presentation.year_of(definition_of(stored.data))
    out: TablePage = {
        "columns": columns,
        "labels": [info[c].label if c in info else c for c in columns],
        # Amounts at their currency's precision on every channel ("188,848.00", not "188,848").
        "decimals": [presentation.decimals(info[c], every) if c in info else None for c in columns],
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


def definition_of(data: Any) -> Definition | None:
    """A stored result's definition, as its tool made it (read back from JSON), if any."""
    found = data.get("definition") if isinstance(data, dict) else None
    return cast(Definition, found) if isinstance(found, dict) else None


async def materialise(
    block: Block, results: ResultStore, user: str, linker: Linker, catalog: Catalog | None = None
) -> Block:
    """Fill a display block's values from the stored result it names."""
    if block["type"] == "table" or block["type"] == "chart" or block["type"] == "cards":
        return await _filled(block, results, user, linker, catalog)
    return block  # only a display block names a stored result


async def _filled(
    block: DisplayBlock,
    results: ResultStore,
    user: str,
    linker: Linker,
    catalog: Catalog | None,
) -> DisplayBlock:
    stored = await results.fetch_stored(str(block.get("result_id", "")), user)
    if stored is None:
        return block
    rows = rows_of(stored.data) or []
    # How the figures were computed travels with the table or chart that shows them.
    definition = definition_of(stored.data)
    if block["type"] == "table":
        table: TableBlock = {**block}
        if definition:
            table["definition"] = definition
        return {**table, **_table(table, stored, rows, linker, catalog)}
    if block["type"] == "chart":
        chart: ChartBlock = {**block}
        if definition:
            chart["definition"] = definition
        drawn = charts.draw(chart, stored.data, rows, catalog, stored.entity, stored.id)
        return {**chart, **drawn}
    cards: CardsBlock = {**block}
    if definition:
        cards["definition"] = definition
    return {**cards, "cards": _cards(stored, rows[:PAGE_ROWS], linker, catalog)}


def _cards(
    stored: ResultRecord, rows: list[dict[str, Any]], linker: Linker, catalog: Catalog | None
) -> list[Card]:
    """One card per record: titled by its id (or first column), with the columns a table
    would show first, labelled and formatted the same way."""
    chosen = layout(stored.data, rows, catalog, stored.entity, stored.tool)
    title = chosen.link or (chosen.shown[0] if chosen.shown else None)
    page = table_page(stored, rows, chosen.shown, catalog)
    cards: list[Card] = []
    for row, cells, link in zip(rows, page["rows"], _links(stored, rows, linker), strict=False):
        fields = {
            label: value
            for key, label, value in zip(chosen.shown, page["labels"], cells, strict=True)
            if key != title
        }
        name = row.get(title) if title else None
        cards.append({"title": str(name or row.get("id") or ""), "fields": fields, "link": link})
    return cards


class _Figures(TypedDict, total=False):
    figures: list[presentation.ReportFigure]
    drills: list[str | None]
    drill_totals: list[DrillTotal]


class _TableFill(TablePage, _Figures):
    """The fields ``materialise`` adds to a table block."""

    links: list[str | None]
    link_column: str | None
    more_columns: list[MoreColumn]
    total_rows: int
    page: PageSpan


def _table(
    block: TableBlock,
    stored: ResultRecord,
    rows: list[dict[str, Any]],
    linker: Linker,
    catalog: Catalog | None,
) -> _TableFill:
    """A table's first page, its columns by the shared rule (``results.layout``) unless the
    model named them, the columns one "more columns" away, and the report's own figures."""
    chosen = layout(stored.data, rows, catalog, stored.entity, stored.tool)
    named = block.get("columns")
    columns = list(named or chosen.shown)
    link = chosen.link if not named else ("id" if "id" in columns else None)
    info = presentation.columns_of(stored.data, rows, catalog, stored.entity)
    more = [k for k in [*chosen.shown, *chosen.more] if k not in columns]
    page = rows[:PAGE_ROWS]
    return {
        **table_page(stored, page, columns, catalog, rows),
        "links": _links(stored, page, linker),
        "link_column": link or (columns[0] if columns else None),
        "more_columns": [{"key": k, "label": info[k].label if k in info else k} for k in more],
        "total_rows": len(rows),
        "page": {"start": 0, "limit": PAGE_ROWS},
        **_figures(stored, page),
    }


def _figures(stored: ResultRecord, page: list[dict[str, Any]]) -> _Figures:
    """The report's own figures, and the references that open each figure's documents."""
    out: _Figures = {}
    figures = report_figures(stored.data)
    if figures:
        out["figures"] = figures
    if drillable(stored.data):
        # Each figure opens the documents it was computed from (results.drill).
        out["drills"] = row_refs(stored.id, stored.data, page)
        out["drill_totals"] = total_refs(stored.id, stored.data)
    return out
