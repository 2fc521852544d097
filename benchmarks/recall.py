"""recall@10 on the labelled set (``recall_set.json``, written by ``recall_set.py`` from the
records' own fields): dense only, keyword only, hybrid, and hybrid + reranker when a local
cross-encoder is given; exact-id hit@1. The demo ERP is seeded as the set says and synced for
real (keyword-first, then every card embedded); the index is kept in ``--cache`` for reruns.

    uv run python benchmarks/recall.py [--embedder minilm] [--reranker-path DIR] [--cache DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import statistics
import time
from pathlib import Path
from typing import Any

from recall_set import ENTITIES, OUT, SCALE, TODAY, seeded_server

from erp_agent.retrieval.documents import Scope
from erp_agent.retrieval.embeddings import Embedder, default_embedder
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.rerank import OnnxCrossEncoder, Reranker
from erp_agent.retrieval.retriever import Retriever

K = 10


async def build_index(path: Path, embedder: Embedder, demo: dict[str, Any]) -> None:
    from erp_agent.catalog import load_catalog
    from erp_agent.connectors.frappe.connector import ERPNextConnector
    from erp_agent.retrieval.sync import RecordSync

    # The set was drawn from this very data set (recall_set.TODAY, SCALE, ERP_SEED).
    assert (dt.date.fromisoformat(demo["today"]), demo["scale"]) == (TODAY, SCALE)
    server = seeded_server(path.parent)
    connector = ERPNextConnector(server.url)
    try:
        cred = await connector.login("admin@demo.local", "demo")
        index = SQLiteIndex(path)
        sync = RecordSync(connector, load_catalog(), index, embedder, cred)
        started = time.perf_counter()
        report = await sync.sync(ENTITIES, embed=False)
        keyword = time.perf_counter() - started
        embedded = await sync.backfill()
        total = time.perf_counter() - started
        print(f"  synced {report.upserted} cards: keyword-ready in {keyword:.1f} s, "
              f"{embedded} embedded, {total:.1f} s in all")  # fmt: skip
        index.close()
    finally:
        await connector.aclose()
        server.stop()


def recall(got: list[str], relevant: set[str]) -> float:
    return len(set(got[:K]) & relevant) / min(K, len(relevant))


def evaluate(index: SQLiteIndex, embedder: Embedder, reranker: Reranker | None,
             queries: list[dict[str, Any]]) -> None:  # fmt: skip
    scope = Scope("default")
    retriever = Retriever(index, embedder, reranker)
    rows: dict[str, dict[str, list[float]]] = {}
    hit1: list[float] = []
    for q in queries:
        query, rel, family = q["query"], set(q["relevant"]), q["family"]
        vec = embedder.embed_one(query)
        hybrid = [h.doc.key for h in index.search(query, vec, scope, limit=K)]
        runs = {
            "dense": [k for k, _ in index.dense(vec, scope, K)],
            "keyword": [k for k, _ in index.keyword(query, scope, K)],
            "hybrid": hybrid,
        }
        if reranker is not None:
            runs["hybrid+rerank"] = [h.doc.key for h in retriever.search(query, scope, limit=K)]
        for name, got in runs.items():
            rows.setdefault(name, {}).setdefault(family, []).append(recall(got, rel))
            rows[name].setdefault("ALL", []).append(recall(got, rel))
        if family == "exact id":
            hit1.append(1.0 if hybrid[:1] == sorted(rel) else 0.0)
    families = [*dict.fromkeys(q["family"] for q in queries), "ALL"]
    counts = {f: sum(1 for q in queries if q["family"] == f) for f in families}
    counts["ALL"] = len(queries)
    print("  recall@10      " + "".join(f"{f[:15]:>16s}" for f in families))
    print("  (queries)      " + "".join(f"{counts[f]:>16d}" for f in families))
    for name, by in rows.items():
        cells = "".join(f"{statistics.mean(by[f]):16.3f}" for f in families)
        print(f"  {name:15s}{cells}")
    print(f"  exact-id hit@1 (hybrid): {statistics.mean(hit1):.3f} over {len(hit1)} queries")


def make_embedder(name: str) -> Embedder:
    if name == "minilm":
        return default_embedder()
    raise SystemExit(f"unknown embedder {name!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--reranker-path", help="a folder with a cross-encoder's model.onnx")
    parser.add_argument("--cache", type=Path, default=Path(".bench-cache"))
    parser.add_argument(
        "--exact-rows",
        type=int,
        default=None,
        help="vectors above which the dense leg walks an HNSW graph (default: the index's own; "
        "0 sends every search wide enough for a walk through the graph)",
    )
    args = parser.parse_args()
    labelled = json.loads(OUT.read_text())
    queries = labelled["queries"]
    embedder = make_embedder(args.embedder)
    args.cache.mkdir(parents=True, exist_ok=True)
    path = args.cache / f"recall-{embedder.model_id}.sqlite"
    print(f"\n## recall@{K} on {len(queries)} labelled queries, embedder {embedder.model_id}")
    if not path.exists():
        asyncio.run(build_index(path, embedder, labelled["demo"]))
    reranker = OnnxCrossEncoder(args.reranker_path) if args.reranker_path else None
    if reranker is None:
        print("  hybrid+rerank: not measured (no cross-encoder provisioned: --reranker-path)")
    with SQLiteIndex(path, exact_rows=args.exact_rows) as index:
        assert isinstance(index, SQLiteIndex)
        started = time.perf_counter()
        index.dense_ready()
        graph = index._dense.graph if index._dense is not None else None
        print(
            f"  dense leg: {'HNSW graph' if graph else 'exact'} over {index._dense.rows:,} vectors"
            if index._dense is not None
            else "  dense leg: no vectors",
            f"(graph built in {time.perf_counter() - started:.1f} s)" if graph else "",
        )
        evaluate(index, embedder, reranker, queries)


if __name__ == "__main__":
    main()
