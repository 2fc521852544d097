"""What an index stores and how a search is scoped: documents, scopes and hits."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from erp_agent.retrieval.embeddings import Vectors


class Kind(StrEnum):
    RECORD = "record"  # a fact card about one ERP record
    KNOWLEDGE = "knowledge"  # a chunk of a knowledge-base document


@dataclass
class Document:
    """One searchable unit. ``key`` is its source key, unique within a tenant: upserting the same
    key replaces it. ``parent`` groups the chunks of one knowledge document (or names the
    entity of a card) so they can be replaced together."""

    key: str
    kind: Kind
    tenant: str
    title: str
    text: str
    company: str | None = None
    branch: str | None = None
    entity: str | None = None
    record_id: str | None = None
    date: dt.date | None = None
    link: str | None = None
    module: str | None = None
    parent: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: Vectors | None = field(default=None, repr=False, compare=False)

    @property
    def embedding_text(self) -> str:
        """What this document's vector is computed from: a card's text, a passage's heading
        and text (both backends express the same rule in SQL for deferred embedding)."""
        return self.text if self.kind is Kind.RECORD else f"{self.title}\n{self.text}"

    def embedded(self, vector: Vectors) -> Document:
        import numpy as np

        return replace(self, embedding=np.asarray(vector, dtype=np.float32))


@dataclass(frozen=True)
class Scope:
    """Who may see what, applied INSIDE every search leg (never by filtering a top-k after).

    ``None`` means "no restriction" for that dimension; an empty set matches nothing. Documents
    without a branch (knowledge, masters) are not branch-restricted. A date range excludes
    undated documents.
    """

    tenant: str
    kinds: frozenset[Kind] | None = None
    companies: frozenset[str] | None = None
    branches: frozenset[str] | None = None
    entities: frozenset[str] | None = None
    modules: frozenset[str] | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    def matches(self, doc: Document) -> bool:
        """The same rule the indexes express in SQL / numpy masks (used by tests and caches)."""
        if doc.tenant != self.tenant:
            return False
        if self.kinds is not None and doc.kind not in self.kinds:
            return False
        if (
            self.companies is not None
            and doc.company is not None
            and doc.company not in self.companies
        ):
            return False
        if self.branches is not None and doc.branch is not None and doc.branch not in self.branches:
            return False
        if self.entities is not None and doc.entity not in self.entities:
            return False
        if self.modules is not None and doc.module not in self.modules:
            return False
        if self.date_from is not None and (doc.date is None or doc.date < self.date_from):
            return False
        return not (self.date_to is not None and (doc.date is None or doc.date > self.date_to))


@dataclass
class Hit:
    """A fused result: the document, its RRF score and its rank in each leg (1-based)."""

    doc: Document
    score: float
    dense_rank: int | None = None
    keyword_rank: int | None = None


@dataclass
class Batch:
    """Everything one commit changes for one tenant, applied in ONE transaction with the state
    entries (sync watermarks, document checksums): a crash leaves all of it or none of it."""

    tenant: str
    upserts: list[Document] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)  # keys
    replace_parents: list[str] = field(default_factory=list)  # drop every doc of these parents
    state: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        strangers = {d.tenant for d in self.upserts} - {self.tenant}
        if strangers:
            raise ValueError(f"a batch for tenant {self.tenant!r} holds documents of {strangers}")

    def __bool__(self) -> bool:
        return bool(self.upserts or self.deletes or self.replace_parents or self.state)
