"""Response blocks: what a turn shows the user, one TypedDict per kind tagged by ``type``.

These are the JSON objects the web app (``server/static/render.js``), the CLI, markdown for MCP
and the OpenAI-compatible API, and stored conversations read; the types describe that shape and
never change it. A display block is first what the model asked for (``display.*``: a result id,
columns, a title) and then, once materialised from the stored result (``render.py``), the values
the screen draws; the keys added then are ``NotRequired``. Code that branches by kind narrows on
``block["type"]``. A figure's definition (``tools.base.Definition``), a report's own figures
(``results.presentation.ReportFigure``) and the totals that open their documents
(``metrics.drill.DrillTotal``) are typed where they are made; nested objects that come from
the ERP as they are (a proposal's payload and document, a scan's source) stay JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NotRequired, TypedDict, cast

from erp_agent.calls.outcome import Choices, ProposalView
from erp_agent.metrics.drill import DrillTotal
from erp_agent.results.presentation import ReportFigure
from erp_agent.store.records import FieldChange, ProjectionView, Unrequested
from erp_agent.tools.base import Definition


class TextBlock(TypedDict):
    type: Literal["text"]
    markdown: str


class MoreColumn(TypedDict):
    """A column one "more columns" away: its key and its label."""

    key: str
    label: str


class PageSpan(TypedDict):
    start: int
    limit: int


class TablePage(TypedDict):
    """One page of a table as shown (``render.table_page``; also the paging route's answer)."""

    columns: list[str]
    labels: list[str]
    decimals: list[int | None]  # an amount's places at its currency's precision, else None
    rows: list[list[Any]]
    indent: NotRequired[list[int]]  # a financial statement's tree depth per row


class TableBlock(TypedDict):
    type: Literal["table"]
    title: str
    result_id: str | None
    columns: list[str] | None  # None: the shared rule picks them (``results.layout``)
    total_rows: NotRequired[int]
    definition: NotRequired[Definition]
    # Materialised (``render.materialise``): the first page and how to get the rest.
    labels: NotRequired[list[str]]
    decimals: NotRequired[list[int | None]]
    rows: NotRequired[list[list[Any]]]
    indent: NotRequired[list[int]]
    links: NotRequired[list[str | None]]
    link_column: NotRequired[str | None]
    more_columns: NotRequired[list[MoreColumn]]
    page: NotRequired[PageSpan]
    figures: NotRequired[list[ReportFigure]]  # a report's own figures under its table
    drills: NotRequired[list[str | None]]  # each row's drill-down reference
    drill_totals: NotRequired[list[DrillTotal]]  # each total's drill-down reference


class ChartDataset(TypedDict):
    """One series of a Chart.js spec: its name and a value per label."""

    label: str
    data: list[Any]
    backgroundColor: NotRequired[list[str]]  # per bar, when "All others" is drawn grey


class ChartData(TypedDict):
    labels: list[Any]
    datasets: list[ChartDataset]


class ChartSpec(TypedDict):
    """A chart as Chart.js draws it (the web app), and every other channel reads it."""

    type: str  # line | bar | …
    data: ChartData


class DrawnChart(TypedDict):
    """One chart of a chart block (one per currency)."""

    currency: str | None
    title: str
    others: bool  # the last bar is "All others"
    spec: ChartSpec
    drills: NotRequired[list[str | None]]  # each bar's drill-down reference


class ChartDrawing(TypedDict):
    """The fields ``charts.draw`` adds to a chart block."""

    chart_type: str
    spec: ChartSpec  # the first chart's
    charts: list[DrawnChart]


class ChartBlock(TypedDict):
    type: Literal["chart"]
    title: str
    result_id: str
    chart_type: str | None  # None: a line for a time series, bars otherwise
    label: str  # the x-axis column
    values: list[str]  # the series' columns
    top: NotRequired[int]
    others: NotRequired[bool]
    definition: NotRequired[Definition]
    spec: NotRequired[ChartSpec]
    charts: NotRequired[list[DrawnChart]]


class Card(TypedDict):
    title: str
    fields: dict[str, Any]  # label → value as shown
    link: str | None


class CardsBlock(TypedDict):
    type: Literal["cards"]
    title: str
    result_id: str
    count: int
    definition: NotRequired[Definition]
    cards: NotRequired[list[Card]]


class ProposalBlock(TypedDict):
    """A prepared write to confirm: ``gateway.proposals.proposal_view`` with its tag."""

    type: Literal["proposal"]
    id: str
    summary: str
    tool: NotRequired[str]
    payload: NotRequired[dict[str, Any]]
    payload_hash: NotRequired[str]  # binds the web app's confirm to what it showed
    diff: NotRequired[list[FieldChange] | None]
    document: NotRequired[dict[str, Any] | None]
    status: NotRequired[str]
    status_text: NotRequired[str]
    expires_at: NotRequired[str | None]
    conversation_id: NotRequired[str | None]
    base_modified: NotRequired[str | None]
    superseded_by: NotRequired[str | None]
    unrequested: NotRequired[Unrequested]  # the content warning (``gateway/origin.py``)
    # What the ERP computed it will post; a channel also shows one said in words.
    projection: NotRequired[ProjectionView | str]
    # A scanned document's draft: what could not be read for sure, and how it was read.
    flags: NotRequired[list[dict[str, str]]]
    source: NotRequired[dict[str, Any]]


class ScanBlock(TypedDict):
    """A scan nothing could be prepared from: its flags on their own."""

    type: Literal["scan"]
    flags: list[dict[str, str]]
    source: dict[str, Any]


class Citation(TypedDict):
    title: str | None
    source: str | None


class CitationsBlock(TypedDict):
    type: Literal["citations"]
    items: list[Citation]


class FileBlock(TypedDict):
    """An export; the server keeps ``path``, the browser gets ``url`` (``server/blocks.py``)."""

    type: Literal["file"]
    name: str
    mime: str
    size: int
    rows: int
    total_rows: int
    path: NotRequired[str]
    url: NotRequired[str]


# A question with choices is made below the results (``calls.outcome.Choices``: the gateway's
# ``NeedsChoice``, a scan's party) already tagged as the block it becomes.
ChoicesBlock = Choices
Block = (
    TextBlock
    | TableBlock
    | ChartBlock
    | CardsBlock
    | ProposalBlock
    | ScanBlock
    | ChoicesBlock
    | CitationsBlock
    | FileBlock
)
DisplayBlock = TableBlock | ChartBlock | CardsBlock  # filled from a stored result


def text_block(markdown: str) -> TextBlock:
    return {"type": "text", "markdown": markdown}


def proposal_block(view: ProposalView | ProposalBlock) -> ProposalBlock:
    """A proposal as the gateway shows it (``proposal_view``), or as a block already shows it,
    tagged."""
    return {"type": "proposal", **view}


def choices_block(choices: Choices) -> ChoicesBlock:
    """A question with choices as the layers below the results build it, copied."""
    return choices.copy()


def question(blocks: Iterable[Block]) -> ChoicesBlock | None:
    """The question with choices among ``blocks`` (a turn asks one at a time), if any."""
    for block in blocks:
        if block["type"] == "choices":
            return block
    return None


def blocks_of(value: object) -> list[Block]:
    """Blocks read back from JSON this agent wrote (a stored turn's response, a cached or
    background one). Only the kind is checked: a kind this version does not know
    passes through untouched, as the web app draws any block it has no renderer for."""
    # A block without its kind (a damaged row) is dropped here, once, so code that branches on
    # block["type"] never meets one.
    if not isinstance(value, list):
        return []
    kept = [b for b in value if isinstance(b, dict) and isinstance(b.get("type"), str)]
    return cast(list[Block], kept)
