"""Structured responses: text (markdown with document links), table, cards, chart, file,
proposal, citations. Values in tables and charts are read from stored results here, so the
model cannot alter a number on its way to the screen."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.engine.results import PAGE_ROWS, rows_of
from erp_agent.results.store import ResultRecord, ResultStore

Block = dict[str, Any]
Linker = Callable[[str, dict[str, Any]], str | None]


def link_ids(text: str, catalog: Catalog, connector_name: str, linker: Linker) -> str:
    """Every document id in the text becomes a markdown link to its ERP page (once per id)."""
    done: set[str] = set()
    for entity, doc_id in catalog.find_document_ids(connector_name, text):
        if doc_id in done:
            continue
        url = linker(entity.name, {"id": doc_id})
        if url:
            text = re.sub(
                rf"(?<![\[\w/-]){re.escape(doc_id)}(?![\w-]|\]\()", f"[{doc_id}]({url})", text
            )
        done.add(doc_id)
    return text


def _links(
    stored: ResultRecord, rows: Sequence[dict[str, Any]], linker: Linker
) -> list[str | None]:
    if not stored.entity:
        return [None] * len(rows)
    return [linker(stored.entity, r) if r.get("id") else None for r in rows]


async def materialise(block: Block, results: ResultStore, user: str, linker: Linker) -> Block:
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
        columns = block.get("columns") or list(dict.fromkeys(k for r in rows for k in r))
        page = rows[:PAGE_ROWS]
        return {
            **block,
            "columns": columns,
            "rows": [[r.get(c) for c in columns] for r in page],
            "links": _links(stored, page, linker),
            "total_rows": len(rows),
            "page": {"start": 0, "limit": PAGE_ROWS},
        }
    if kind == "chart":
        label, values = block["label"], block["values"]
        return {
            **block,
            "spec": {
                "type": block["chart_type"],
                "data": {
                    "labels": [r.get(label) for r in rows],
                    "datasets": [{"label": v, "data": [r.get(v) for r in rows]} for v in values],
                },
            },
        }
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


def proposal_block(proposal: dict[str, Any]) -> Block:
    return {"type": "proposal", **proposal}


def citations_block(passages: Sequence[dict[str, Any]]) -> Block:
    return {
        "type": "citations",
        "items": [{"title": p.get("title"), "source": p.get("source")} for p in passages],
    }
