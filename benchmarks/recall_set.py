"""Write the labelled query set for the recall benchmark (``benchmarks/recall_set.json``).

Every query and its relevant answers come from the records' own fields, read over the demo ERP's
REST API as the administrator: the search index is never consulted, so the set cannot favour
how the index happens to rank. Families: exact ids (as typed, in a sentence, lower-case),
a party and a month, paraphrases of a status, misspelled party names, names of masters, and
amounts. Deterministic for the seed, scale and date below.

    uv run python benchmarks/recall_set.py [--out benchmarks/recall_set.json]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

TODAY = dt.date(2026, 11, 30)
SCALE = 0.1
ERP_SEED = 42  # the demo data set (the tests' default)
SEED = 7  # which records the queries are drawn from
ENTITIES = ["sales_invoice", "purchase_invoice", "sales_order", "customer", "supplier", "item"]
OUT = Path(__file__).with_name("recall_set.json")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip


def key(entity: str, record_id: str) -> str:
    return f"{entity}:{record_id}"


def typo(name: str, rng: random.Random) -> str:
    """One slip of the keyboard in the longest word: a dropped, doubled or swapped letter."""
    words = name.split()
    i = max(range(len(words)), key=lambda j: len(words[j]))
    word = words[i]
    if len(word) < 5:
        return name
    at = rng.randrange(1, len(word) - 2)
    kind = rng.choice(["drop", "double", "swap"])
    if kind == "drop":
        word = word[:at] + word[at + 1 :]
    elif kind == "double":
        word = word[:at] + word[at] + word[at:]
    else:
        word = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    words[i] = word
    return " ".join(words)


def money(value: float) -> str:
    return f"{value:,.2f}"


def build(records: dict[str, list[dict[str, Any]]], rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(family: str, query: str, relevant: set[str]) -> None:
        if relevant:
            out.append({"family": family, "query": query, "relevant": sorted(relevant)})

    live = {
        e: [r for r in rows if r.get("status") != "Cancelled" and r.get("docstatus") != 2]
        for e, rows in records.items()
    }
    invoices, bills = live["sales_invoice"], live["purchase_invoice"]
    # Exact ids: typed alone, inside a sentence, lower-case.
    for entity, count in (("sales_invoice", 25), ("purchase_invoice", 15), ("sales_order", 10)):
        for r in rng.sample(live[entity], count):
            rid = str(r["id"])
            query = rng.choice([rid, f"status of {rid}", f"what about {rid.lower()}?"])
            add("exact id", query, {key(entity, rid)})
    # A party and a month: every invoice to that customer dated in that month.
    by_party_month: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in invoices:
        day = dt.date.fromisoformat(str(r["date"])[:10])
        by_party_month[(str(r["customer_name"]), f"{MONTHS[day.month - 1]} {day.year}")].add(
            key("sales_invoice", str(r["id"]))
        )
    for (who, month), rel in rng.sample(sorted(by_party_month.items()), 35):
        add("party + month", f"the invoice we sent to {who} in {month}", rel)
    # Paraphrases of a status, never using the card's own word for it.
    overdue: dict[str, set[str]] = defaultdict(set)
    owing: dict[str, set[str]] = defaultdict(set)
    for r in invoices:
        if r.get("status") == "Overdue":
            overdue[str(r["customer_name"])].add(key("sales_invoice", str(r["id"])))
        if float(r.get("outstanding") or 0) > 0:
            owing[str(r["customer_name"])].add(key("sales_invoice", str(r["id"])))
    for who in rng.sample(sorted(overdue), min(20, len(overdue))):
        add("paraphrase", f"bills {who} has not paid on time", overdue[who])
    for who in rng.sample(sorted(owing), min(15, len(owing))):
        add("paraphrase", f"what does {who} still owe us", owing[who])
    # Misspelled party names.
    by_customer: dict[str, set[str]] = defaultdict(set)
    for r in invoices:
        by_customer[str(r["customer_name"])].add(key("sales_invoice", str(r["id"])))
    by_supplier: dict[str, set[str]] = defaultdict(set)
    for r in bills:
        by_supplier[str(r["supplier_name"])].add(key("purchase_invoice", str(r["id"])))
    for who in rng.sample(sorted(by_customer), min(20, len(by_customer))):
        add("misspelled name", f"invoices for {typo(who, rng)}", by_customer[who])
    for who in rng.sample(sorted(by_supplier), min(10, len(by_supplier))):
        add("misspelled name", f"bills from {typo(who, rng)}", by_supplier[who])
    # Masters by name.
    for r in rng.sample(live["customer"], min(15, len(live["customer"]))):
        add("master by name", f"customer {r['id']}", {key("customer", str(r["id"]))})
    for r in rng.sample(live["supplier"], min(10, len(live["supplier"]))):
        add("master by name", f"supplier {r['id']} details", {key("supplier", str(r["id"]))})
    for r in rng.sample(live["item"], min(15, len(live["item"]))):
        add("master by name", f"the item {r['item_name']}", {key("item", str(r["id"]))})
    # Amounts, as a person types them: every invoice with exactly that total.
    by_total: dict[str, set[str]] = defaultdict(set)
    for r in invoices:
        by_total[money(float(r["total"]))].add(key("sales_invoice", str(r["id"])))
    for r in rng.sample(invoices, 20):
        total = money(float(r["total"]))
        add("amount", f"invoice for {r['currency']} {total}", by_total[total])
    return out


async def read_records(url: str) -> dict[str, list[dict[str, Any]]]:
    from erp_agent.catalog import load_catalog
    from erp_agent.connectors.frappe.connector import ERPNextConnector
    from erp_agent.retrieval.cards import card_fields

    catalog = load_catalog()
    connector = ERPNextConnector(url)
    try:
        cred = await connector.login("admin@demo.local", "demo")
        out = {}
        for entity in ENTITIES:
            fields = sorted({*card_fields(catalog.entity(entity)), "id"})
            page = await connector.list(cred, entity, fields=fields, limit=0)
            out[entity] = page.records
        return out
    finally:
        await connector.aclose()


def seeded_server(folder: Path) -> Any:
    from demo_erp.context import Settings
    from demo_erp.seed import seed
    from demo_erp.server import start_in_thread

    path = folder / "demo.sqlite"
    seed(path, today=TODAY, scale=SCALE, seed=ERP_SEED)
    return start_in_thread(Settings(db_path=str(path), version=15, today=TODAY))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = seeded_server(Path(tmp))
        try:
            records = asyncio.run(read_records(server.url))
        finally:
            server.stop()
    queries = build(records, random.Random(SEED))
    payload = {
        "demo": {"today": TODAY.isoformat(), "scale": SCALE, "seed": ERP_SEED, "draw": SEED},
        "queries": queries,
    }
    args.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    families: dict[str, int] = defaultdict(int)
    for q in queries:
        families[q["family"]] += 1
    print(f"{len(queries)} queries -> {args.out}: {dict(families)}")


if __name__ == "__main__":
    main()
