"""The approximate dense leg under a scope: the embedded index's HNSW graph (faiss) and
PostgreSQL's HNSW (pgvector, iterative scan) never return a card outside the user's scope,
always fill k when the scope holds k cards, and find what an exact scan of the scope finds
(recall@10 against numpy over exactly the in-scope vectors).

The corpus is clustered like real embeddings (cards about the same party sit close together)
and large enough that the embedded index builds its graph (``exact_rows`` is lowered for it)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from retrieval_fixtures import postgres_index

from erp_agent.retrieval import _ann
from erp_agent.retrieval.documents import Document, Kind, Scope
from erp_agent.retrieval.embeddings import normalise
from erp_agent.retrieval.index import Index
from erp_agent.retrieval.index_sqlite import SQLiteIndex

N = 4_000
K = 60
BRANCHES = ["Nairobi", "Mombasa", "Kisumu", "Nakuru", "Eldoret", "Thika"]
SCOPES = {
    "tenant": Scope("acme"),
    "company + two branches": Scope(
        "acme", companies=frozenset({"Savanna Ltd"}), branches=frozenset({"Kisumu", "Mombasa"})
    ),
    "entity + half a year": Scope(
        "acme",
        entities=frozenset({"purchase_invoice"}),
        date_from=dt.date(2025, 1, 1),
        date_to=dt.date(2025, 6, 30),
    ),
    "one branch, one month": Scope(
        "acme",
        kinds=frozenset({Kind.RECORD}),
        branches=frozenset({"Thika"}),
        date_from=dt.date(2025, 3, 1),
        date_to=dt.date(2025, 3, 14),
    ),
}


def _corpus() -> tuple[list[Document], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    centres = normalise(rng.normal(size=(150, 384)))
    vectors = normalise(centres[rng.integers(0, 150, N)] + rng.normal(0, 0.04, (N, 384)))
    docs = []
    for i in range(N):
        record = f"ACC-{i:05d}"
        docs.append(
            Document(
                key=f"card:{record}", kind=Kind.RECORD, tenant="acme" if i % 5 else "other",
                title=record, text=f"card {record}",
                company=("Savanna Ltd", "Rift Ltd", None)[i % 3],
                branch=BRANCHES[i % 6] if i % 7 else None,
                entity=("sales_invoice", "purchase_invoice")[i % 2], record_id=record,
                date=dt.date(2025, 1, 1) + dt.timedelta(days=int(rng.integers(0, 365))),
            ).embedded(vectors[i])
        )  # fmt: skip
    queries = normalise(centres[rng.integers(0, 150, 25)] + rng.normal(0, 0.06, (25, 384)))
    return docs, vectors, queries


DOCS, VECTORS, QUERIES = _corpus()


def _exact(scope: Scope, query: np.ndarray, k: int) -> list[str]:
    inside = [i for i, d in enumerate(DOCS) if scope.matches(d)]
    scores = VECTORS[inside] @ query
    return [DOCS[inside[j]].key for j in np.argsort(-scores, kind="stable")[:k]]


def _check(index: Index) -> dict[str, float]:
    """Per scope: every hit in scope, k filled, recall@10 against the exact top 10."""
    by_key = {d.key: d for d in DOCS}
    recall: dict[str, float] = {}
    for name, scope in SCOPES.items():
        holds = sum(1 for d in DOCS if scope.matches(d))
        found = []
        for query in QUERIES:
            got = [key for key, _ in index.dense(query, scope, K)]
            outside = [key for key in got if not scope.matches(by_key[key])]
            assert not outside, f"{name}: cards outside the scope {outside[:3]}"
            assert len(got) == min(K, holds), f"{name}: {len(got)} of {min(K, holds)} rows"
            truth = _exact(scope, query, 10)
            found.append(len(set(got[:10]) & set(truth)) / len(truth))
        recall[name] = float(np.mean(found))
    return recall


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records, for every search that asked the graph, whether the graph answered."""
    answered: list[bool] = []
    search = _ann.Graph.search

    def spy(self: _ann.Graph, *args: object, **kwargs: object) -> object:
        result = search(self, *args, **kwargs)  # type: ignore[arg-type]
        answered.append(result is not None)
        return result

    monkeypatch.setattr(_ann.Graph, "search", spy)
    return answered


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[SQLiteIndex]:
    index = SQLiteIndex(tmp_path / "index.sqlite", exact_rows=500)
    index.upsert(DOCS)
    assert index.dense_ready(timeout=120), "the graph was not built"
    yield index
    index.close()


def test_the_embedded_graph_keeps_to_the_scope_and_matches_exact_search(
    embedded: SQLiteIndex, walks: list[bool]
) -> None:
    recall = _check(embedded)
    assert any(walks), "no search went through the graph"
    assert min(recall.values()) >= 0.95, recall


def test_a_narrow_scope_is_scanned_exactly_and_filled(
    embedded: SQLiteIndex, walks: list[bool]
) -> None:
    narrow = SCOPES["one branch, one month"]
    holds = sum(1 for d in DOCS if narrow.matches(d))
    assert 0 < holds < K  # fewer cards than asked for: every one of them, nothing else
    for query in QUERIES[:5]:
        got = [key for key, _ in embedded.dense(query, narrow, K)]
        assert got == _exact(narrow, query, K)
    assert not any(walks), "a scope this narrow is cheaper to scan than to walk"


def test_removed_and_rewritten_cards_leave_the_graph_without_a_rebuild(
    embedded: SQLiteIndex,
) -> None:
    dense = embedded._dense
    assert dense is not None
    graph = dense.graph
    assert graph is not None
    gone = [d.key for d in DOCS[:200]]
    embedded.delete("acme", gone)
    embedded.delete("other", gone)
    moved = [replace(d, branch="Kitale") for d in DOCS[200:300]]
    embedded.upsert(moved)
    kitale = Scope("acme", branches=frozenset({"Kitale"}))
    for query in QUERIES[:10]:
        got = {key for key, _ in embedded.dense(query, Scope("acme"), K)}
        assert not got & set(gone)
        in_kitale = {key for key, _ in embedded.dense(query, kitale, K)}
        # Cards without a branch are in every branch scope; the moved ones now in Kitale's.
        allowed = {d.key for d in moved} | {d.key for d in DOCS[300:] if d.branch is None}
        assert in_kitale <= allowed
        assert in_kitale & {d.key for d in moved}
    assert embedded._dense is dense, "reloaded for a few changes"
    assert dense.graph is graph, "rebuilt for a few changes"
    assert dense.dead == 300


@pytest.fixture
def scaled() -> Iterator[Index]:
    index = postgres_index()
    index.upsert(DOCS)
    yield index
    index.drop()  # type: ignore[attr-defined]
    index.close()


@pytest.mark.postgres
def test_pgvector_hnsw_keeps_to_the_scope_and_matches_exact_search(scaled: Index) -> None:
    recall = _check(scaled)
    assert min(recall.values()) >= 0.95, recall


@pytest.mark.postgres
def test_one_statement_search_uses_the_hnsw_and_gin_indexes(scaled: Index) -> None:
    from erp_agent.retrieval.index_postgres import PostgresIndex

    assert isinstance(scaled, PostgresIndex)
    with scaled._connection() as db:  # what autovacuum does after a bulk load
        db.execute(f"ANALYZE {scaled.prefix}_docs")
    # (A scope of a few hundred cards is sorted exactly: the planner's choice, and cheaper.)
    scope = SCOPES["tenant"]
    plan = scaled.explain("card ACC-00042", QUERIES[0], scope)
    assert f"{scaled.prefix}_hnsw" in plan, plan
    assert f"{scaled.prefix}_tsv" in plan, plan
    hits = scaled.search("card ACC-00042", QUERIES[0], scope)
    assert hits
    assert all(scope.matches(h.doc) for h in hits)


@pytest.mark.postgres
def test_pgvector_scans_a_narrow_scope_exactly(
    scaled: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One branch and ten days (20 of the 4,000 cards): the dense leg, alone and in the one
    statement, is an exact scan of just those cards through the scope's B-tree indexes, never
    the HNSW graph, and returns exactly the numpy brute force's in-scope top 10. The same
    comparison fails for a scope filter that lets the window's later cards in."""
    from erp_agent.retrieval import _sql
    from erp_agent.retrieval.index_postgres import PostgresIndex

    assert isinstance(scaled, PostgresIndex)
    with scaled._connection() as db:
        db.execute(f"ANALYZE {scaled.prefix}_docs")
        # A generic plan would ignore how narrow each scope is (see _pg_connections.configure).
        assert db.execute("SHOW plan_cache_mode").fetchone() == {
            "plan_cache_mode": "force_custom_plan"
        }
    narrow = Scope(
        "acme",
        kinds=frozenset({Kind.RECORD}),
        branches=frozenset({"Thika"}),
        date_from=dt.date(2025, 3, 1),
        date_to=dt.date(2025, 3, 11),
    )
    assert 10 < sum(1 for d in DOCS if narrow.matches(d)) < 30
    assert scaled._exact_cap(narrow, 10) is not None, "not taken for a narrow scope"

    def agrees() -> bool:
        return all(
            [key for key, _ in scaled.dense(query, narrow, 10)] == _exact(narrow, query, 10)
            for query in QUERIES
        )

    def keeps_to_it() -> bool:
        """Both legs of the one statement: "card" is in every card, so a keyword leg (which
        here may use the scope indexes) letting other cards in would show among the hits."""
        hits = scaled.search("card", QUERIES[0], narrow, limit=40)
        return bool(hits) and all(narrow.matches(h.doc) for h in hits)

    assert agrees()
    assert keeps_to_it()
    for query in QUERIES[:5]:  # the vector-only hybrid ranks by the dense leg alone
        hits = scaled.search("", query, narrow, limit=10)
        assert [h.doc.key for h in hits] == _exact(narrow, query, 10)
    plan = scaled.explain("", QUERIES[0], narrow)
    assert f"{scaled.prefix}_scope_" in plan, plan
    walked = [line for line in plan.splitlines() if f"{scaled.prefix}_hnsw" in line]
    assert all("never executed" in line for line in walked), plan

    scope_where = _sql.scope_where

    def leaky(scope: Scope, *args: Any) -> str:
        return scope_where(replace(scope, date_to=None), *args)

    monkeypatch.setattr(_sql, "scope_where", leaky)
    assert not agrees(), "a scope filter letting later cards in went unnoticed"
    assert not keeps_to_it(), "a keyword leg letting later cards in went unnoticed"


@pytest.mark.postgres
def test_pgvector_exact_path_falls_back_when_the_estimate_was_wrong(
    scaled: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope the estimate called narrow but holding more rows than the exact path reads
    (here: every card of the tenant) is answered inside the same statement by the ordered
    scan instead, still complete and inside the scope, never a truncated exact scan."""
    from erp_agent.retrieval import index_postgres
    from erp_agent.retrieval.index_postgres import PostgresIndex

    assert isinstance(scaled, PostgresIndex)
    monkeypatch.setattr(index_postgres, "EXACT_MIN", 5)
    monkeypatch.setattr(scaled, "_estimate", lambda scope: 0.0)
    scope = SCOPES["company + two branches"]
    cap = scaled._exact_cap(scope, K)
    assert cap is not None
    assert cap < sum(1 for d in DOCS if scope.matches(d))
    by_key = {d.key: d for d in DOCS}
    found = []
    for query in QUERIES:
        got = [key for key, _ in scaled.dense(query, scope, K)]
        assert len(got) == K
        assert all(scope.matches(by_key[key]) for key in got)
        truth = _exact(scope, query, 10)
        found.append(len(set(got[:10]) & set(truth)) / 10)
    assert np.mean(found) >= 0.95, found
