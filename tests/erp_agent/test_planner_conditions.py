"""Conditions are kept, never dropped: a period asked of records with no business date is
their creation date (and said so); "not yet received" is the order statuses that mean it; a
comparison of two fields that a metric means ("below reorder level") is that metric. Truth
comes from the demo ERP's own tables; the readings that drop a condition fail the checks."""

from __future__ import annotations

import pytest

from conftest import TEST_TODAY, DemoERP, raw
from conftest import ask_offline as ask
from erp_agent.evals.score import figure_present
from erp_agent.runtime import Runtime

pytestmark = pytest.mark.anyio


def one(demo: DemoERP, sql: str, *params: object) -> int:
    return int(raw(demo, sql, *params)[0][0])


async def test_a_period_of_records_without_a_date_is_their_creation(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    year = TEST_TODAY.year
    created_before = one(demo_erp, "select count(*) from tabCustomer where creation < ?", f"{year}")
    created_now = one(demo_erp, "select count(*) from tabCustomer where creation >= ?", f"{year}")
    assert created_before
    a = await ask(runtime, "number of new customers this year")
    assert "created" in a["text"], a["text"]
    assert figure_present(a["text"], created_now) or a["text"].startswith("No records found")
    # The period dropped counts every customer: another figure.
    assert not figure_present(a["text"], created_before + created_now), a["text"]
    first = raw(demo_erp, "select min(substr(creation, 1, 4)) from tabCustomer")[0][0]
    b = await ask(runtime, f"how many customers were created in {first}")
    in_year = one(
        demo_erp, "select count(*) from tabCustomer where substr(creation, 1, 4) = ?", first
    )
    assert figure_present(b["text"], in_year), b["text"]


async def test_orders_not_yet_received_are_the_statuses_that_mean_it(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    # purchase@ buys for both companies; other tests may have added orders to either.
    waiting = one(
        demo_erp,
        "select count(*) from `tabPurchase Order` where docstatus = 1 and "
        "status in ('To Receive and Bill', 'To Receive')",
    )
    every = one(demo_erp, "select count(*) from `tabPurchase Order` where docstatus = 1")
    assert 0 < waiting < every
    a = await ask(runtime, "how many purchase orders are not yet received?", "purchase@demo.local")
    assert figure_present(a["text"], waiting), a["text"]
    assert not figure_present(a["text"], every), a["text"]


async def test_below_reorder_level_is_the_metric_that_means_the_comparison(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    below = "i.reorder_level > 0 and b.projected_qty < i.reorder_level"
    rows = raw(
        demo_erp,
        f"select b.item_code, b.warehouse from tabBin b join tabItem i on i.name = b.item_code "
        f"where {below}",
    )
    assert rows
    a = await ask(runtime, "which items are below reorder level", "stock@demo.local")
    assert figure_present(a["text"], len(rows)), a["text"]  # item-warehouses in all
    items = {item for item, _ in rows}
    named = {item for item in items if item in a["text"]}
    assert len(named) >= min(len(items), 12), a["text"]  # the text names up to 12
    warehouse = rows[0][1]
    in_it = sum(1 for _, w in rows if w == warehouse)
    name = warehouse.rsplit(" - ", 1)[0]
    b = await ask(
        runtime, f"how many items are below their reorder level in {name}", "stock@demo.local"
    )
    assert figure_present(b["text"], in_it), b["text"]
    assert any(c["name"] == "metrics.query" for c in b["calls"])


async def test_a_name_is_the_record_that_holds_all_its_words_not_one_of_them(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    # "Nairobi" is a branch too: the branch holds one word of the supplier's name.
    def purchases(where: str, value: str) -> float:
        rows = raw(
            demo_erp,
            "select round(sum(base_net_total), 2) from `tabPurchase Invoice` where docstatus = 1 "
            f"and company = 'Savanna Trading Ltd' and {where} = ? and posting_date between "
            "'2026-04-01' and '2026-06-30'",
            value,
        )
        return float(rows[0][0] or 0)

    supplier = purchases("supplier", "Nairobi Steel Works Ltd")
    branch = purchases("branch", "Nairobi")
    assert supplier
    assert branch != supplier
    a = await ask(runtime, "how much did we spend on purchases from Nairobi Steel Works in q2")
    assert figure_present(a["text"], supplier), a["text"]
    assert not figure_present(a["text"], branch), a["text"]


async def test_records_chosen_by_a_direction_say_so_in_their_headline(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    """A list of payments out reads "payment type Pay", not as every payment entry."""
    # accounts@ sees one company's payments.
    seen = ("Savanna Trading Ltd", "2026-10-01", "2026-10-31")
    out = one(
        demo_erp,
        "select count(*) from `tabPayment Entry` where docstatus = 1 and payment_type = 'Pay' "
        "and party_type = 'Supplier' and company = ? and posting_date between ? and ?",
        *seen,
    )
    every = one(
        demo_erp,
        "select count(*) from `tabPayment Entry` where docstatus = 1 and company = ? and "
        "posting_date between ? and ?",
        *seen,
    )
    assert 0 < out < every
    a = await ask(runtime, "supplier payments in october 2026")
    head = a["text"].splitlines()[0]
    assert figure_present(head, out), a["text"]
    assert "payment type Pay" in head, head
    assert "party type supplier" in head.lower(), head
