"""Response blocks as markdown, for chat clients that show text only (an OpenAI-API chat UI, an
MCP client): tables with document links, charts as their figures plus a link to the web app,
proposals as the exact change with a confirm link. Values come from the blocks as materialised
from stored results, never from the model's text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_TABLE_ROWS = 50


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        text = f"{value:,.2f}"
    elif isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(columns: Sequence[Any], rows: Sequence[Sequence[Any]], links: Sequence[Any]) -> str:
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "|" + "|".join(" --- " for _ in columns) + "|",
    ]
    for n, row in enumerate(rows[:MAX_TABLE_ROWS]):
        cells = [_cell(v) for v in row]
        if n < len(links) and links[n] and cells:
            cells[0] = f"[{cells[0]}]({links[n]})"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def definition_text(definition: dict[str, Any]) -> str:
    parts = [str(definition.get("text") or "")]
    filters = definition.get("filters") or []
    if filters:
        parts.append("Filters: " + "; ".join(map(str, filters)) + ".")
    if definition.get("period"):
        parts.append(f"Period: {definition['period']}.")
    if definition.get("source"):
        parts.append(f"Source: {definition['source']}.")
    return "_How this was computed: " + " ".join(p for p in parts if p) + "_"


def proposal_markdown(block: dict[str, Any], confirm_url: str | None) -> str:
    lines = [f"**Proposed change (not written):** {block.get('summary', '')}"]
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
    if confirm_url:
        lines.append(
            f"Nothing is written until you confirm it yourself: [review and confirm]({confirm_url})"
            f" (expires {block.get('expires_at', 'soon')})."
        )
    return "\n\n".join(lines)


def _summary(value: list[Any] | dict[str, Any]) -> str:
    if isinstance(value, list):
        return f"{len(value)} lines"
    return ", ".join(f"{k}: {v}" for k, v in list(value.items())[:6])


def block_markdown(block: dict[str, Any], *, web_url: str = "") -> str:
    kind = block.get("type")
    out = ""
    if kind == "text":
        out = str(block.get("markdown", ""))
    elif kind == "table":
        out = _table(
            block.get("labels") or block.get("columns") or [],
            block.get("rows") or [],
            block.get("links") or [],
        )
        total = int(block.get("total_rows") or 0)
        shown = min(len(block.get("rows") or []), MAX_TABLE_ROWS)
        if total > shown:
            out += f"\n\n_{shown} of {total} rows; the rest stay on the server._"
    elif kind == "chart":
        charts = block.get("charts") or [{"title": block.get("title"), "spec": block.get("spec")}]
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
            parts.append(f"**Chart: {chart.get('title') or ''}**\n\n" + _table(columns, rows, []))
        out = "\n\n".join(parts)
        if web_url:
            out += f"\n\n[Open the chart in erp-agent]({web_url.rstrip('/')}/)"
    elif kind == "cards":
        out = "\n".join(
            f"- [{c.get('title')}]({c['link']})" if c.get("link") else f"- {c.get('title')}"
            for c in block.get("cards") or []
        )
    elif kind == "proposal":
        confirm = f"{web_url.rstrip('/')}/?proposal={block.get('id')}" if web_url else None
        out = proposal_markdown(block, confirm)
    elif kind == "choices":
        lines = [str(block.get("question", ""))]
        lines += [f"{n}. {o.get('label')}" for n, o in enumerate(block.get("options") or [], 1)]
        out = "\n".join(lines)
    elif kind == "citations":
        items = block.get("items") or []
        out = "Sources: " + "; ".join(str(i.get("title") or i.get("source")) for i in items)
    elif kind == "file":
        url = block.get("url") or ""
        if url and web_url and url.startswith("/"):
            url = web_url.rstrip("/") + url
        out = f"[Download {block.get('name') or block.get('title') or 'file'}]({url})"
    if isinstance(block.get("definition"), dict) and kind in ("table", "chart", "cards"):
        out += "\n\n" + definition_text(block["definition"])
    return out


def blocks_markdown(blocks: Sequence[dict[str, Any]], *, web_url: str = "") -> str:
    return "\n\n".join(m for b in blocks if (m := block_markdown(b, web_url=web_url)))
