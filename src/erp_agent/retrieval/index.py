"""The Index interface: store documents, search them with scope applied inside both legs.

Backends implement the two legs (``dense`` and ``keyword``) and storage; fusion by reciprocal
rank happens here, once, so every backend ranks the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple

from erp_agent.retrieval.documents import Batch, Document, Hit, Scope
from erp_agent.retrieval.embeddings import Vectors
from erp_agent.retrieval.hybrid import LEG_K, LOOSE_WEIGHT, RRF_K, fuse
from erp_agent.retrieval.text import identifier_tokens

Ranked = list[tuple[str, float]]  # (key, leg score), best first


class Pending(NamedTuple):
    """A stored document still without a vector, and the text its vector is computed from."""

    key: str
    text: str


class KeywordHits(list[tuple[str, float]]):
    """A keyword leg's ranking; the first ``strict`` hold every term of the query."""

    def __init__(self, hits: Ranked, strict: int) -> None:
        super().__init__(hits)
        self.strict = strict


def with_fallback(strict: Ranked, loose: Ranked, k: int) -> Ranked:
    """AND matches first (they hold every term), then OR matches not already listed, up to k."""
    seen = {key for key, _ in strict}
    hits = (strict + [hit for hit in loose if hit[0] not in seen])[:k]
    return KeywordHits(hits, min(len(strict), k))


class Index(ABC):
    """A tenant-aware document index (fact cards and knowledge chunks)."""

    dim: int

    @abstractmethod
    def commit(self, batch: Batch) -> None:
        """Apply deletes, parent replacements, upserts and state entries atomically."""

    @abstractmethod
    def state(self, tenant: str, name: str) -> str | None:
        """A state entry written by ``commit`` (a sync watermark, a document checksum)."""

    @abstractmethod
    def fetch(self, tenant: str, keys: Sequence[str]) -> list[Document]:
        """Documents by key, in the order asked (missing keys skipped; no embeddings)."""

    @abstractmethod
    def keys(self, tenant: str, *, parent: str | None = None) -> list[str]:
        """Every key of a tenant (optionally of one parent), sorted."""

    @abstractmethod
    def dense(self, vector: Vectors, scope: Scope, k: int) -> Ranked:
        """Top-k by cosine similarity among documents inside ``scope``."""

    @abstractmethod
    def keyword(self, query: str, scope: Scope, k: int) -> Ranked:
        """Top-k by keyword relevance inside ``scope``: AND of the terms first, OR when fewer
        than k documents match them all."""

    @abstractmethod
    def exact(self, identifiers: Sequence[str], scope: Scope) -> list[str]:
        """Keys of documents inside ``scope`` whose record id, compacted (see
        ``text.identifier_tokens``), is one of ``identifiers``."""

    @abstractmethod
    def pending(self, tenant: str, limit: int, *, after: str | None = None) -> list[Pending]:
        """Up to ``limit`` documents without a vector, in storage order (after key ``after``)."""

    @abstractmethod
    def store_vectors(self, tenant: str, rows: Sequence[tuple[Pending, Vectors]]) -> int:
        """Add vectors to stored documents whose embedded text is still ``Pending.text`` (a
        document rewritten meanwhile stays pending); returns how many were stored."""

    @abstractmethod
    def pending_count(self, tenant: str) -> int:
        """How many of the tenant's documents have no vector yet (keyword-only until then)."""

    @abstractmethod
    def without_vectors(self, tenant: str, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` have no vector yet."""

    @abstractmethod
    def count(self, tenant: str) -> int:
        """How many documents the tenant has."""

    @abstractmethod
    def close(self) -> None: ...

    # ---------------------------------------------------------------- conveniences

    def upsert(self, docs: Sequence[Document]) -> None:
        for tenant in sorted({d.tenant for d in docs}):
            self.commit(Batch(tenant, upserts=[d for d in docs if d.tenant == tenant]))

    def delete(self, tenant: str, keys: Sequence[str]) -> None:
        self.commit(Batch(tenant, deletes=list(keys)))

    def search(
        self,
        query: str,
        vector: Vectors | None,
        scope: Scope,
        *,
        limit: int = 10,
        leg_k: int = LEG_K,
        rrf_k: int = RRF_K,
    ) -> list[Hit]:
        """Hybrid search: dense top-``leg_k`` and keyword top-``leg_k`` fused by RRF. With no
        vector (no embedder), keyword only. A record named by its exact id in the query comes
        first: someone who types ACC-SINV-2026-00123 wants that invoice, not its neighbours."""
        dense = self.dense(vector, scope, leg_k) if vector is not None else []
        keyword = self.keyword(query, scope, leg_k) if query.strip() else []
        strict = getattr(keyword, "strict", len(keyword))
        kw_weights = [1.0] * strict + [LOOSE_WEIGHT] * (len(keyword) - strict)
        fused = fuse([dense, keyword], k=rrf_k, weights=[None, kw_weights])
        if dense and keyword and self.pending_count(scope.tenant):
            fused = _credit_keyword_only(
                fused,
                keyword,
                kw_weights,
                self.without_vectors(scope.tenant, [k for k, _ in keyword]),
                rrf_k,
            )
        identifiers = identifier_tokens(query)
        pinned = self.exact(identifiers, scope) if identifiers else []
        if pinned:
            top = fused[0][1] if fused else 0.0
            others = [(key, score) for key, score in fused if key not in pinned]
            fused = [(key, top + 1.0) for key in pinned] + others
        fused = fused[:limit]
        docs = {d.key: d for d in self.fetch(scope.tenant, [key for key, _ in fused])}
        dense_rank = {key: i for i, (key, _) in enumerate(dense, 1)}
        keyword_rank = {key: i for i, (key, _) in enumerate(keyword, 1)}
        return [
            Hit(docs[key], score, dense_rank.get(key), keyword_rank.get(key))
            for key, score in fused
            if key in docs
        ]

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _credit_keyword_only(
    fused: Ranked, keyword: Ranked, weights: list[float], unembedded: set[str], rrf_k: int
) -> Ranked:
    """A card still waiting for its vector cannot be ranked by the dense leg; without this it
    would lose to every card both legs found. It is credited as if the dense leg ranked it
    where the keyword leg did, so a fresh card is not buried while the backfill runs."""
    if not unembedded:
        return fused
    scores = dict(fused)
    for rank, (key, _) in enumerate(keyword, 1):
        if key in unembedded:
            scores[key] += weights[rank - 1] / (rrf_k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
