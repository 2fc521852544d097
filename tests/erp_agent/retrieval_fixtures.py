"""Shared helpers for the retrieval tests: a counting embedder, a PostgreSQL index factory that
fails loudly when the server is missing, and a small corpus of fact cards."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import uuid
from collections.abc import Sequence

import numpy as np
import pytest

from erp_agent.errors import StoreError
from erp_agent.retrieval.documents import Document, Kind
from erp_agent.retrieval.embeddings import Embedder, Vectors, default_embedder, normalise

PG_DSN = os.environ.get("ERP_AGENT_TEST_PG", "postgresql://app:app@127.0.0.1:5433/app")


class HashEmbedder(Embedder):
    """Deterministic unit vectors from a text's hash: for tests of sync bookkeeping, where what
    matters is that every card is embedded and stored, not how close meanings are."""

    model_id = "test-hash"
    dim = 384

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = [
            np.random.default_rng(int.from_bytes(hashlib.sha256(t.encode()).digest()[:8])).normal(
                size=self.dim
            )
            for t in texts
        ]
        return normalise(np.array(rows).reshape(len(texts), self.dim))


class CountingEmbedder(Embedder):
    """An embedder (the real offline one by default) counting the texts it is asked to embed,
    and able to fail on a chosen call, to inject crashes."""

    def __init__(self, fail_on_call: int | None = None, *, fast: bool = False) -> None:
        self.inner: Embedder = HashEmbedder() if fast else default_embedder()
        self.model_id = self.inner.model_id
        self.dim = self.inner.dim
        self.texts = 0
        self.calls = 0
        self.fail_on_call = fail_on_call

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        if self.fail_on_call is not None and self.calls == self.fail_on_call:
            raise RuntimeError("injected embedder crash")
        self.texts += len(texts)
        return self.inner.embed(texts)


def postgres_index(prefix: str | None = None):  # type: ignore[no-untyped-def]
    from erp_agent.retrieval.index_postgres import PostgresIndex

    try:
        return PostgresIndex(PG_DSN, prefix=prefix or f"t_{uuid.uuid4().hex[:10]}")
    except StoreError as exc:
        pytest.fail(
            f"PostgreSQL with pgvector is not reachable at {PG_DSN} ({exc}). Run .ci/pgvector.sh "
            "as root to create it, or point ERP_AGENT_TEST_PG at a server with pgvector."
        )


_CUSTOMERS = [
    "Gulf Traders",
    "Lakeside Foods",
    "Rift Valley Motors",
    "Acme Hardware",
    "Savanna Agro",
]
_BRANCHES = ["Kisumu", "Mombasa", "Nairobi"]


def invoice_cards(tenant: str = "acme", n: int = 60) -> list[Document]:
    """Fact cards that look alike on purpose: only ids, parties, branches and figures differ."""
    docs = []
    for i in range(n):
        record_id = f"ACC-SINV-2026-{i + 100:05d}"
        customer = _CUSTOMERS[i % len(_CUSTOMERS)]
        branch = _BRANCHES[i % len(_BRANCHES)]
        date = dt.date(2026, 1 + i % 12, 1 + i % 27)
        total = 1000 + 37 * i
        text = (
            f"Sales Invoice {record_id} to {customer} ({branch}) dated {date}: total KES "
            f"{total:,.2f}, outstanding KES {total / 2:,.2f}, status Unpaid, due {date}."
        )
        docs.append(
            Document(
                key=f"sales_invoice:{record_id}", kind=Kind.RECORD, tenant=tenant,
                title=f"Sales Invoice {record_id}", text=text, company="Savanna Trading Ltd",
                branch=branch, entity="sales_invoice", record_id=record_id, date=date,
                module="accounting", parent="sales_invoice",
            )
        )  # fmt: skip
    return docs


KNOWLEDGE = [
    ("kb:docstatus#0", "Document status > Cancel and amend",
     "To correct a submitted document, cancel it and then amend it. Amending creates a new draft "
     "copy linked through amended_from."),
    ("kb:stock#0", "Stock movements > Negative stock",
     "ERPNext refuses to submit a transaction that would take a warehouse below zero for an item."),
    ("kb:leave#0", "Leave > Applying for leave",
     "A leave application names the employee, the leave type, the dates and the leave approver."),
    ("kb:closing#0", "Period closing > Period closing voucher",
     "At year end a period closing voucher moves income and expense balances to retained earnings."),
]  # fmt: skip


def knowledge_docs(tenant: str = "acme") -> list[Document]:
    return [
        Document(key=key, kind=Kind.KNOWLEDGE, tenant=tenant, title=title, text=text,
                 module="setup", parent=key.split("#")[0])
        for key, title, text in KNOWLEDGE
    ]  # fmt: skip


def seeded_erp(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A private demo ERP over real HTTP for tests that change its data (the shared session
    ERP stays as other tests expect it). Yields its URL."""
    from conftest import TEST_TODAY
    from demo_erp.context import Settings
    from demo_erp.seed import seed
    from demo_erp.server import start_in_thread

    path = tmp_path_factory.mktemp("retrieval-erp") / "demo.sqlite"
    seed(path, today=TEST_TODAY, scale=0.1)
    server = start_in_thread(Settings(db_path=str(path), version=15, today=TEST_TODAY))
    try:
        yield server.url
    finally:
        server.stop()
