"""Retrieval figures: index build rate, hybrid query latency with scope filters (SQLite at 100k
cards, PostgreSQL + pgvector at 1M), and recall@10 of hybrid vs dense-only vs keyword-only on a
labelled query set built from the demo ERP's own records.

Every latency is printed beside its anchor measured in the same run on the same data (SQLite:
a plain numpy brute-force top-10 over the same vectors; PostgreSQL: pgvector's plain KNN), with
the machine's load average: compare the ratios, not absolute numbers across runs. The SQLite
section also prints the HNSW graph's build and incremental-update times and the dense leg's
recall against an exact scan of the same scope, beside what filtering an unscoped top-k
afterwards would have found; the PostgreSQL section prints EXPLAIN ANALYZE of the one-statement
hybrid search (which indexes it used). Scopes: the tenant alone, tenant + two branches + a year
(~16 % of the cards), and one branch + one month (~0.7 %: the PostgreSQL dense leg scans such a
scope exactly through its B-tree indexes instead of walking the HNSW graph).

Vectors for the large corpora are NOT all real embeddings (embedding 1M cards on 2 cores takes
hours): a few thousand distinct cards are embedded for real, and every synthetic card gets its
base card's vector plus Gaussian noise (sigma --noise), re-normalised. Recall is measured on
real embeddings only.

    uv run python benchmarks/retrieval.py [--sqlite-n 100000] [--pg-n 1000000] [--no-pg]

PostgreSQL comes from ERP_AGENT_TEST_PG (default: the CI cluster's app database). A 1M build
takes ~15 minutes of both cores: build once with ``--only pg --keep-pg`` (a database of its
own per size keeps 200k and 1M side by side), then measure with ``--only pg-latency``, which
reuses the kept tables. Each scope's hybrid is printed beside two anchors: pgvector's plain KNN
top-10 without a scope (the issue's anchor) and with the same scope in its WHERE (iterative
scan), so a scoped search is also compared with the plain KNN that answers the same question.
The line before the figures gives ``shared_buffers`` beside the index's size (see
docs/deployment.md); ``pg_prewarm``, when present in the database, reads the index into it first.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
from _common import load_line, percentile

from erp_agent.retrieval.documents import Document, Kind, Scope
from erp_agent.retrieval.embeddings import Vectors, default_embedder, normalise
from erp_agent.retrieval.index import Index
from erp_agent.retrieval.index_sqlite import SQLiteIndex

CACHE = Path(os.environ.get("BENCH_CACHE", ".bench-cache"))  # real base vectors, kept corpora
BRANCHES = ["Nairobi", "Mombasa", "Kisumu", "Nakuru", "Eldoret", "Thika"]
STATUSES = ["Unpaid", "Overdue", "Paid", "Partly Paid"]
FIRST = [
    "Gulf",
    "Lakeside",
    "Rift",
    "Acme",
    "Savanna",
    "Coast",
    "Highland",
    "Baobab",
    "Kilima",
    "Jua",
    "Mto",
    "Simba",
    "Tembo",
    "Nyota",
    "Upepo",
    "Zawadi",
    "Amani",
    "Bahari",
]
SECOND = ["Traders", "Foods", "Motors", "Hardware", "Agro", "Textiles", "Pharma", "Logistics",
          "Builders", "Electricals", "Supplies", "Dairies", "Bakers", "Printers"]  # fmt: skip
QUERIES = [
    "overdue invoices for Gulf Traders in Mombasa", "unpaid bills of a hardware shop",
    "invoice for Simba Logistics due in March", "partly paid invoices Kisumu branch",
    "which textile customers still owe money", "Baobab Dairies invoice status",
    "large invoice to a pharma company", "Amani Builders outstanding balance",
]  # fmt: skip


def card_text(i: int, rng: random.Random) -> tuple[str, dict[str, object]]:
    customer = f"{rng.choice(FIRST)} {rng.choice(SECOND)}"
    branch = rng.choice(BRANCHES)
    date = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(700))
    total = rng.randrange(1_000, 900_000) + rng.randrange(100) / 100
    outstanding = round(total * rng.choice([0, 0.25, 0.5, 1]), 2)
    status = rng.choice(STATUSES)
    record_id = f"ACC-SINV-{date.year}-{i:07d}"
    text = (
        f"Sales Invoice {record_id} to {customer} ({branch}) dated {date}: total KES {total:,.2f}, "
        f"outstanding KES {outstanding:,.2f}, status {status}, due {date + dt.timedelta(30)}."
    )
    meta = {"record_id": record_id, "branch": branch, "date": date, "customer": customer}
    return text, meta


def synthetic(n: int, base: int, noise: float, seed: int = 7) -> Iterator[tuple[Document, Vectors]]:
    """n cards in two tenants; vectors derived from ``base`` real embeddings (see module doc)."""
    rng = random.Random(seed)
    texts = [card_text(i, random.Random(i))[0] for i in range(base)]
    cached = CACHE / f"base-{base}.npy"
    if cached.exists():
        real = np.load(cached)
    else:
        started = time.perf_counter()
        real = default_embedder().embed(texts)
        print(f"  embedded {base} base cards for real in {time.perf_counter() - started:.1f} s")
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(cached, real)
    nrng = np.random.default_rng(seed)
    for start in range(0, n, 10_000):
        count = min(10_000, n - start)
        picks = nrng.integers(0, base, count)
        vecs = normalise(real[picks] + nrng.normal(0, noise, (count, real.shape[1])))
        for j in range(count):
            i = start + j
            text, meta = card_text(i, rng)
            doc = Document(
                key=f"sales_invoice:{meta['record_id']}", kind=Kind.RECORD,
                tenant="acme" if i % 10 else "other", title=f"Sales Invoice {meta['record_id']}",
                text=text, company="Savanna Trading Ltd", branch=str(meta["branch"]),
                entity="sales_invoice", record_id=str(meta["record_id"]),
                date=meta["date"],  # type: ignore[arg-type]
                module="accounting", parent="sales_invoice",
            )  # fmt: skip
            yield doc, vecs[j]


SCOPED = Scope("acme", kinds=frozenset({Kind.RECORD}), branches=frozenset({"Mombasa", "Kisumu"}),
               date_from=dt.date(2025, 6, 1), date_to=dt.date(2026, 5, 31))  # fmt: skip
# ~0.7 % of the cards (1,391 of 200k): PostgreSQL scans these exactly instead of walking HNSW.
NARROW = Scope("acme", kinds=frozenset({Kind.RECORD}), branches=frozenset({"Thika"}),
               date_from=dt.date(2025, 3, 1), date_to=dt.date(2025, 3, 31))  # fmt: skip
LATENCY_SCOPES = (("tenant only", Scope("acme")), ("tenant+branches+dates", SCOPED),
                  ("one branch, one month", NARROW))  # fmt: skip


def latency(
    index: Index,
    n_label: str,
    anchor: tuple[str, Callable[[Vectors], object]],
    scoped_anchor: Callable[[Scope], Callable[[Vectors], object]] | None = None,
) -> dict[str, list[float]]:
    """Hybrid p50/p95 without and with scope, each leg alone, and the anchor (numpy brute force
    for SQLite, pgvector's plain KNN for PostgreSQL) on the same data, interleaved with them.
    ``scoped_anchor``: the anchor with each scope's filter too (PostgreSQL: pgvector's plain
    KNN, the scope in its WHERE, filled by the iterative scan), timed beside each scope."""
    emb = default_embedder()
    qvecs = emb.embed(QUERIES)
    ids = [f"ACC-SINV-2025-{i:07d}" for i in range(50, 5000, 613)]
    work = [*zip(QUERIES, qvecs, strict=True), *((rid, qvecs[0]) for rid in ids)]

    def timed(fn: Callable[[str, Vectors], object]) -> list[float]:
        for q, v in work[:3]:  # warm-up (vector cache load, plans)
            fn(q, v)
        samples = []
        for _ in range(3):
            for q, v in work:
                t = time.perf_counter()
                fn(q, v)
                samples.append((time.perf_counter() - t) * 1000)
        return samples

    def show(label: str, ms: list[float]) -> list[float]:
        print(f"  {n_label} {label:38s}: p50 {statistics.median(ms):7.1f} ms  "
              f"p95 {percentile(ms, 95):7.1f} ms  (n={len(ms)})")  # fmt: skip
        return ms

    out: dict[str, list[float]] = {}
    name, knn = anchor
    out["anchor"] = show(f"ANCHOR {name}", timed(lambda q, v: knn(v)))
    for label, scope in LATENCY_SCOPES:
        if scoped_anchor is not None and scope != Scope("acme"):
            knn_scoped = scoped_anchor(scope)
            out[f"anchor {label}"] = show(
                f"ANCHOR {name}, {label}", timed(lambda q, v, f=knn_scoped: f(v))
            )
        out[label] = show(f"hybrid, {label}", timed(lambda q, v, s=scope: index.search(q, v, s)))
        show(f"  dense leg, {label}", timed(lambda q, v, s=scope: index.dense(v, s, 60)))
        show(f"  keyword leg, {label}", timed(lambda q, v, s=scope: index.keyword(q, s, 60)))
    out["anchor again"] = show(f"ANCHOR {name} (again)", timed(lambda q, v: knn(v)))
    anchor_p = [percentile(out["anchor"] + out["anchor again"], p) for p in (50, 95)]
    for label, _ in LATENCY_SCOPES:
        ms = out[label]
        print(f"  {n_label} hybrid {label} / anchor: p50 {statistics.median(ms) / anchor_p[0]:.2f}x"
              f"  p95 {percentile(ms, 95) / anchor_p[1]:.2f}x")  # fmt: skip
        same = out.get(f"anchor {label}")
        if same:
            print(f"  {n_label} hybrid {label} / anchor with the same scope: p50 "
                  f"{statistics.median(ms) / statistics.median(same):.2f}x  p95 "
                  f"{percentile(ms, 95) / percentile(same, 95):.2f}x")  # fmt: skip
    t = time.perf_counter()
    for q in QUERIES:
        emb.embed_one(q)
    print(f"  query embedding alone: {(time.perf_counter() - t) / len(QUERIES) * 1000:.1f} ms/query"
          f" (not included above); {load_line()}")  # fmt: skip
    return out


def numpy_knn(matrix: Vectors) -> Callable[[Vectors], object]:
    """The anchor: a plain exact top-10 over every vector, no scope."""

    def knn(vector: Vectors) -> object:
        scores = matrix @ vector
        best = np.argpartition(-scores, 9)[:10]
        return best[np.argsort(-scores[best])]

    return knn


def pg_knn(dsn: str, k: int = 10, scope: Scope | None = None) -> Callable[[Vectors], object]:
    """pgvector's plain KNN (ef_search 100): no scope, or ``scope`` in its WHERE with the
    iterative scan filling k rows (relaxed order, as pgvector's docs show for filtering), planned
    by PostgreSQL as it likes (the graph, or the scope's rows sorted)."""
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg import sql

    from erp_agent.retrieval import _pg_search

    conn = psycopg.connect(dsn, autocommit=True)
    register_vector(conn)
    conn.execute("SET hnsw.ef_search = 100")
    params: dict[str, object] = {"k": k}
    where: sql.Composable = sql.SQL("true")
    if scope is not None:
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.execute("SET plan_cache_mode = force_custom_plan")
        where = _pg_search.scope_sql(scope, params)
    query = sql.SQL(
        "SELECT d.key FROM bench_docs d WHERE {} ORDER BY d.embedding <=> %(v)s LIMIT %(k)s"
    ).format(where)

    def knn(vector: Vectors) -> object:
        return conn.execute(query, {**params, "v": vector}).fetchall()

    return knn


def pg_warm(dsn: str) -> None:
    """PostgreSQL's buffer cache beside the index's size (see docs/deployment.md: at 1M cards the
    pages a search reads come from the OS cache, ~4 us each, unless ``shared_buffers`` holds the
    index), and the index read into it (``pg_prewarm``, when a superuser created it in this
    database), so every figure is a warm server's, the anchor's too."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT current_setting('shared_buffers'), pg_total_relation_size('bench_docs'), "
            "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm')"
        ).fetchone()
        assert row is not None
        buffers, size, prewarm = row
        warmed = ""
        if prewarm:
            t = time.perf_counter()
            conn.execute(
                "SELECT pg_prewarm(c.oid) FROM pg_class c WHERE c.relname LIKE 'bench%' "
                "AND c.relkind IN ('r', 'i')"
            )
            warmed = f"; tables and indexes read into it by pg_prewarm in {time.perf_counter() - t:.1f} s"
        print(
            f"  shared_buffers {buffers}, the index {size / 2**30:.2f} GB{warmed or '; not prewarmed'}"
        )


def pg_report(index: object, out: dict[str, list[float]], dsn: str) -> None:
    """The goal (hybrid within 2x plain KNN, p95), plain KNN at the dense leg's depth (60) for
    context, and the plan of a hybrid search with and without scope."""
    from erp_agent.retrieval.index_postgres import PostgresIndex

    assert isinstance(index, PostgresIndex)
    knn95 = percentile(out["anchor"] + out["anchor again"], 95)
    for label, _ in LATENCY_SCOPES:
        ratio = percentile(out[label], 95) / knn95
        print(f"  GOAL hybrid ({label}) p95 <= 2x plain KNN p95 (unscoped top-10): {ratio:.2f}x "
              f"{'met' if ratio <= 2 else 'NOT met'}")  # fmt: skip
        same = out.get(f"anchor {label}")
        if same:
            ratio = percentile(out[label], 95) / percentile(same, 95)
            print(f"  GOAL hybrid ({label}) p95 <= 2x plain KNN p95 with the same scope: "
                  f"{ratio:.2f}x {'met' if ratio <= 2 else 'NOT met'}")  # fmt: skip
    vectors = default_embedder().embed(QUERIES)
    knn60 = pg_knn(dsn, 60)
    ms = []
    for _ in range(3):
        for v in vectors:
            t = time.perf_counter()
            knn60(v)
            ms.append((time.perf_counter() - t) * 1000)
    print(f"  (context) plain KNN top-60, the dense leg's depth: p50 {statistics.median(ms):.1f} ms"
          f"  p95 {percentile(ms, 95):.1f} ms; {load_line()}")  # fmt: skip
    vector = vectors[0]
    for label, scope in LATENCY_SCOPES:
        plan = index.explain(QUERIES[0], vector, scope)
        print(f"  EXPLAIN ANALYZE, hybrid {label!r} (scans only; one statement):")
        lines = plan.splitlines()
        for i, line in enumerate(lines):
            if "bench_" in line and ("Scan" in line or "Scan on" in line):
                print("    " + line.split(" (actual")[0].strip() + "  " + _actual(line))
                for detail in lines[i + 1 : i + 5]:
                    if "Rows Removed by Filter" in detail or detail.strip().startswith("Buffers"):
                        print("        " + detail.strip())
            elif line.startswith(("Planning Time", "Execution Time")):
                print("    " + line)


def pg_quality(index: object, dsn: str) -> None:
    """What the speed must not cost, per scope: recall@10 of the dense leg (the one statement's
    ``nearest``) against an exact scan of the same scope, that no card comes from outside the
    scope, and hit@1 of a hybrid search for an in-scope card's exact record id."""
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg import sql

    from erp_agent.retrieval import _pg_search
    from erp_agent.retrieval.index_postgres import PostgresIndex

    assert isinstance(index, PostgresIndex)
    vectors = default_embedder().embed(QUERIES)
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        for label, scope in LATENCY_SCOPES:
            params: dict[str, object] = {}
            where = _pg_search.scope_sql(scope, params)
            # "+ 0": an expression the HNSW index cannot serve, so every in-scope row is scored.
            exact = sql.SQL(
                "SELECT d.key, (d.embedding <=> %(v)s) + 0 AS distance FROM bench_docs d "
                "WHERE {} AND d.embedding IS NOT NULL ORDER BY 2, d.key LIMIT 10"
            ).format(where)
            inside = sql.SQL("SELECT count(*) FROM bench_docs d WHERE {} AND d.key = ANY(%(keys)s)")
            recall, near, outside = [], [], 0
            for v in vectors:
                rows = conn.execute(exact, {**params, "v": v}).fetchall()
                truth, tenth = {r[0] for r in rows}, max((r[1] for r in rows), default=0.0)
                found = index.dense(v, scope, 60)
                got = [key for key, _ in found]
                row = conn.execute(inside.format(where), {**params, "keys": got}).fetchone()
                outside += len(got) - (row[0] if row else 0)
                recall.append(len(set(got[:10]) & truth) / max(1, len(truth)))
                # The synthetic cards are a few thousand real vectors plus noise: hundreds sit
                # about equally near a query, so also count a hit as near as the exact 10th.
                near.append(sum(1 - s <= tenth + 1e-6 for _, s in found[:10]) / max(1, len(rows)))
            sample = sql.SQL(
                "SELECT d.record_id FROM bench_docs d WHERE {} AND hashtext(d.key) %% 97 = 3 LIMIT 10"
            ).format(where)
            rids = [r[0] for r in conn.execute(sample, params).fetchall()]
            hit1 = [
                bool(hits) and hits[0].doc.record_id == rid
                for rid in rids
                for hits in [index.search(rid, vectors[0], scope)]
            ]
            print(f"  quality, {label}: dense recall@10 {statistics.mean(recall):.3f} by key, "
                  f"{statistics.mean(near):.3f} by distance ({len(vectors)} queries, exact scan "
                  f"of the scope as truth), outside the scope {outside}, exact-id hit@1 "
                  f"{statistics.mean(hit1):.3f} ({len(rids)} ids)")  # fmt: skip
        # The anchor's own recall on the same data: pgvector's plain KNN, no scope.
        plain, plain_near = [], []
        for v in vectors:
            rows = conn.execute(
                "SELECT key, (embedding <=> %s) + 0 FROM bench_docs ORDER BY 2, key LIMIT 10", (v,)
            ).fetchall()
            conn.execute("SET hnsw.ef_search = 100")
            got = conn.execute(
                "SELECT key, embedding <=> %s FROM bench_docs ORDER BY 2 LIMIT 10", (v,)
            ).fetchall()
            tenth = max(r[1] for r in rows)
            plain.append(len({r[0] for r in got} & {r[0] for r in rows}) / 10)
            plain_near.append(sum(r[1] <= tenth + 1e-6 for r in got) / 10)
        print(f"  quality, ANCHOR plain KNN (ef_search 100, no scope): recall@10 "
              f"{statistics.mean(plain):.3f} by key, {statistics.mean(plain_near):.3f} by distance")  # fmt: skip


def _actual(line: str) -> str:
    if "never executed" in line:  # already says so: the strategy the statement did not take
        return ""
    return "(" + line.split("(actual", 1)[1].strip() if "(actual" in line else ""


def pg_size(dsn: str, n: int) -> None:
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT pg_total_relation_size('bench_docs'), pg_relation_size('bench_hnsw'), "
            "pg_relation_size('bench_tsv'), (SELECT count(*) FROM bench_docs)"
        ).fetchone()
    assert row is not None
    total, hnsw, gin, rows = row
    per = 100_000 / max(rows, 1) / 2**20
    print(
        f"  size per 100k cards: {total * per:,.0f} MB in all (HNSW {hnsw * per:,.0f} MB, "
        f"GIN {gin * per:,.0f} MB); {rows:,} rows"
    )


def bench_build(folder: Path) -> None:
    print("\n## Index build rate")
    rng = random.Random(1)
    cards = [card_text(i, rng) for i in range(1000)]
    docs = [Document(key=f"k{i}", kind=Kind.RECORD, tenant="acme", title="t", text=t,
                     branch=str(m["branch"]), entity="sales_invoice", record_id=str(m["record_id"]))
            for i, (t, m) in enumerate(cards)]  # fmt: skip
    emb = default_embedder()
    emb.embed(["warm up"])
    t = time.perf_counter()
    vecs = emb.embed([d.text for d in docs])
    embed_s = time.perf_counter() - t
    index = SQLiteIndex(folder / "build.sqlite")
    t = time.perf_counter()
    index.upsert([d.embedded(v) for d, v in zip(docs, vecs, strict=True)])
    write_s = time.perf_counter() - t
    index.close()
    print(f"  embedding (MiniLM int8 ONNX): {len(docs) / embed_s:8.0f} cards/s")
    print(f"  SQLite write (FTS5 + vectors), no embedding: {len(docs) / write_s:8.0f} cards/s")
    print(f"  end to end with embeddings: {len(docs) / (embed_s + write_s):8.0f} cards/s")


def bench_sqlite(folder: Path, n: int, base: int, noise: float) -> None:
    print(f"\n## SQLite, {n:,} cards (FTS5 + numpy vectors + faiss HNSW); {load_line()}")
    path = CACHE / f"sqlite-{n}-{base}-{noise}.sqlite"
    fresh = not path.exists()
    CACHE.mkdir(parents=True, exist_ok=True)
    index = SQLiteIndex(path)
    t = time.perf_counter()
    if fresh:
        batch: list[Document] = []
        for doc, vec in synthetic(n, base, noise):
            batch.append(doc.embedded(vec))
            if len(batch) == 5000:
                index.upsert(batch)
                batch = []
        index.upsert(batch)
        print(f"  loaded in {time.perf_counter() - t:.1f} s (incl. generating cards)")
    t = time.perf_counter()
    index.dense(np.ones(384, dtype=np.float32) / np.sqrt(384), Scope("acme"), 1)
    print(f"  first vector load into RAM: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    assert index.dense_ready(), "the HNSW graph failed to build"
    dense = index._dense
    assert dense is not None
    graph = dense.graph
    if graph is not None:
        print(f"  HNSW graph build (background, 1 thread; searches exact meanwhile): "
              f"{time.perf_counter() - t:.1f} s for {graph.covered:,} vectors; {load_line()}")  # fmt: skip
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    print(
        f"  per 100k cards: file {size * 1e5 / n / 2**20:,.0f} MB, vectors in RAM "
        f"{dense.matrix.nbytes * 1e5 / n / 2**20:,.0f} MB (+ the graph's copy)"
    )
    incremental(index)
    ann_recall(index, base)
    latency(index, f"SQLite {n // 1000}k", ("numpy brute-force top-10", numpy_knn(dense.matrix)))
    index.close()


def incremental(index: SQLiteIndex) -> None:
    """1,000 new cards with vectors: the write, the time until the graph holds them (searches
    score them exactly until then), and their removal."""
    rng = random.Random(99)
    docs = []
    for i in range(1000):
        text, meta = card_text(10_000_000 + i, rng)
        vec = normalise(np.random.default_rng(i).normal(size=(1, 384)))[0]
        docs.append(Document(key=f"bench-new:{i}", kind=Kind.RECORD, tenant="acme", title="new",
                             text=text, branch=str(meta["branch"]), entity="sales_invoice",
                             record_id=f"NEW-{i}").embedded(vec))  # fmt: skip
    t = time.perf_counter()
    index.upsert(docs)
    write = time.perf_counter() - t
    t = time.perf_counter()
    index.dense(docs[0].embedding, Scope("acme"), 10)  # the search that picks them up
    first = time.perf_counter() - t
    t = time.perf_counter()
    index.dense_ready()
    graph = time.perf_counter() - t
    index.delete("acme", [d.key for d in docs])
    t = time.perf_counter()
    index.dense(docs[0].embedding, Scope("acme"), 10)
    removed = time.perf_counter() - t
    print(f"  incremental update, 1,000 cards: written in {write:.2f} s; the next search "
          f"{first * 1000:.0f} ms (loads them); in the graph {graph:.2f} s later (background); "
          f"removed again: next search {removed * 1000:.0f} ms (marks them dead, no rebuild)")  # fmt: skip


def ann_recall(index: SQLiteIndex, base: int) -> None:
    """The dense leg (graph, scope inside the walk) against an exact scan of the same scope,
    and what post-filtering an unscoped graph top-200 would have kept."""
    dense = index._dense
    assert dense is not None
    graph = dense.graph
    real = np.load(CACHE / f"base-{base}.npy")
    rng = np.random.default_rng(5)
    queries = normalise(real[rng.integers(0, len(real), 40)] + rng.normal(0, 0.05, (40, 384)))
    narrow = replace(NARROW, kinds=None)
    print("  dense leg vs an exact scan of the same scope (40 queries, k=60):")
    for label, scope in (("tenant only", Scope("acme")), ("tenant+branches+dates", SCOPED),
                         ("one branch, one month", narrow)):  # fmt: skip
        mask = dense.mask(scope)
        where = np.flatnonzero(mask)
        r10, r60, post10, outside, ms = [], [], [], 0, []
        inside = {dense.keys[i] for i in where}
        for q in queries:
            exact = where[np.argsort(-(dense.matrix[where] @ q), kind="stable")[:60]]
            truth = {dense.keys[i] for i in exact}
            t = time.perf_counter()
            got = [k for k, _ in index.dense(q, scope, 60)]
            ms.append((time.perf_counter() - t) * 1000)
            outside += sum(1 for k in got if k not in inside)
            top10 = {dense.keys[i] for i in exact[:10]}
            r10.append(len(set(got[:10]) & top10) / 10)
            r60.append(len(set(got) & truth) / len(truth))
            if graph is not None:
                _, rows = graph._index.search(q.reshape(1, -1).astype(np.float32), 200)
                kept = [dense.keys[r] for r in rows[0] if r >= 0 and mask[r]][:10]
                post10.append(len(set(kept) & top10) / 10)
        post = (
            f"; post-filtering an unscoped top-200: recall@10 {np.mean(post10):.3f}"
            if post10
            else ""
        )
        print(f"    {label:24s} {len(where):7,} in scope: recall@10 {np.mean(r10):.3f}, "
              f"@60 {np.mean(r60):.3f}, outside the scope {outside}, p50 "
              f"{statistics.median(ms):.2f} ms{post}")  # fmt: skip


def bench_postgres(dsn: str, n: int, base: int, noise: float, *, keep: bool = False) -> None:
    import psycopg

    from erp_agent.retrieval import _sql
    from erp_agent.retrieval.index_postgres import PostgresIndex

    print(f"\n## PostgreSQL + pgvector, {n:,} cards (tsvector/GIN + HNSW); {load_line()}")
    index = PostgresIndex(dsn, prefix="bench")
    index.drop()
    index = PostgresIndex(dsn, prefix="bench")
    with psycopg.connect(dsn, autocommit=True) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        conn.execute("DROP INDEX IF EXISTS bench_hnsw; DROP INDEX IF EXISTS bench_tsv")
        cols = [*_sql.COLUMNS, "ident", "ids", "embedding"]
        t = time.perf_counter()
        with (
            conn.cursor() as cur,
            cur.copy(
                f"COPY bench_docs ({', '.join(cols)}) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(
                ["text"] * 9 + ["date", "text", "text", "text", "jsonb", "text", "text", "vector"]
            )
            for doc, vec in synthetic(n, base, noise):
                row = _sql.row_values(doc)
                copy.write_row([*(row[c] if c != "date" else doc.date for c in cols[:-1]), vec])
        load = time.perf_counter() - t
        print(
            f"  COPY {n:,} rows (incl. generated tsvector): {load:.0f} s = {n / load:,.0f} rows/s"
        )
        conn.execute("SET maintenance_work_mem = '3GB'")  # the 1M-vector graph fits in memory
        conn.execute("SET max_parallel_maintenance_workers = 1")
        t = time.perf_counter()
        conn.execute("CREATE INDEX bench_tsv ON bench_docs USING gin (tsv)")
        print(f"  GIN build: {time.perf_counter() - t:.0f} s")
        t = time.perf_counter()
        conn.execute("CREATE INDEX bench_hnsw ON bench_docs USING hnsw (embedding vector_cosine_ops) "
                     "WITH (m = 16, ef_construction = 64)")  # fmt: skip
        print(f"  HNSW build: {time.perf_counter() - t:.0f} s")
        conn.execute("ANALYZE bench_docs")
    pg_warm(dsn)
    out = latency(
        index,
        f"PostgreSQL {n // 1000}k",
        ("pgvector plain KNN top-10", pg_knn(dsn)),
        lambda scope: pg_knn(dsn, scope=scope),
    )
    pg_report(index, out, dsn)
    pg_quality(index, dsn)
    pg_size(dsn, n)
    if not keep:
        index.drop()  # ~2 GB per million cards
    index.close()


async def labelled_recall(folder: Path) -> None:
    """Cards of the demo ERP (synced for real), queries whose right answers are known from the
    records themselves."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from demo_erp.context import Settings
    from demo_erp.seed import seed
    from demo_erp.server import start_in_thread
    from erp_agent.catalog import load_catalog
    from erp_agent.connectors.frappe.connector import ERPNextConnector
    from erp_agent.retrieval.sync import RecordSync

    print("\n## recall@10 on a labelled set from the demo ERP (real embeddings)")
    today = dt.date(2026, 11, 30)
    path = folder / "demo.sqlite"
    seed(path, today=today, scale=0.1)
    server = start_in_thread(Settings(db_path=str(path), version=15, today=today))
    index = SQLiteIndex(folder / "recall.sqlite")
    connector = ERPNextConnector(server.url)
    try:
        cred = await connector.login("admin@demo.local", "demo")
        entities = ["sales_invoice", "purchase_invoice", "customer", "supplier"]
        t = time.perf_counter()
        report = await RecordSync(connector, load_catalog(), index, default_embedder(), cred).sync(
            entities
        )
        print(f"  synced {report.upserted} cards with embeddings in {time.perf_counter() - t:.1f} s "
              f"= {report.upserted / (time.perf_counter() - t):.0f} cards/s end to end")  # fmt: skip
        docs = index.fetch("default", index.keys("default"))
    finally:
        await connector.aclose()
        server.stop()
    rng = random.Random(3)
    invoices = [d for d in docs if d.entity == "sales_invoice"]
    bills = [d for d in docs if d.entity == "purchase_invoice"]
    labelled: list[tuple[str, str, set[str]]] = []
    for d in rng.sample(invoices, 15) + rng.sample(bills, 10):
        labelled.append(("exact id", d.record_id or "", {d.key}))
    for d in rng.sample(invoices, 15):
        who = d.text.split(" to ", 1)[1].split(" (", 1)[0]
        rel = {x.key for x in invoices if f" to {who} ({d.branch})" in x.text}
        labelled.append(("party + branch", f"invoices to {who} at the {d.branch} branch", rel))
    for d in rng.sample(invoices, 15):
        who = d.text.split(" to ", 1)[1].split(" (", 1)[0]
        rel = {x.key for x in invoices if f" to {who} " in x.text and "status Overdue" in x.text}
        if rel:
            labelled.append(("paraphrase", f"bills {who} has not paid on time", rel))
    for d in rng.sample([x for x in docs if x.entity == "customer"], 10):
        labelled.append(("master by name", f"details of customer {d.record_id}", {d.key}))
    emb = default_embedder()
    print(f"  {len(docs)} cards, {len(labelled)} labelled queries")
    scope = Scope("default")
    rows: dict[str, dict[str, list[float]]] = {}
    for family, query, rel in labelled:
        vec = emb.embed_one(query)
        runs = {
            "hybrid": [h.doc.key for h in index.search(query, vec, scope, limit=10)],
            "dense only": [k for k, _ in index.dense(vec, scope, 10)],
            "keyword only": [k for k, _ in index.keyword(query, scope, 10)],
        }
        for name, got in runs.items():
            recall = len(set(got) & rel) / min(10, len(rel))
            rows.setdefault(name, {}).setdefault(family, []).append(recall)
            rows[name].setdefault("ALL", []).append(recall)
    families = ["exact id", "party + branch", "paraphrase", "master by name", "ALL"]
    print("  " + f"{'':14s}" + "".join(f"{f:>16s}" for f in families))
    for name, by in rows.items():
        cells = "".join(
            f"{statistics.mean(by[f]):16.3f}" if by.get(f) else f"{'-':>16s}" for f in families
        )
        print(f"  {name:14s}{cells}")
    index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite-n", type=int, default=100_000)
    parser.add_argument("--pg-n", type=int, default=1_000_000)
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--keep-pg", action="store_true", help="keep the bench_* tables")
    parser.add_argument(
        "--base", type=int, default=3000, help="real embeddings behind synthetic vectors"
    )
    parser.add_argument("--noise", type=float, default=0.03)
    parser.add_argument(
        "--only",
        choices=["build", "sqlite", "pg", "pg-latency", "recall"],
        default=None,
        help="pg-latency: query the bench_* tables a --keep-pg run left",
    )
    args = parser.parse_args()
    dsn = os.environ.get("ERP_AGENT_TEST_PG", "postgresql://app:app@127.0.0.1:5433/app")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.only in (None, "build"):
            bench_build(folder)
        if args.only in (None, "recall"):
            asyncio.run(labelled_recall(folder))
        if args.only in (None, "sqlite"):
            bench_sqlite(folder, args.sqlite_n, args.base, args.noise)
        if args.only == "pg-latency":
            from erp_agent.retrieval.index_postgres import PostgresIndex

            with PostgresIndex(dsn, prefix="bench") as kept:
                n = kept.count("acme") * 10 // 9  # acme holds 9 in 10 cards
                print(f"\n## PostgreSQL + pgvector, {n:,} cards kept from a --keep-pg run; "
                      f"{load_line()}")  # fmt: skip
                pg_warm(dsn)
                out = latency(kept, f"PostgreSQL {n // 1000}k",
                              ("pgvector plain KNN top-10", pg_knn(dsn)),
                              lambda scope: pg_knn(dsn, scope=scope))  # fmt: skip
                pg_report(kept, out, dsn)
                pg_quality(kept, dsn)
                pg_size(dsn, n)
        if args.only in (None, "pg") and not args.no_pg:
            bench_postgres(dsn, args.pg_n, args.base, args.noise, keep=args.keep_pg)


if __name__ == "__main__":
    main()
