"""Response blocks in the terminal (rich): the same blocks the web app draws."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from erp_agent.events import Event, EventBus, GuardTriggered, TextDelta
from erp_agent.results.blocks import (
    Block,
    CardsBlock,
    ChartBlock,
    ChoicesBlock,
    ProposalBlock,
    TableBlock,
)
from erp_agent.results.layout import link_index, more_columns_hint
from erp_agent.results.presentation import figure_text, without_currency
from erp_agent.tools.base import Definition

BAR_WIDTH = 30


def _cell(value: Any, places: int | None = None) -> str:
    if value is None:
        return ""
    if places is not None and isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:,.{places}f}"  # an amount at its currency's precision
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _table(block: TableBlock) -> RenderableType:
    columns = list(block.get("labels") or block.get("columns") or [])
    rows = block.get("rows") or []
    table = Table(title=block.get("title") or None, show_lines=False)
    for i, column in enumerate(columns):
        numeric = any(isinstance(r[i], (int, float)) for r in rows if i < len(r))
        table.add_column(column, justify="right" if numeric else "left")
    links = block.get("links") or []
    indent = block.get("indent") or []
    at = link_index(block)
    places = list(block.get("decimals") or [])
    for n, row in enumerate(rows):
        cells = [_cell(v, places[i] if i < len(places) else None) for i, v in enumerate(row)]
        if n < len(indent) and indent[n] and cells:
            cells[0] = "  " * int(indent[n]) + cells[0]
        if n < len(links) and links[n] and at < len(cells):
            cells[at] = f"[link={links[n]}]{cells[at]}[/link]"
        table.add_row(*cells)
    notes = []
    total = block.get("total_rows", len(rows))
    if total > len(rows):
        notes.append(f"{len(rows)} of {total} rows · result {block.get('result_id', '')}")
    hint = more_columns_hint(block.get("more_columns") or [])
    if hint:
        notes.append(hint)
    if notes:
        table.caption = "\n".join(notes)
    figures = block.get("figures") or []
    if not figures:
        return table
    grid = Table.grid(padding=(0, 2))
    grid.add_column()
    grid.add_column(justify="right")
    for figure in figures:
        grid.add_row(Text(str(figure.get("label")), style="dim"), figure_text(figure))
    return Group(table, grid)


def _chart(block: ChartBlock) -> RenderableType:
    """A chart as horizontal bars: exact values beside them, scaled per dataset; one chart per
    currency."""
    # A block without per-currency charts is drawn from its one top-level spec.
    charts: Sequence[Mapping[str, Any]] = block.get("charts") or []
    if not charts:
        charts = [{"title": block.get("title"), "spec": block.get("spec")}]
    parts: list[RenderableType] = []
    for chart in charts:
        data = (chart.get("spec") or {}).get("data") or {}
        labels = [str(x) for x in data.get("labels") or []]
        for dataset in data.get("datasets") or []:
            values = [v if isinstance(v, (int, float)) else 0 for v in dataset.get("data") or []]
            top = max((abs(v) for v in values), default=0) or 1
            table = Table.grid(padding=(0, 1))
            for label, value in zip(labels, values, strict=False):
                bar = "█" * max(0, round(abs(value) / top * BAR_WIDTH))
                table.add_row(label[:28], Text(bar, style="cyan"), _cell(value))
            # The chart's title names its currency once; the series' name need not repeat it.
            series = str(dataset.get("label", ""))
            if chart.get("currency"):
                series = without_currency(series)
            title = f"{chart.get('title') or ''} · {series}"
            parts.append(Panel(table, title=title))
    return Group(*parts)


def _cards(block: CardsBlock) -> RenderableType:
    panels = []
    for card in block.get("cards") or []:
        grid = Table.grid(padding=(0, 1))
        for key, value in list((card.get("fields") or {}).items())[:8]:
            grid.add_row(Text(str(key), style="dim"), _cell(value))
        panels.append(Panel(grid, title=str(card.get("title") or "")))
    return Group(*panels)


def proposal_view(block: ProposalBlock) -> RenderableType:
    parts: list[RenderableType] = [Text(str(block.get("summary", "")), style="bold")]
    changes = block.get("diff")
    if changes:
        diff = Table("Field", "Now", "After")
        for change in changes:
            diff.add_row(
                str(change.get("field")),
                Text(_cell(change.get("before")), style="red"),
                Text(_cell(change.get("after")), style="green"),
            )
        parts.append(diff)
    values = block.get("document") or (block.get("payload") if not block.get("diff") else None)
    if values:
        grid = Table("Field", "Value")
        for key, value in values.items():
            grid.add_row(str(key), _cell(value))
        parts.append(grid)
    status = block.get("status", "pending")
    if status == "checking":  # the write got no answer: unknown until the ERP can be asked
        status = "unknown — checking"
        if block.get("status_text"):
            parts.append(Text(str(block["status_text"]), style="yellow"))
    return Panel(Group(*parts), title=f"Proposed change ({status})", border_style="yellow")


def render_block(block: Block) -> RenderableType:
    if block["type"] == "text":
        return Markdown(str(block.get("markdown", "")))
    if block["type"] == "table":
        return _table(block)
    if block["type"] == "chart":
        return _chart(block)
    if block["type"] == "cards":
        return _cards(block)
    if block["type"] == "proposal":
        return proposal_view(block)
    if block["type"] == "citations":
        items = block.get("items") or []
        return Text(
            "Sources: " + "; ".join(str(i.get("title") or i.get("source")) for i in items),
            style="dim",
        )
    if block["type"] == "choices":
        lines = [str(block.get("question", ""))]
        lines += [f"  {n}. {o.get('label')}" for n, o in enumerate(block.get("options") or [], 1)]
        return Text("\n".join(lines), style="bold")
    if block["type"] == "file":
        href = block.get("url") or block.get("href") or ""
        return Text(f"File: {block.get('name') or block.get('title') or ''} {href}")
    return Text(str(block))


def choice_reply(answer: str, block: ChoicesBlock) -> str:
    """A numbered prompt's answer as the message to send: option n's value, or the text typed."""
    options = block.get("options") or []
    text = answer.strip()
    if text.isdigit() and 1 <= int(text) <= len(options):
        return str(options[int(text) - 1].get("value") or options[int(text) - 1].get("label"))
    return text


def definition_view(definition: Definition) -> RenderableType:
    """ "How this was computed" under a table or chart: meaning, filters, period, rows, source."""
    lines = [str(definition.get("text") or "")]
    filters = definition.get("filters") or []
    if filters:
        lines.append("Filters: " + "; ".join(map(str, filters)))
    if definition.get("period"):
        lines.append(f"Period: {definition['period']}")
    if definition.get("record_count") is not None:
        lines.append(f"Records counted: {definition['record_count']:,}")
    if definition.get("source"):
        lines.append(f"Source: {definition['source']}")
    return Panel(
        Text("\n".join(lines), style="dim"), title="How this was computed", title_align="left"
    )


def print_blocks(console: Console, blocks: Sequence[Block]) -> None:
    for block in blocks:
        console.print(render_block(block))
        if block["type"] == "table" or block["type"] == "chart" or block["type"] == "cards":
            definition = block.get("definition")
            if isinstance(definition, dict):
                console.print(definition_view(definition))


class StatusText:
    """What the status line says after each event: the model's text as it streams (its last
    line), else the progress label; a provenance correction withdraws the streamed text."""

    def __init__(self) -> None:
        self.streamed: list[str] = []

    def after(self, event: Event) -> str | None:
        if isinstance(event, TextDelta):
            self.streamed.append(event.text)
            return _tail("".join(self.streamed))
        if isinstance(event, GuardTriggered) and event.guard == "provenance":
            self.streamed.clear()
            return "Checking the figures…"
        return event.label or None


@contextmanager
def progress_line(console: Console, bus: EventBus) -> Iterator[None]:
    """A live status line fed by the turn's events, until the structured response is printed."""
    with console.status("Thinking…") as status:
        text = StatusText()

        def show(event: Event) -> None:
            line = text.after(event)
            if line:
                status.update(line)

        unsubscribe = bus.subscribe(show)
        try:
            yield
        finally:
            unsubscribe()


def _tail(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else "…" + line[-(width - 1) :]
