"""The knowledge base: Markdown documents indexed as labelled chunks, searched for passages to
cite, and packed into the model's context within a token budget.

A document whose checksum is unchanged costs nothing on re-index (no embedding, no write); a
changed one replaces exactly its own chunks, in one transaction with its new checksum.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from erp_agent.retrieval.chunking import KnowledgeDoc, chunk, parse
from erp_agent.retrieval.documents import Batch, Document, Kind, Scope
from erp_agent.retrieval.retriever import Retriever

PARENT_PREFIX = "kb:"

Progress = Callable[[str, int, int], None]  # (doc_id, chunks embedded, 0 if unchanged)


def packaged_root() -> Path:
    """The starter knowledge base shipped with the package."""
    return Path(str(resources.files("erp_agent").joinpath("knowledge_base")))


@dataclass
class Passage:
    """A chunk to show or cite: ``source`` is the document title, ``label`` "title > section"."""

    label: str
    source: str
    text: str
    score: float
    doc_id: str
    module: str | None = None

    @property
    def tokens(self) -> int:
        return estimate_tokens(f"{self.label}\n{self.text}")


@dataclass
class IndexReport:
    files: int = 0
    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks: int = 0


def estimate_tokens(text: str) -> int:
    """A cheap upper-ish estimate (~4 characters per token for English prose)."""
    return max(1, (len(text) + 3) // 4)


class KnowledgeBase:
    """Knowledge documents of one tenant in an index."""

    def __init__(self, retriever: Retriever, tenant: str = "default") -> None:
        self.retriever = retriever
        self.tenant = tenant

    # ---------------------------------------------------------------- ingestion

    def index_path(
        self, root: Path | None = None, *, prune: bool = True, progress: Progress | None = None
    ) -> IndexReport:
        """Index every ``*.md`` under ``root`` (a file or a folder; default: the starter
        knowledge base). With ``prune``, documents no longer under ``root`` are removed."""
        root = root or packaged_root()
        files = [root] if root.is_file() else sorted(root.rglob("*.md"))
        base = root.parent if root.is_file() else root
        report = IndexReport(files=len(files))
        seen: set[str] = set()
        for path in files:
            if path.name.lower() == "readme.md":
                continue
            doc = parse(path.relative_to(base).with_suffix("").as_posix(), path.read_text("utf-8"))
            seen.add(doc.doc_id)
            added = self.index_document(doc)
            (report.indexed if added is not None else report.unchanged).append(doc.doc_id)
            report.chunks += added or 0
            if progress is not None:
                progress(doc.doc_id, added or 0, len(files))
        if prune and root.is_dir():
            report.removed = self._prune(seen)
        return report

    def index_document(self, doc: KnowledgeDoc) -> int | None:
        """Index one document; the number of chunks written, or None if it was unchanged."""
        state_name = _state_name(doc.doc_id)
        if self.retriever.index.state(self.tenant, state_name) == doc.checksum:
            return None
        chunks = chunk(doc)
        vectors = (
            self.retriever.embedder.embed([f"{c.label}\n{c.text}" for c in chunks])
            if self.retriever.embedder is not None and chunks
            else None
        )
        parent = PARENT_PREFIX + doc.doc_id
        docs = []
        for i, part in enumerate(chunks):
            document = Document(
                key=f"{parent}#{part.index}",
                kind=Kind.KNOWLEDGE,
                tenant=self.tenant,
                title=part.label,
                text=part.text,
                module=doc.module,
                parent=parent,
                metadata={"doc_id": doc.doc_id, "source": doc.title, "section": part.section,
                          "entities": list(doc.entities)},
            )  # fmt: skip
            docs.append(document.embedded(vectors[i]) if vectors is not None else document)
        self.retriever.index.commit(
            Batch(
                self.tenant,
                upserts=docs,
                replace_parents=[parent],
                state={state_name: doc.checksum},
            )
        )
        return len(docs)

    def _prune(self, keep: set[str]) -> list[str]:
        gone = sorted(
            {
                key.split("#", 1)[0].removeprefix(PARENT_PREFIX)
                for key in self.retriever.index.keys(self.tenant)
                if key.startswith(PARENT_PREFIX)
            }
            - keep
        )
        for doc_id in gone:
            self.retriever.index.commit(
                Batch(
                    self.tenant,
                    replace_parents=[PARENT_PREFIX + doc_id],
                    state={_state_name(doc_id): "removed"},
                )
            )
        return gone

    # ---------------------------------------------------------------- search

    def search(self, query: str, *, module: str | None = None, limit: int = 5) -> list[Passage]:
        scope = Scope(
            self.tenant,
            kinds=frozenset({Kind.KNOWLEDGE}),
            modules=frozenset({module}) if module else None,
        )
        return [_passage(h.doc, h.score) for h in self.retriever.search(query, scope, limit=limit)]

    def knowledge_context(
        self, query: str, budget_tokens: int, *, module: str | None = None
    ) -> list[Passage]:
        """The closest passages, best first, whose text together fits ``budget_tokens``; a
        passage that does not fit is skipped (a smaller, less close one may still fit)."""
        chosen: list[Passage] = []
        used = 0
        for passage in self.search(query, module=module, limit=10):
            if used + passage.tokens <= budget_tokens:
                chosen.append(passage)
                used += passage.tokens
        return chosen


def _state_name(doc_id: str) -> str:
    return f"checksum:{PARENT_PREFIX}{doc_id}"


def _passage(doc: Document, score: float) -> Passage:
    return Passage(
        label=doc.title,
        source=str(doc.metadata.get("source", doc.title)),
        text=doc.text,
        score=score,
        doc_id=str(doc.metadata.get("doc_id", doc.parent or doc.key)),
        module=doc.module,
    )


def cite(passages: Iterable[Passage]) -> list[dict[str, object]]:
    """Passages as JSON for a tool result: text plus the label to cite."""
    return [
        {"source": p.label, "document": p.source, "text": p.text, "score": round(p.score, 4)}
        for p in passages
    ]
