"""ONE contract for every Index backend: SQLite (embedded) and PostgreSQL + pgvector.

The PostgreSQL run needs a server (ERP_AGENT_TEST_PG; `.ci/pgvector.sh` creates one) and FAILS,
never skips, when it is missing: CI runs the whole contract on both backends.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from retrieval_fixtures import invoice_cards, knowledge_docs, postgres_index

from erp_agent.retrieval import _sql
from erp_agent.retrieval.documents import Batch, Document, Kind, Scope
from erp_agent.retrieval.embeddings import default_embedder
from erp_agent.retrieval.index import Index
from erp_agent.retrieval.index_sqlite import SQLiteIndex

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(scope="module")
def corpus() -> list[Document]:
    docs = invoice_cards() + knowledge_docs()
    vectors = default_embedder().embed([f"{d.title}\n{d.text}" for d in docs])
    return [d.embedded(v) for d, v in zip(docs, vectors, strict=True)]


def _open(backend: str, tmp_path: Path) -> Index:
    return SQLiteIndex(tmp_path / "index.sqlite") if backend == "sqlite" else postgres_index()


@pytest.fixture(params=BACKENDS)
def index(
    request: pytest.FixtureRequest, tmp_path: Path, corpus: list[Document]
) -> Iterator[Index]:
    idx = _open(request.param, tmp_path)
    idx.upsert(corpus)
    yield idx
    if hasattr(idx, "drop"):
        idx.drop()
    idx.close()


def search(index: Index, query: str, scope: Scope, limit: int = 10) -> list[str]:
    vector = default_embedder().embed_one(query)
    return [h.doc.key for h in index.search(query, vector, scope, limit=limit)]


def test_exact_identifier_ranks_first(index: Index) -> None:
    for record_id in ("ACC-SINV-2026-00123", "ACC-SINV-2026-00141"):
        for query in (record_id, f"status of invoice {record_id}", record_id.lower()):
            assert search(index, query, Scope("acme"))[0] == f"sales_invoice:{record_id}", query


def test_paraphrase_finds_the_passage(index: Index) -> None:
    scope = Scope("acme", kinds=frozenset({Kind.KNOWLEDGE}))
    assert search(index, "how do I fix an invoice that was already posted", scope)[0] == (
        "kb:docstatus#0"
    )
    assert search(index, "why can't I issue goods the warehouse doesn't have", scope)[0] == (
        "kb:stock#0"
    )


def test_other_tenants_see_nothing(index: Index) -> None:
    assert search(index, "ACC-SINV-2026-00123", Scope("other")) == []
    assert index.fetch("other", ["sales_invoice:ACC-SINV-2026-00123"]) == []


def test_branch_scope_is_applied_inside_both_legs(index: Index) -> None:
    kisumu = Scope("acme", kinds=frozenset({Kind.RECORD}), branches=frozenset({"Kisumu"}))
    # A Mombasa invoice named exactly: neither leg may let it through.
    probe = search(index, "ACC-SINV-2026-00101", kisumu)
    assert {d.branch for d in index.fetch("acme", probe)} <= {"Kisumu"}
    assert "sales_invoice:ACC-SINV-2026-00101" not in search(index, "ACC-SINV-2026-00101", kisumu)
    # 20 of 60 cards are Kisumu's: a scoped top-10 is still full (filtered before top-k).
    keys = search(index, "Mombasa invoice", kisumu, limit=10)
    assert len(keys) == 10
    assert {d.branch for d in index.fetch("acme", keys)} == {"Kisumu"}
    vector = default_embedder().embed_one("Mombasa invoice")
    assert len(index.dense(vector, kisumu, 15)) == 15
    assert {
        d.branch for d in index.fetch("acme", [k for k, _ in index.dense(vector, kisumu, 15)])
    } == {"Kisumu"}
    assert len(index.keyword("invoice Mombasa", kisumu, 15)) == 15


def test_entity_company_kind_and_date_scopes(index: Index) -> None:
    march = Scope("acme", date_from=dt.date(2026, 3, 1), date_to=dt.date(2026, 3, 31))
    keys = search(index, "sales invoice", march, limit=50)
    assert keys
    assert all(dt.date(2026, 3, 1) <= d.date <= dt.date(2026, 3, 31)  # type: ignore[operator]
               for d in index.fetch("acme", keys))  # fmt: skip
    assert search(index, "invoice", Scope("acme", entities=frozenset({"purchase_invoice"}))) == []
    harbor = search(index, "invoice", Scope("acme", companies=frozenset({"Harbor Goods Inc"})))
    assert all(k.startswith("kb:") for k in harbor)  # only company-less documents
    knowledge_only = search(index, "invoice", Scope("acme", kinds=frozenset({Kind.KNOWLEDGE})))
    assert knowledge_only
    assert all(k.startswith("kb:") for k in knowledge_only)


def test_upsert_is_idempotent_and_replaces(index: Index, corpus: list[Document]) -> None:
    before = index.keys("acme")
    index.upsert(corpus[:5])
    assert index.keys("acme") == before
    changed = Document(**{**corpus[0].__dict__, "text": corpus[0].text + " Credited in full."})
    index.upsert([changed.embedded(corpus[0].embedding)])  # type: ignore[arg-type]
    assert index.fetch("acme", [changed.key])[0].text.endswith("Credited in full.")
    assert len(index.keys("acme")) == len(before)


def test_delete_and_replace_parent(index: Index, corpus: list[Document]) -> None:
    index.delete("acme", ["sales_invoice:ACC-SINV-2026-00123"])
    assert search(index, "ACC-SINV-2026-00123", Scope("acme"))[:1] != [
        "sales_invoice:ACC-SINV-2026-00123"
    ]
    new_chunk = Document(
        key="kb:leave#5", kind=Kind.KNOWLEDGE, tenant="acme", title="Leave > Balances",
        text="The leave balance is the allocation minus approved leave.", parent="kb:leave",
    ).embedded(np.ones(384, dtype=np.float32) / np.sqrt(384))  # fmt: skip
    index.commit(Batch("acme", upserts=[new_chunk], replace_parents=["kb:leave"]))
    assert index.keys("acme", parent="kb:leave") == ["kb:leave#5"]
    assert index.keys("acme", parent="kb:stock") == ["kb:stock#0"]


def test_state_commits_with_the_batch(index: Index, corpus: list[Document]) -> None:
    index.commit(Batch("acme", deletes=[corpus[1].key], state={"watermark:sales_invoice": "w1"}))
    assert index.state("acme", "watermark:sales_invoice") == "w1"
    assert index.state("other", "watermark:sales_invoice") is None


def test_a_crash_inside_the_transaction_leaves_nothing(
    index: Index, corpus: list[Document], monkeypatch: pytest.MonkeyPatch
) -> None:
    index.commit(Batch("acme", state={"watermark:sales_invoice": "before"}))
    fresh = [
        Document(**{**d.__dict__, "key": f"{d.key}-new", "record_id": None}).embedded(d.embedding)  # type: ignore[arg-type]
        for d in corpus[:6]
    ]
    real = _sql.row_values
    calls = {"n": 0}

    def explode_on_the_fourth(doc: Document) -> dict[str, object]:
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("injected crash mid-batch")
        return real(doc)

    monkeypatch.setattr(_sql, "row_values", explode_on_the_fourth)
    with pytest.raises(RuntimeError, match="injected"):
        index.commit(
            Batch("acme", upserts=fresh, deletes=[corpus[10].key],
                  state={"watermark:sales_invoice": "after"})
        )  # fmt: skip
    monkeypatch.undo()
    assert index.state("acme", "watermark:sales_invoice") == "before"
    assert not [k for k in index.keys("acme") if k.endswith("-new")]
    assert corpus[10].key in index.keys("acme")


def test_backends_agree(tmp_path: Path, corpus: list[Document]) -> None:
    """Not a backend fixture: both at once, same corpus, same queries, same top results."""
    pytest.importorskip("psycopg")
    kb = Scope("acme", kinds=frozenset({Kind.KNOWLEDGE}))
    queries = [("ACC-SINV-2026-00123", Scope("acme")), ("ACC-SINV-2026-00150", Scope("acme")),
               ("how do I fix an invoice that was already posted", kb),
               ("who approves my leave", kb), ("year end retained earnings", kb)]  # fmt: skip
    lite = SQLiteIndex(tmp_path / "agree.sqlite")
    pg = postgres_index()
    try:
        lite.upsert(corpus)
        pg.upsert(corpus)
        for query, scope in queries:
            a, b = search(lite, query, scope, 3), search(pg, query, scope, 3)
            assert a[0] == b[0], (query, a, b)
    finally:
        pg.drop()
        pg.close()
        lite.close()


test_backends_agree = pytest.mark.postgres(test_backends_agree)


def test_unknown_identifier_is_not_or_ed_into_its_series(index: Index) -> None:
    """ "ACC-SINV-2026-99999" must not match every ACC-SINV-2026 card by its pieces."""
    assert index.keyword("ACC-SINV-2026-99999", Scope("acme"), 60) == []
    hits = index.keyword("Gulf Traders ACC-SINV-2026-99999", Scope("acme"), 60)
    assert hits
    assert {d.text.split(" to ")[1][:12] for d in index.fetch("acme", [k for k, _ in hits])} == {
        "Gulf Traders"
    }


def _bare(doc: Document, **changes: object) -> Document:
    """The document as the sync writes it: no vector yet."""
    return Document(**{**doc.__dict__, "embedding": None, **changes})


def test_keyword_only_documents_are_found_and_embedded_later(
    index: Index, corpus: list[Document]
) -> None:
    fresh = [
        _bare(d, key=f"{d.key}-late", record_id=f"LATE-2026-{i:05d}", text=f"{d.text} Late.")
        for i, d in enumerate(corpus[:30])
    ]
    index.upsert(fresh)
    assert index.pending_count("acme") == 30
    assert index.pending_count("other") == 0
    # Searchable by keyword at once, and by exact id, before any vector exists.
    assert search(index, "LATE-2026-00007", Scope("acme"))[0] == fresh[7].key
    assert fresh[3].key in [k for k, _ in index.keyword("late Gulf Traders", Scope("acme"), 60)]
    waiting = index.pending("acme", 20)
    rest = index.pending("acme", 20, after=waiting[-1].key)
    assert len(waiting) == 20
    assert len(rest) == 10
    assert {p.key for p in waiting + rest} == {d.key for d in fresh}
    assert all(p.text == d.text for p in waiting for d in fresh if d.key == p.key)
    vectors = default_embedder().embed([p.text for p in waiting + rest])
    # A card rewritten after it was read for embedding keeps waiting for its new text.
    index.upsert([_bare(fresh[0], text=fresh[0].text + " Rewritten.")])
    stored = index.store_vectors("acme", list(zip(waiting + rest, vectors, strict=True)))
    assert stored == 29
    assert index.pending_count("acme") == 1
    assert [p.key for p in index.pending("acme", 10)] == [fresh[0].key]
    vector = default_embedder().embed_one(fresh[5].text)
    assert fresh[5].key in [k for k, _ in index.dense(vector, Scope("acme"), 5)]


def test_an_unchanged_document_keeps_its_vector(index: Index, corpus: list[Document]) -> None:
    doc = corpus[2]
    index.upsert([_bare(doc)])  # same checksum: nothing written, the vector stays
    assert index.pending_count("acme") == 0
    moved = _bare(doc, branch="Nairobi" if doc.branch != "Nairobi" else "Kisumu")
    index.upsert([moved])  # a new branch, the same text: the vector stays, the scope moves
    assert index.pending_count("acme") == 0
    vector = doc.embedding
    assert vector is not None
    inside = Scope("acme", branches=frozenset({moved.branch or ""}))
    assert doc.key in [k for k, _ in index.dense(vector, inside, 3)]
    outside = Scope("acme", branches=frozenset({doc.branch or ""}))
    assert doc.key not in [k for k, _ in index.dense(vector, outside, 60)]
    index.upsert([_bare(doc, text=doc.text + " Amended.")])  # new text: keyword-only again
    assert index.pending_count("acme") == 1


@pytest.mark.parametrize(
    "query",
    [
        "invoice " * 1250,  # 10,000 characters
        "the of and to in is it",  # only stop words
        "?!.,;:()[]{}<>\"'*^-+/\\|~`@#$%&=",  # only punctuation
        "ACC-SINV-2062-00123",  # an id with a typo
        'NEAR(invoice gulf) OR "unbalanced AND -x*',  # query syntax of the engines
    ],
)
def test_bad_queries_are_fast_and_never_fail(index: Index, query: str) -> None:
    import time

    vector = default_embedder().embed_one(query)
    for scope in (Scope("acme"), Scope("acme", branches=frozenset()), Scope("nobody")):
        started = time.perf_counter()
        hits = index.search(query, vector, scope)
        assert time.perf_counter() - started < 1.0
        if scope.tenant == "nobody" or scope.branches == frozenset():
            assert all(h.doc.branch is None for h in hits)


def test_embedded_keyword_leg_forgives_slips_and_unknown_words(
    tmp_path: Path, corpus: list[Document]
) -> None:
    index = SQLiteIndex(tmp_path / "spell.sqlite")
    index.upsert(corpus)
    gulf = {d.key for d in corpus if " to Gulf Traders " in d.text}
    # A slip in the name: corrected to the word the index holds, so the AND still narrows.
    both = {d.key for d in corpus if d.key in gulf and d.branch == "Kisumu"}
    slipped = index.keyword("Gulf Tradres Kisumu", Scope("acme"), 60)
    strict = getattr(slipped, "strict", len(slipped))  # the hits holding every word
    assert {k for k, _ in slipped[:strict]} == both
    # A word no card holds ("sent") is dropped instead of making the AND match nothing.
    sent = index.keyword("the invoice we sent to Gulf Traders", Scope("acme"), 60)
    assert {k for k, _ in sent[: getattr(sent, "strict", 0)]} == gulf
    index.close()


def test_sqlite_reads_do_not_queue_behind_the_writer(tmp_path: Path) -> None:
    """Another thread's search reads on its own connection while the writer's lock is held
    (a long commit, the spelling model, the vectors): turns of one process search in parallel."""
    import concurrent.futures
    import threading

    index = SQLiteIndex(tmp_path / "index.sqlite")
    index.upsert(invoice_cards())
    scope = Scope("acme")
    key = invoice_cards()[0].key
    record_id = invoice_cards()[0].record_id or ""
    expected = (index.fetch("acme", [key]), index.exact([record_id], scope))
    held, release = threading.Event(), threading.Event()

    def writer() -> None:
        with index._lock:
            held.set()
            release.wait(10)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        pool.submit(writer)
        assert held.wait(5)
        reading = pool.submit(lambda: (index.fetch("acme", [key]), index.exact([record_id], scope)))
        try:
            found = reading.result(timeout=5)  # with one locked connection: a timeout
        finally:
            release.set()
    assert found == expected
    assert found[0][0].key == key
    index.close()
