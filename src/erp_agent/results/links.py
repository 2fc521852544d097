"""Links to the source documents, for every channel: the ERP page of a record, and every
document id in a text made a markdown link to its page — only an id the turn's live results hold
(what the ERP returned), never one that only a knowledge article quotes as an example. Channels
get a ``LinkBuilder``; none of them needs the connector for this."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from erp_agent.tools.base import Shape

if TYPE_CHECKING:
    from erp_agent.catalog import Catalog
    from erp_agent.models.base import Message
    from erp_agent.tools.base import ToolRegistry

Linker = Callable[[str, Mapping[str, Any]], str | None]
# Results that are no records of the ERP: knowledge passages, tool descriptions, display blocks.
_NOT_LIVE = frozenset({Shape.PASSAGES, Shape.TOOL_SEARCH, Shape.DISPLAY})


class LinkBuilder:
    def __init__(self, linker: Linker, catalog: Catalog, connector_name: str) -> None:
        self._linker = linker
        self.catalog = catalog
        self.connector_name = connector_name

    def document(self, entity: str, record: Mapping[str, Any]) -> str | None:
        """The URL of the record's page in the ERP (None when it has no page)."""
        return self._linker(entity, record)

    def in_text(self, text: str, live: str | None = None) -> str:
        """Every document id in the text becomes a markdown link to its page (once per id).

        ``live``: the text of the results the ERP returned; when given, an id not in it (an
        example in a knowledge article, a number the model made up) stays plain text."""
        done: set[str] = set()
        for entity, doc_id in self.catalog.find_document_ids(self.connector_name, text):
            if doc_id in done:
                continue
            done.add(doc_id)
            if live is not None and not _holds(live, doc_id):
                continue
            url = self.document(entity.name, {"id": doc_id})
            if url:
                text = re.sub(
                    rf"(?<![\[\w/-]){re.escape(doc_id)}(?![\w-]|\]\()", f"[{doc_id}]({url})", text
                )
        return text


def _holds(live: str, doc_id: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(doc_id)}(?![\w-])", live) is not None


def live_text(messages: Iterable[Message], registry: ToolRegistry, documents: Any = None) -> str:
    """The text of every tool result in ``messages`` that came from the ERP's records (lists,
    reports, figures), not from the knowledge base or the tool catalog; and the conversation's
    ``documents`` the ERP wrote on a confirmed change (those with their page's ``url``)."""
    written = documents if isinstance(documents, list) else []
    parts = [str(d.get("id")) for d in written if isinstance(d, dict) and d.get("url")]
    for message in messages:
        if message.role != "tool" or not message.content:
            continue
        tool = registry.get(message.name or "")
        if tool is None or tool.shape not in _NOT_LIVE:
            parts.append(message.content)
    return "\n".join(parts)


def drill_url(web_url: str, ref: str) -> str:
    """The web app's page listing the documents behind a figure (``ref``, results.drill): it
    opens for whoever signs in there, and lists them only if the figure was computed for them."""
    return f"{web_url.rstrip('/')}/?drill={ref}"
