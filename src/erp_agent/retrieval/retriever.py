"""The one search entry the tools use: embed the query, hybrid-search the index inside the
scope, optionally rerank the top few."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from erp_agent.retrieval.documents import Hit, Scope
from erp_agent.retrieval.embeddings import Embedder
from erp_agent.retrieval.index import Index
from erp_agent.retrieval.rerank import Reranker


@dataclass
class Retriever:
    index: Index
    embedder: Embedder | None
    reranker: Reranker | None = None
    rerank_top: int = 20

    def search(self, query: str, scope: Scope, *, limit: int = 10) -> list[Hit]:
        if self.index.count(scope.tenant) == 0:
            # Nothing indexed for this tenant (no knowledge uploaded, no records synced): the
            # answer is empty without loading the embedding model (a noticeable part of a
            # second at a terminal command's first question).
            return []
        vector = self.embedder.embed_one(query) if self.embedder is not None else None
        wanted = max(limit, self.rerank_top) if self.reranker else limit
        hits = self.index.search(query, vector, scope, limit=wanted)
        if self.reranker is None or len(hits) < 2:
            return hits[:limit]
        head = hits[: self.rerank_top]
        scores = self.reranker.score(query, [f"{h.doc.title}\n{h.doc.text}" for h in head])
        order = sorted(range(len(head)), key=lambda i: -scores[i])
        return [head[i] for i in order][:limit]

    def keyword_only(self, tenant: str) -> int:
        """How many of the tenant's documents the dense leg cannot see yet (still being
        embedded): they are found by keyword only until their vectors land."""
        if self.embedder is None:
            return 0
        return self.index.pending_count(tenant)

    async def asearch(self, query: str, scope: Scope, *, limit: int = 10) -> list[Hit]:
        """``search`` off the event loop (embedding and numpy are CPU-bound)."""
        return await asyncio.to_thread(self.search, query, scope, limit=limit)
