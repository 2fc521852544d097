"""Links to the source documents, for every channel: the ERP page of a record, and every
document id in a text made a markdown link to its page. Channels get a ``LinkBuilder``; none of
them needs the connector for this."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from erp_agent.catalog import Catalog

Linker = Callable[[str, Mapping[str, Any]], str | None]


class LinkBuilder:
    def __init__(self, linker: Linker, catalog: Catalog, connector_name: str) -> None:
        self._linker = linker
        self.catalog = catalog
        self.connector_name = connector_name

    def document(self, entity: str, record: Mapping[str, Any]) -> str | None:
        """The URL of the record's page in the ERP (None when it has no page)."""
        return self._linker(entity, record)

    def in_text(self, text: str) -> str:
        """Every document id in the text becomes a markdown link to its page (once per id)."""
        done: set[str] = set()
        for entity, doc_id in self.catalog.find_document_ids(self.connector_name, text):
            if doc_id in done:
                continue
            url = self.document(entity.name, {"id": doc_id})
            if url:
                text = re.sub(
                    rf"(?<![\[\w/-]){re.escape(doc_id)}(?![\w-]|\]\()", f"[{doc_id}]({url})", text
                )
            done.add(doc_id)
        return text
