"""Response blocks as markdown, for chat clients that show text only (an OpenAI-API chat UI, an
MCP client): tables with document links, charts as their figures plus a link to the web app,
proposals as the exact change with a confirm link. Values come from the blocks as materialised
from stored results, never from the model's text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from erp_agent.metrics.drill import drillable, row_refs, total_refs
from erp_agent.results.blocks import Block, ChartBlock, ProposalBlock, TableBlock
from erp_agent.results.layout import link_index, more_columns_hint
from erp_agent.results.links import drill_url
from erp_agent.results.presentation import ReportFigure, figure_text
from erp_agent.store.records import ProjectionView
from erp_agent.tools.base import Definition

MAX_TABLE_ROWS = 50


def _cell(value: Any, places: int | None = None) -> str:
    if value is None:
        return ""
    if places is not None and isinstance(value, int | float) and not isinstance(value, bool):
        text = f"{value:,.{places}f}"  # an amount at its currency's precision
    elif isinstance(value, float):
        text = f"{value:,.2f}"
    elif isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(
    columns: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    links: Sequence[Any],
    link_at: int = 0,
    decimals: Sequence[int | None] = (),
) -> str:
    """A markdown table; row n's link on its cell ``link_at`` (the record's id)."""
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "|" + "|".join(" --- " for _ in columns) + "|",
    ]
    for n, row in enumerate(rows[:MAX_TABLE_ROWS]):
        cells = [_cell(v, decimals[i] if i < len(decimals) else None) for i, v in enumerate(row)]
        if n < len(links) and links[n] and link_at < len(cells):
            cells[link_at] = f"[{cells[link_at]}]({links[n]})"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figures_markdown(figures: Sequence[ReportFigure]) -> str:
    """A report's own figures under its table (every ageing bucket, the weighted age)."""
    return "\n".join(f"- {f.get('label')}: {figure_text(f)}" for f in figures)


def definition_text(definition: Definition) -> str:
    parts = [str(definition.get("text") or "")]
    filters = definition.get("filters") or []
    if filters:
        parts.append("Filters: " + "; ".join(map(str, filters)) + ".")
    if definition.get("period"):
        parts.append(f"Period: {definition['period']}.")
    if definition.get("source"):
        parts.append(f"Source: {definition['source']}.")
    return "_How this was computed: " + " ".join(p for p in parts if p) + "_"


def proposal_markdown(block: ProposalBlock, confirm_url: str | None) -> str:
    """The exact change (values or diff, and what it leads to when known), the content
    warning when the write did not come from the user's request, and the confirm link."""
    lines = [f"**Proposed change (not written):** {block.get('summary', '')}"]
    warning = block.get("unrequested")
    if isinstance(warning, dict):
        reason = f" ({warning['reason']})" if warning.get("reason") else ""
        lines.append(
            f"⚠️ **Warning:** {warning.get('message', '')}{reason} "
            "Confirm it only if you really want this change."
        )
    diff = block.get("diff") or []
    if diff:
        rows = [[d.get("field"), d.get("before"), d.get("after")] for d in diff]
        lines.append(_table(["Field", "Now", "After"], rows, []))
    document = block.get("document") or (block.get("payload") if not diff else None)
    if isinstance(document, dict):
        rows = [
            [k, v if not isinstance(v, (list, dict)) else _summary(v)] for k, v in document.items()
        ]
        lines.append(_table(["Field", "Value"], rows, []))
    projection: object = block.get("projection")  # read back from JSON: any version's
    if isinstance(projection, dict) and "ledger" in projection:
        lines.append(projection_markdown(cast(ProjectionView, projection)))
    elif isinstance(projection, dict) and projection:
        rows = [[k, v] for k, v in projection.items()]
        lines.append("**After this change:**\n\n" + _table(["", "Value"], rows, []))
    elif isinstance(projection, str) and projection:
        lines.append(f"**After this change:** {projection}")
    if confirm_url:
        lines.append(
            f"Nothing is written until you confirm it yourself: [review and confirm]({confirm_url})"
            f" (expires {block.get('expires_at', 'soon')})."
        )
    return "\n\n".join(lines)


def projection_markdown(projection: ProjectionView) -> str:
    """What the ERP computed a submit or cancel will post (``gateway/projection.py``): labelled
    a projection, for the version of the record the proposal carries."""
    cur = f" ({projection['currency']})" if projection.get("currency") else ""
    version = f" (the record as of {projection['modified']})" if projection.get("modified") else ""
    parts = [f"**{projection.get('label')}.** {projection.get('text', '')}{version}."]
    if projection.get("refusal"):
        parts.append(f"⚠️ **The ERP says:** {projection['refusal']}")
    blocked = projection.get("blocked_by") or []
    if blocked:
        names = ", ".join(f"{b.get('doctype')} {b.get('id')}" for b in blocked)
        parts.append(f"Submitted documents linked to it, to cancel first: {names}.")
    ledger = projection.get("ledger") or []
    if ledger:
        heads = ["Account", f"Debit{cur}", f"Credit{cur}", "Party", "Cost centre"]
        rows = [[e.get("account"), e.get("debit"), e.get("credit"),
                 " ".join(str(p) for p in (e.get("party_type"), e.get("party")) if p),
                 e.get("cost_center")] for e in ledger]  # fmt: skip
        word = "reverses" if projection.get("action") == "cancel" else "posts"
        parts.append(f"Ledger entries it {word}:\n\n" + _table(heads, rows, [], 0, [None, 2, 2]))
    stock = projection.get("stock") or []
    if stock:
        heads = ["Item", "Warehouse", "In", "Out", "Value change"]
        rows = [[m.get("item"), m.get("warehouse"), m.get("in_qty"), m.get("out_qty"),
                 m.get("value_change")] for m in stock]  # fmt: skip
        parts.append(
            "Stock movements:\n\n" + _table(heads, rows, [], 0, [None, None, None, None, 2])
        )
    schedule = projection.get("payment_schedule") or []
    if schedule:
        rows = [[p.get("due_date"), p.get("portion"), p.get("amount")] for p in schedule]
        parts.append(
            "Payment schedule:\n\n"
            + _table(["Due date", "Portion (%)", f"Amount{cur}"], rows, [], 0, [None, None, 2])
        )
    if not (ledger or stock or schedule or blocked or projection.get("refusal")):
        parts.append("It posts no ledger entries or stock movements.")
    parts += [f"_{note}_" for note in projection.get("notes") or []]
    return "\n\n".join(parts)


def figure_links(result_id: str | None, data: Any, web_url: str, limit: int = 20) -> str:
    """A metric answer's figures (its totals, then its first rows), each linked to the documents
    behind it, for a client that shows the result in its own words (MCP)."""
    if not (result_id and web_url and drillable(data)):
        return ""
    metric = str(data["drill"].get("metric"))
    lines = []
    for total in total_refs(result_id, data):
        unit = f" {total['currency']}" if total.get("currency") else ""
        lines.append(f"- Total: {_cell(total['value'])}{unit} — "
                     f"[documents]({drill_url(web_url, total['ref'])})")  # fmt: skip
    rows = [r for r in data.get("rows") or [] if isinstance(r, dict)][:limit]
    for row, ref in zip(rows, row_refs(result_id, data, rows), strict=True):
        if ref is None:
            continue
        named = ", ".join(
            str(v) for k, v in row.items()
            if k not in (metric, "records", "previous", "change", "change_pct", "others")
            and not isinstance(v, int | float | bool) and v is not None
        )  # fmt: skip
        lines.append(
            f"- {named}: {_cell(row.get(metric))} — [documents]({drill_url(web_url, ref)})"
        )
    return "Documents behind each figure:\n" + "\n".join(lines) if lines else ""


def _with_documents(
    columns: list[Any], rows: list[Any], drills: Any, web_url: str
) -> tuple[list[Any], list[Any]]:
    """A last column linking each row's figure to the documents it was computed from (the web
    app opens them for their owner only), when the block has drill-down references."""
    if not web_url or not isinstance(drills, list) or not any(drills):
        return columns, rows
    linked = [
        [*row, f"[open]({drill_url(web_url, str(ref))})" if ref else ""]
        for row, ref in zip(rows, [*drills, *[None] * len(rows)], strict=False)
    ]
    return [*columns, "Documents"], linked


def _summary(value: list[Any] | dict[str, Any]) -> str:
    if isinstance(value, list):
        return f"{len(value)} lines"
    return ", ".join(f"{k}: {v}" for k, v in list(value.items())[:6])


def _table_markdown(block: TableBlock, web_url: str) -> str:
    labels, rows = _with_documents(
        list(block.get("labels") or block.get("columns") or []),
        list(block.get("rows") or []),
        block.get("drills"),
        web_url,
    )
    out = _table(labels, rows, block.get("links") or [], link_index(block),
                 block.get("decimals") or [])  # fmt: skip
    if block.get("title"):
        out = f"**{block['title']}**\n\n{out}"
    total = int(block.get("total_rows") or 0)
    shown = min(len(block.get("rows") or []), MAX_TABLE_ROWS)
    if total > shown:
        out += f"\n\n_{shown} of {total} rows; the rest stay on the server._"
    hint = more_columns_hint(block.get("more_columns") or [])
    if hint:
        out += f"\n\n_{hint}_"
    if block.get("figures"):
        out += "\n\n" + figures_markdown(block["figures"])
    totals = [t for t in block.get("drill_totals") or [] if t.get("ref")]
    if totals and web_url:
        opened = ", ".join(
            f"[{_cell(t.get('value'), 2 if t.get('currency') else None)}"
            f"{' ' + str(t['currency']) if t.get('currency') else ''}]"
            f"({drill_url(web_url, str(t['ref']))})"
            for t in totals
        )
        out += f"\n\n_Documents behind the total: {opened}_"
    return out


def _chart_markdown(block: ChartBlock, web_url: str) -> str:
    # A block without per-currency charts is drawn from its one top-level spec.
    charts: Sequence[Mapping[str, Any]] = block.get("charts") or []
    if not charts:
        charts = [{"title": block.get("title"), "spec": block.get("spec")}]
    parts = []
    for chart in charts:
        data = (chart.get("spec") or {}).get("data") or {}
        labels = data.get("labels") or []
        datasets = data.get("datasets") or []
        columns = ["", *(d.get("label", "") for d in datasets)]
        rows = [
            [label, *((d.get("data") or [None] * len(labels))[i] for d in datasets)]
            for i, label in enumerate(labels)
        ]
        columns, rows = _with_documents(columns, rows, chart.get("drills"), web_url)
        parts.append(f"**Chart: {chart.get('title') or ''}**\n\n" + _table(columns, rows, []))
    out = "\n\n".join(parts)
    if web_url:
        out += f"\n\n[Open the chart in erp-agent]({web_url.rstrip('/')}/)"
    return out


def _kind_markdown(block: Block, web_url: str) -> str:
    if block["type"] == "text":
        return str(block.get("markdown", ""))
    if block["type"] == "table":
        return _table_markdown(block, web_url)
    if block["type"] == "chart":
        return _chart_markdown(block, web_url)
    if block["type"] == "cards":
        return "\n".join(
            f"- [{c.get('title')}]({c['link']})" if c.get("link") else f"- {c.get('title')}"
            for c in block.get("cards") or []
        )
    if block["type"] == "proposal":
        confirm = f"{web_url.rstrip('/')}/?proposal={block.get('id')}" if web_url else None
        return proposal_markdown(block, confirm)
    if block["type"] == "choices":
        lines = [str(block.get("question", ""))]
        lines += [f"{n}. {o.get('label')}" for n, o in enumerate(block.get("options") or [], 1)]
        return "\n".join(lines)
    if block["type"] == "citations":
        items = block.get("items") or []
        return "Sources: " + "; ".join(str(i.get("title") or i.get("source")) for i in items)
    if block["type"] == "file":
        url = block.get("url") or ""
        if url and web_url and "://" not in url:  # relative to the web app, under its root path
            url = web_url.rstrip("/") + "/" + url.lstrip("/")
        return f"[Download {block.get('name') or block.get('title') or 'file'}]({url})"
    return ""  # a scan's flags, or a kind this channel does not show


def block_markdown(block: Block, *, web_url: str = "") -> str:
    out = _kind_markdown(block, web_url)
    if block["type"] == "table" or block["type"] == "chart" or block["type"] == "cards":
        definition = block.get("definition")
        if isinstance(definition, dict):
            out += "\n\n" + definition_text(definition)
    return out


def blocks_markdown(blocks: Sequence[Block], *, web_url: str = "") -> str:
    return "\n\n".join(m for b in blocks if (m := block_markdown(b, web_url=web_url)))
