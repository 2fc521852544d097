"""Invoices and purchase orders generated from the demo ERP's own suppliers, customers and
items (read straight from its database, not through the agent), with known contents."""

from __future__ import annotations

import datetime as dt
import random

from conftest import TEST_TODAY, DemoERP, raw
from erp_agent.documents.samples import CatalogItem, Kind, Party, SampleDocument, random_document

COMPANY = "Savanna Trading Ltd"


def parties(demo: DemoERP, kind: Kind) -> list[Party]:
    if kind == "purchase_invoice":
        rows = raw(demo, "SELECT name, default_currency FROM tabSupplier WHERE disabled = 0")
    else:
        rows = raw(demo, "SELECT name, default_currency FROM tabCustomer WHERE disabled = 0")
    return [Party(r[0], r[1]) for r in rows if r[1] == "KES"]


def items(demo: DemoERP) -> list[CatalogItem]:
    rows = raw(
        demo,
        "SELECT i.name, i.item_name, MIN(p.price_list_rate) FROM tabItem i "
        "JOIN `tabItem Price` p ON p.item_code = i.name "
        "WHERE p.price_list = 'Standard Buying KES' AND i.disabled = 0 GROUP BY i.name",
    )
    return [CatalogItem(r[0], r[1], float(r[2])) for r in rows]


def documents(
    demo: DemoERP, count: int, seed: int, kind: Kind | None = None
) -> list[SampleDocument]:
    rng = random.Random(seed)
    catalog = items(demo)
    out = []
    for i in range(count):
        this: Kind = kind or ("sales_order" if i % 3 == 2 else "purchase_invoice")
        out.append(random_document(rng, this, parties(demo, this), catalog, COMPANY, TEST_TODAY))
    return out


def today() -> dt.date:
    return TEST_TODAY
