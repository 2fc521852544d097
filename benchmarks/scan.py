"""Document scanning: field-level accuracy and seconds per page, PDF (text layer) vs PNG (OCR
of rotated, blurred, speckled scans), on invoices and purchase orders generated from the demo
ERP's own suppliers, customers and items.

Each document goes the whole way a user's upload does — documents.scan, the party and item
look-ups as the user, the create proposal — through the gateway. "parsed" scores what the
parser read (items by printed code or description); "draft" scores the proposal (party and
items as the ERP's ids). "silent" counts documents with a wrong field and no flag at all.

    uv run python benchmarks/scan.py --docs 20
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import percentile, seeded_db

from demo_erp.context import Settings as ErpSettings
from demo_erp.server import running
from erp_agent.config import Settings
from erp_agent.documents.draft import scan_to_draft
from erp_agent.documents.samples import (
    CatalogItem,
    Kind,
    Party,
    SampleDocument,
    draft_reading,
    field_scores,
    parsed_reading,
    random_document,
    render_pdf,
    render_png,
)
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

TODAY = dt.date(2026, 11, 30)
COMPANY = "Savanna Trading Ltd"
USERS = {"purchase_invoice": "accounts@demo.local", "sales_order": "admin@demo.local"}


def test_set(db: Path, count: int, seed: int) -> list[SampleDocument]:
    conn = sqlite3.connect(db)
    parties: dict[Kind, list[Party]] = {
        "purchase_invoice": [
            Party(n, c)
            for n, c in conn.execute("SELECT name, default_currency FROM tabSupplier")
            if c == "KES"
        ],
        "sales_order": [
            Party(n, c)
            for n, c in conn.execute("SELECT name, default_currency FROM tabCustomer")
            if c == "KES"
        ],
    }
    items = [
        CatalogItem(code, name, float(rate))
        for code, name, rate in conn.execute(
            "SELECT i.name, i.item_name, MIN(p.price_list_rate) FROM tabItem i "
            "JOIN `tabItem Price` p ON p.item_code = i.name "
            "WHERE p.price_list = 'Standard Buying KES' GROUP BY i.name"
        )
    ]
    conn.close()
    rng = random.Random(seed)
    kinds: list[Kind] = ["purchase_invoice", "purchase_invoice", "sales_order"]
    return [
        random_document(rng, kinds[i % 3], parties[kinds[i % 3]], items, COMPANY, TODAY)
        for i in range(count)
    ]


def scan_png(doc: SampleDocument, i: int) -> bytes:
    rng = random.Random(i)
    angle = 90.0 if i % 10 == 9 else rng.uniform(-4, 4)
    return render_png(
        doc, rotate=angle, noise=rng.choice((0.0, 0.005, 0.01)), blur=rng.choice((0.0, 0.5)), seed=i
    )


async def measure(
    runtime: Runtime, docs: list[SampleDocument], render: Callable[[SampleDocument, int], bytes]
) -> dict[str, float]:
    sessions = {k: await runtime.sign_in(u, "demo") for k, u in USERS.items()}
    parsed_right = draft_right = total = silent = flagged = 0
    extract_s: list[float] = []
    whole_s: list[float] = []
    for i, doc in enumerate(docs):
        data = render(doc, i)
        started = time.perf_counter()
        result = await scan_to_draft(runtime.gateway, sessions[doc.kind], data, "bench")
        whole_s.append(time.perf_counter() - started)
        extract_s.append(float(result.extraction.get("seconds", 0.0)))
        read = result.as_dict()
        parsed = field_scores(doc, parsed_reading(read["document"])) if read["document"] else {}
        draft = field_scores(doc, draft_reading(read), erp_items=True)
        parsed_right += sum(parsed.values())
        draft_right += sum(draft.values())
        total += len(draft)
        flagged += len(result.flags)
        if not all(draft.values()) and not result.flags:
            silent += 1
    return {
        "docs": len(docs),
        "fields": total,
        "parsed": parsed_right / total,
        "draft": draft_right / total,
        "flags_per_doc": flagged / len(docs),
        "silent": silent,
        "extract_p50": statistics.median(extract_s),
        "extract_p95": percentile(extract_s, 95),
        "whole_p50": statistics.median(whole_s),
    }


async def main(url: str, docs: list[SampleDocument], data_dir: Path) -> None:
    runtime = await Runtime.create(
        Settings(erp_url=url, data_dir=str(data_dir)), store=MemoryStore()
    )
    try:
        rows = {
            "PDF": await measure(runtime, docs, lambda d, i: render_pdf(d)),
            "PNG": await measure(runtime, docs, scan_png),
        }
    finally:
        await runtime.aclose()
    print(
        f"\n{'format':6} {'docs':>4} {'fields':>6} {'parsed':>7} {'draft':>7} "
        f"{'flags/doc':>9} {'silent':>6} {'s/page p50':>10} {'p95':>6} {'draft s p50':>11}"
    )
    for name, r in rows.items():
        print(
            f"{name:6} {r['docs']:4.0f} {r['fields']:6.0f} {r['parsed']:7.1%} {r['draft']:7.1%} "
            f"{r['flags_per_doc']:9.1f} {r['silent']:6.0f} {r['extract_p50']:10.2f} "
            f"{r['extract_p95']:6.2f} {r['whole_p50']:11.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=20, help="documents per format")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "erp-bench")
    args = parser.parse_args()
    db = seeded_db(args.data, None, scale=0.1)
    test_docs = test_set(db, args.docs, args.seed)
    with running(ErpSettings(db_path=str(db), today=TODAY)) as erp:
        asyncio.run(main(erp.url, test_docs, Path(tempfile.mkdtemp())))
