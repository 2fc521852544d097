"""The admin console's knowledge upload on top of the retrieval side's ``KnowledgeBase``.

Uploaded files are kept under one folder (so a re-index finds them again) and indexed at once;
a re-index covers the packaged starter documents and the uploads. Indexing embeds text, which is
CPU-bound, so it runs in a worker thread.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml

from erp_agent.errors import ConfigError
from erp_agent.retrieval.chunking import parse
from erp_agent.retrieval.knowledge import IndexReport, KnowledgeBase, packaged_root


class IndexedKnowledge:
    def __init__(
        self, kb: KnowledgeBase, upload_dir: Path, site_dir: str | Path | None = None
    ) -> None:
        self.kb = kb
        self.upload_dir = upload_dir
        # A deployment's own documents (ERP_AGENT_SITE_DIR/knowledge), indexed with the rest.
        self.site_knowledge = Path(site_dir) / "knowledge" if site_dir else None

    async def upload(self, name: str, text: str) -> dict[str, Any]:
        path = self.upload_dir / Path(name).name  # the name is validated; never leave the folder
        doc_id = path.stem  # what index_path(upload_dir) names it, so re-index finds the same id
        try:
            doc = parse(doc_id, text)
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
        except yaml.YAMLError as exc:  # the front matter between the --- lines
            where = getattr(exc, "problem_mark", None)
            line = f" (line {where.line + 2})" if where is not None else ""
            raise ValueError(
                f"The front matter of {name} is not valid YAML{line}: "
                f"{getattr(exc, 'problem', None) or 'it cannot be read'}. Fix it, or remove the "
                "lines between the --- markers, and upload it again."
            ) from exc
        self.upload_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        chunks = await asyncio.to_thread(self.kb.index_document, doc)
        return {
            "document": doc_id,
            "title": doc.title,
            "chunks": chunks or 0,
            "unchanged": chunks is None,
        }

    async def reindex(self) -> dict[str, Any]:
        def run() -> list[IndexReport]:
            reports = [self.kb.index_path(packaged_root(), prune=False)]
            if self.upload_dir.is_dir():
                reports.append(self.kb.index_path(self.upload_dir, prune=False))
            if self.site_knowledge is not None and self.site_knowledge.is_dir():
                reports.append(self.kb.index_path(self.site_knowledge, prune=False))
            return reports

        reports = await asyncio.to_thread(run)
        return {
            "indexed": [d for r in reports for d in r.indexed],
            "unchanged": len([d for r in reports for d in r.unchanged]),
            "chunks": sum(r.chunks for r in reports),
        }
