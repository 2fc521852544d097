"""How the embedded index's ANN library was chosen: filtered top-60 over 100k MiniLM-like
vectors (the retrieval benchmark's synthetic cards: real embeddings plus noise) with three
scopes, for every candidate installed: build and incremental-add time, p50/p95, recall@10/@60
against an exact scan of the same scope, cards returned outside the scope, and for the graphs
what filtering an unscoped top-200 afterwards keeps. numpy's exact scan is the anchor.

The candidates are not dependencies of the product (only faiss-cpu is); bring them for the run:

    uv run --with usearch --with hnswlib --with sqlite-vec --with sqlean.py \
        python benchmarks/ann_libraries.py [N]

Measured here (2 cores, load 5.5, 100k): faiss HNSW M=16 with the scope as an IDSelectorBitmap
inside the walk: recall@10 0.99-1.00 at 0.2-1 ms (narrow scopes need a wide walk: those are
scanned exactly); hnswlib: a Python callback per visited node, 12 ms at a 15 % scope, and no
wheel (1.5 min to compile); usearch: no filter in its Python API, so post-filtering only, which
keeps 0.14 of the true top 10 in a 0.4 % scope; sqlite-vec vec0 (partition key + metadata
columns): exact but a brute-force scan, 28-95 ms, and it needs sqlean.py or apsw to load.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

CACHE = Path(os.environ.get("BENCH_CACHE", ".bench-cache"))

K = 60


Columns = dict[str, np.ndarray]


def corpus(n: int) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray, Columns]:
    base_file = CACHE / "base-3000.npy"
    if not base_file.exists():
        raise SystemExit(f"{base_file} is missing: run benchmarks/retrieval.py --only sqlite once")
    base = np.load(base_file)
    rng = np.random.default_rng(7)
    x = base[rng.integers(0, len(base), n)] + rng.normal(0, 0.03, (n, base.shape[1]))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    tenant = np.arange(n) % 10 != 0  # 90 % in the searched tenant
    branch = rng.integers(0, 6, n)
    day = rng.integers(0, 700, n)
    scopes = {
        "tenant (90%)": tenant,
        "tenant+2 branches+year (~15%)": tenant & np.isin(branch, [1, 2]) & (day >= 150) & (day < 515),
        "tenant+1 branch+month (~0.4%)": tenant & (branch == 3) & (day >= 300) & (day < 330),
    }  # fmt: skip
    q = base[rng.integers(0, len(base), 40)] + rng.normal(0, 0.05, (40, base.shape[1]))
    queries = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    return x, scopes, queries, {"tenant": tenant, "branch": branch, "day": day}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    x, scopes, queries, columns = corpus(n)

    def exact(q: np.ndarray, mask: np.ndarray) -> np.ndarray:
        where = np.flatnonzero(mask)
        s = x[where] @ q
        top = np.argpartition(-s, K - 1)[:K]
        return where[top[np.argsort(-s[top])]]

    truth = {name: [exact(q, m) for q in queries] for name, m in scopes.items()}

    def report(lib: str, fn) -> None:  # type: ignore[no-untyped-def]
        for name, m in scopes.items():
            ms: list[float] = []
            r10: list[float] = []
            r60: list[float] = []
            outside = 0
            for rep in range(2):
                for q, t in zip(queries, truth[name], strict=True):
                    s = time.perf_counter()
                    got = np.asarray(fn(q, m, name))
                    ms.append((time.perf_counter() - s) * 1000)
                    if rep == 0:
                        got = got[got >= 0]
                        outside += int((~m[got]).sum())
                        r10.append(len(set(got[:10].tolist()) & set(t[:10].tolist())) / 10)
                        r60.append(len(set(got.tolist()) & set(t.tolist())) / K)
            ms.sort()
            print(f"  {lib:40s} {name:30s} p50 {statistics.median(ms):6.2f} p95 "
                  f"{ms[int(len(ms) * 0.95)]:6.2f} ms  recall@10 {np.mean(r10):.3f} "
                  f"@60 {np.mean(r60):.3f}  outside {outside}", flush=True)  # fmt: skip

    print(f"{n:,} vectors; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    report("ANCHOR numpy exact scan of the scope", lambda q, m, name: exact(q, m))
    for lib in (faiss_hnsw, hnswlib_filter, usearch_post, sqlite_vec0):
        try:
            lib(x, scopes, columns, report)
        except ImportError as exc:
            print(f"  {lib.__name__}: not installed ({exc.name})")


def faiss_hnsw(x, scopes, columns, report) -> None:  # type: ignore[no-untyped-def]
    import faiss

    faiss.omp_set_num_threads(1)
    n = len(x)
    index = faiss.IndexHNSWFlat(x.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 40
    t = time.perf_counter()
    index.add(x[: n - 1000])
    build = time.perf_counter() - t
    t = time.perf_counter()
    index.add(x[n - 1000 :])
    print(
        f"faiss HNSW M=16 efC=40: build {build:.1f} s, +1,000 {(time.perf_counter() - t) * 1000:.0f} ms"
    )
    bitmaps = {name: np.packbits(m, bitorder="little") for name, m in scopes.items()}

    def walk(q, m, name):  # type: ignore[no-untyped-def]
        sel = faiss.IDSelectorBitmap(len(bitmaps[name]), faiss.swig_ptr(bitmaps[name]))
        ef = min(4000, max(600, int(2 * K / max(m.mean(), 1e-4))))
        _, rows = index.search(q[None], K, params=faiss.SearchParametersHNSW(sel=sel, efSearch=ef))
        return rows[0]

    def post(q, m, name):  # type: ignore[no-untyped-def]
        _, rows = index.search(q[None], 200, params=faiss.SearchParametersHNSW(efSearch=600))
        rows = rows[0][rows[0] >= 0]
        return rows[m[rows]][:K]

    report("faiss HNSW, scope inside the walk", walk)
    report("faiss HNSW, post-filter of a top-200", post)


def hnswlib_filter(x, scopes, columns, report) -> None:  # type: ignore[no-untyped-def]
    import hnswlib

    n = len(x)
    index = hnswlib.Index(space="ip", dim=x.shape[1])
    index.init_index(max_elements=n, M=16, ef_construction=40)
    index.set_num_threads(1)
    t = time.perf_counter()
    index.add_items(x[: n - 1000], np.arange(n - 1000))
    build = time.perf_counter() - t
    t = time.perf_counter()
    index.add_items(x[n - 1000 :], np.arange(n - 1000, n))
    print(
        f"hnswlib M=16 efC=40: build {build:.1f} s, +1,000 {(time.perf_counter() - t) * 1000:.0f} ms"
    )

    def search(q, m, name):  # type: ignore[no-untyped-def]
        index.set_ef(min(4000, max(600, int(2 * K / max(m.mean(), 1e-4)))))
        labels, _ = index.knn_query(q, k=min(K, int(m.sum())), filter=lambda i: bool(m[i]))
        return labels[0].astype(np.int64)

    report("hnswlib, Python filter callback", search)


def usearch_post(x, scopes, columns, report) -> None:  # type: ignore[no-untyped-def]
    from usearch.index import Index

    n = len(x)
    index = Index(ndim=x.shape[1], metric="ip", dtype="f32", connectivity=16,
                  expansion_add=40, expansion_search=600)  # fmt: skip
    t = time.perf_counter()
    index.add(np.arange(n - 1000), x[: n - 1000], threads=1)
    build = time.perf_counter() - t
    t = time.perf_counter()
    index.add(np.arange(n - 1000, n), x[n - 1000 :], threads=1)
    print(f"usearch M=16 efC=40: build {build:.1f} s, +1,000 {(time.perf_counter() - t) * 1000:.0f} ms"
          " (no filter in the Python API: post-filtering only)")  # fmt: skip

    def search(q, m, name):  # type: ignore[no-untyped-def]
        keys = index.search(q, 200, threads=1).keys.astype(np.int64)
        return keys[m[keys]][:K]

    report("usearch, post-filter of a top-200", search)


def sqlite_vec0(x, scopes, columns, report) -> None:  # type: ignore[no-untyped-def]
    import sqlean
    import sqlite_vec

    n = len(x)
    tenant, branch, day = columns["tenant"].astype(int), columns["branch"], columns["day"]
    db = sqlean.connect(":memory:")
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.execute("create virtual table v using vec0(tenant integer partition key, embedding "
               "float[384] distance_metric=cosine, branch integer, day integer)")  # fmt: skip
    t = time.perf_counter()
    db.executemany("insert into v(rowid, tenant, embedding, branch, day) values (?,?,?,?,?)",
                   [(i, int(tenant[i]), x[i].tobytes(), int(branch[i]), int(day[i]))
                    for i in range(n)])  # fmt: skip
    print(
        f"sqlite-vec vec0 (partition key tenant, metadata branch/day): insert {time.perf_counter() - t:.1f} s"
    )
    where = {
        "tenant (90%)": "",
        "tenant+2 branches+year (~15%)": " and branch in (1, 2) and day >= 150 and day < 515",
        "tenant+1 branch+month (~0.4%)": " and branch = 3 and day >= 300 and day < 330",
    }

    def search(q, m, name):  # type: ignore[no-untyped-def]
        rows = db.execute(f"select rowid from v where embedding match ? and k = {K} "
                          f"and tenant = 1{where[name]}", (q.tobytes(),)).fetchall()  # fmt: skip
        return np.array([r[0] for r in rows], dtype=np.int64)

    report("sqlite-vec vec0 (brute force)", search)


if __name__ == "__main__":
    main()
