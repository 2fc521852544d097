"""The tryton connector against a real trytond (PyPI), seeded once per session: users with
different rights (all companies; sales of one company; accounting of the other), cross-company
probes on every surface, Tryton's refusals verbatim, stale writes, figures equal to sums taken
independently through Tryton's own JSON-RPC (tryton_fixtures.TrytonRPC, not the connector),
documents filled by Tryton's on_change, and bad input turned into one plain line."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from tryton_fixtures import PASSWORD, Tryton, TrytonRPC, tryton  # noqa: F401 - session fixture

from conftest import TEST_TODAY
from erp_agent.connectors.query import AggregateRequest, Filter, Func, GroupKey, Measure, Op
from erp_agent.connectors.tryton.connector import TrytonConnector
from erp_agent.errors import ErpAuthenticationError, ErpRefusal, ErpUnavailable

pytestmark = pytest.mark.anyio

US, EU = "Acme US Inc.", "Acme EU GmbH"
BOOKED = ["posted", "paid"]


@pytest.fixture
async def connector(tryton: Tryton) -> AsyncIterator[TrytonConnector]:  # noqa: F811
    c = TrytonConnector(tryton.url, database=tryton.database)
    yield c
    await c.aclose()


def _booked_totals(rpc: TrytonRPC, kind: str = "out") -> dict[str, Decimal]:
    rows = rpc.search_read(
        "account.invoice", [["type", "=", kind], ["state", "in", BOOKED]],
        ["total_amount", "company.rec_name"],
    )  # fmt: skip
    out: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows:
        out[row["company."]["rec_name"]] += row["total_amount"]
    return dict(out)


async def test_aggregates_equal_sums_taken_through_trytons_own_api(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    for user in ("accountant", "sales_us", "acct_eu"):
        cred = await connector.login(user, PASSWORD)
        truth = _booked_totals(TrytonRPC(tryton, user))
        got = await connector.aggregate(cred, "sales_invoice", AggregateRequest(
            (Measure(Func.SUM, "total"), Measure(Func.COUNT)), (GroupKey("company"),),
            (Filter("docstatus", Op.EQ, 1),)))  # fmt: skip
        sums = {r["company"]: Decimal(str(r["sum_total"])) for r in got.rows}
        assert sums == truth, user
        assert got.method == "chunked"
    # The accountant sees both companies; the sales user only theirs.
    admin = TrytonRPC(tryton, "accountant")
    assert set(_booked_totals(admin)) == {US, EU}


async def test_booked_revenue_equals_the_revenue_accounts_balance(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    """Tryton's ledger and the invoices the connector reads agree, per company."""
    cred = await connector.login("accountant", PASSWORD)
    got = await connector.aggregate(cred, "sales_invoice", AggregateRequest(
        (Measure(Func.SUM, "base_net_total"),), (GroupKey("company"),),
        (Filter("docstatus", Op.EQ, 1),)))  # fmt: skip
    rpc = TrytonRPC(tryton, "accountant")
    for row in got.rows:
        company = rpc.search_read("company.company", [["rec_name", "=", row["company"]]], ["id"])
        accounts = rpc("account.account.search_read",
                       [["type.revenue", "=", True], ["company", "=", company[0]["id"]]], 0, None,
                       None, ["credit", "debit"], context={"company": company[0]["id"]})  # fmt: skip
        ledger = sum((a["credit"] - a["debit"] for a in accounts), Decimal(0))
        assert Decimal(str(row["sum_base_net_total"])) == ledger, row


async def test_no_surface_shows_another_companys_records(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    cred = await connector.login("sales_us", PASSWORD)
    assert await connector.data_scope(cred) != await connector.data_scope(
        await connector.login("accountant", PASSWORD)
    )
    page = await connector.list(cred, "sales_invoice", fields=["id", "company"], limit=0)
    assert {r["company"] for r in page.records} == {US}
    assert await connector.count(cred, "sales_invoice", [Filter("company", Op.EQ, EU)]) == 0
    grouped = await connector.aggregate(
        cred, "sales_invoice", AggregateRequest((Measure(Func.COUNT),), (GroupKey("company"),))
    )
    assert {r["company"] for r in grouped.rows} == {US}
    changes = await connector.changes_since(cred, "sales_invoice", None, limit=10_000)
    assert {r["company"] for r in changes.records} == {US}
    # The ageing report is Tryton's accounting: a sales user may not run it at all.
    if await connector.report_access(cred, "accounts_receivable"):
        report = await connector.run_report(cred, "accounts_receivable", {})
        assert {r["company"] for r in report.rows} <= {US}
    eu_books = await connector.login("acct_eu", PASSWORD)
    report = await connector.run_report(eu_books, "accounts_receivable", {})
    assert report.rows
    assert {r["company"] for r in report.rows} == {EU}
    # An EU invoice read by its id: Tryton's own refusal, verbatim.
    eu = TrytonRPC(tryton, "accountant").search_read(
        "account.invoice", [["type", "=", "out"], ["company.rec_name", "=", EU]], ["id"]
    )[0]["id"]
    with pytest.raises(ErpRefusal) as refused:
        await connector.get(cred, "sales_invoice", str(eu))
    assert "User in companies" in refused.value.refusal.message
    assert refused.value.refusal.message.startswith("You are not allowed to read records")


async def test_refusals_are_trytons_own_words(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    eu = await connector.login("acct_eu", PASSWORD)
    with pytest.raises(ErpRefusal) as no_sales:
        await connector.count(eu, "sales_order")
    assert no_sales.value.refusal.message == 'You are not allowed to access "Sale".'
    sales = await connector.login("sales_us", PASSWORD)
    assert (await connector.access(sales, "sales_invoice")) == {
        "read": True, "create": False, "update": False, "submit": False, "cancel": False,
        "delete": False,
    }  # fmt: skip
    invoice = (await connector.list(sales, "sales_invoice", fields=["id"], limit=1)).records[0]
    with pytest.raises(ErpRefusal) as no_write:
        await connector.update(sales, "sales_invoice", str(invoice["id"]), {"remarks": "x"})
    assert no_write.value.refusal.message == 'You are not allowed to access "Account Invoice".'


async def test_a_stale_write_is_refused_in_trytons_words(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    cred = await connector.login("sales_us", PASSWORD)
    draft = (await connector.list(cred, "quotation", fields=["id", "modified", "docstatus"],
                                  filters=[Filter("docstatus", Op.EQ, 0)], limit=1)).records[0]  # fmt: skip
    seen = str(draft["modified"])
    # Someone else changes the sale meanwhile (Tryton's own API, not the connector).
    TrytonRPC(tryton, "sales_us")("sale.sale.write", [draft["id"]], {"description": "changed"})
    with pytest.raises(ErpRefusal) as stale:
        await connector.update(cred, "quotation", str(draft["id"]), {"date": "2026-11-02"},
                               modified=seen)  # fmt: skip
    assert stale.value.refusal.stale
    assert stale.value.refusal.message == "Records were modified in the meanwhile"
    fresh = await connector.get(cred, "quotation", str(draft["id"]))
    updated = await connector.update(cred, "quotation", str(draft["id"]),
                                     {"date": "2026-11-02"}, modified=str(fresh["modified"]))  # fmt: skip
    assert updated["date"] == "2026-11-02"
    # Delta sync on write_date: the change is there for whoever syncs as this user next.
    since = await connector.changes_since(cred, "quotation", seen)
    assert draft["id"] in {r["id"] for r in since.records}
    assert since.watermark is not None
    assert since.watermark >= seen


async def test_a_quotation_is_filled_by_trytons_form_and_written_only_on_create(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    cred = await connector.login("sales_us", PASSWORD)
    rpc = TrytonRPC(tryton, "sales_us")
    before = rpc("sale.sale.search_count", [])
    values = {"party": "Blue Harbor Ltd", "items": [{"item": "Widget", "qty": 3}]}
    filled = await connector.fill_document(cred, "quotation", values)
    assert filled is not None
    assert rpc("sale.sale.search_count", []) == before  # a proposal writes nothing
    # Tryton's own on_change, asked directly: the list price and the line amount.
    widget = rpc("product.product.search", [["code", "=", "W-100"]], 0, 1, None)[0]
    line = rpc("sale.line.on_change", {"product": widget, "quantity": 3.0, "type": "line",
                                       "sale": {"party": 1, "company": 1, "currency": 1},
                                       "unit": None, "taxes": []}, ["product"])  # fmt: skip
    assert filled.payload["items"][0]["rate"] == float(line["unit_price"])
    assert filled.document["net_total"] == float(line["amount"])
    assert filled.document["total"] == 132.0
    assert filled.document["tax_total"] == 12.0
    created = await connector.create(cred, "quotation", filled.payload)
    assert rpc("sale.sale.search_count", []) == before + 1
    stored = rpc("sale.sale.read", [created["id"]], ["total_amount", "tax_amount", "state"])[0]
    assert (stored["total_amount"], stored["tax_amount"], stored["state"]) == (
        Decimal("132.00"), Decimal("12.00"), "draft")  # fmt: skip
    quoted = await connector.submit(cred, "quotation", str(created["id"]))
    assert quoted["docstatus"] == 1
    assert quoted["state"] == "quotation"


async def test_the_native_state_is_kept_beside_the_canonical_one(
    connector: TrytonConnector,
) -> None:
    cred = await connector.login("accountant", PASSWORD)
    rows = (
        await connector.list(cred, "sales_invoice", fields=["id", "docstatus"], limit=0)
    ).records
    pairs = {(r["docstatus"], r["state"]) for r in rows}
    assert (1, "paid") in pairs
    assert (1, "posted") in pairs
    assert (2, "cancelled") in pairs
    assert {d for d, s in pairs if s == "draft"} == {0}
    assert connector.document_state("sales_invoice", 1) == (
        "posted or paid", "state in ('posted', 'paid')")  # fmt: skip
    described = {f.name: f for f in await connector.describe(cred, "sales_invoice")}
    assert described["customer"].native == "party"
    assert described["customer"].options == "party.party"
    assert described["total"].read_only
    one = await connector.get(cred, "sales_invoice", "US-INV-2026-00001")
    assert one["docstatus"] == 1
    assert one["items"]


async def test_bad_input_is_one_plain_line(tryton: Tryton) -> None:  # noqa: F811
    from demo_erp.tryton.instance import free_port

    down = TrytonConnector(f"http://127.0.0.1:{free_port()}", database="erp", timeout=2)
    with pytest.raises(ErpUnavailable) as unreachable:
        await down.login("accountant", PASSWORD)
    assert "Cannot reach Tryton" in str(unreachable.value)
    await down.aclose()
    nodb = TrytonConnector(tryton.url, database="no_such_db")
    with pytest.raises(ErpUnavailable) as missing:
        await nodb.login("accountant", PASSWORD)
    assert str(missing.value) == f"Tryton at {tryton.url} has no database named 'no_such_db'."
    await nodb.aclose()
    real = TrytonConnector(tryton.url, database=tryton.database)
    with pytest.raises(ErpAuthenticationError):
        await real.login("accountant", "wrong")
    cred = await real.login("accountant", PASSWORD)
    with pytest.raises(ErpRefusal) as bad_date:
        await real.count(cred, "sales_invoice", [Filter("date", Op.GE, "not-a-date")])
    assert "\n" not in str(bad_date.value)
    # A search Tryton itself rejects (party is not a tree): one plain line, Tryton's reason in it.
    with pytest.raises(ErpRefusal) as rejected:
        await real.count(cred, "sales_invoice", [Filter("customer", Op.DESCENDANTS_OF, "Blue")])
    assert str(rejected.value).startswith("Tryton could not do this (")
    assert "\n" not in str(rejected.value)
    with pytest.raises(ErpRefusal):
        await real.count(cred, "sales_invoice", [Filter("total", Op.GT, "abc")])
    assert "Traceback" not in str(bad_date.value)
    await real.aclose()


async def test_a_document_for_the_other_company_takes_that_companys_prices_and_taxes(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    cred = await connector.login("accountant", PASSWORD)
    values = {"party": "Blue Harbor Ltd", "company": EU, "items": [{"item": "Widget", "qty": 3}]}
    filled = await connector.fill_document(cred, "quotation", values)
    assert filled is not None
    assert filled.currency == "EUR"
    # Tryton's own EU list price and EU tax, read independently.
    rpc = TrytonRPC(tryton, "accountant")
    eu = rpc.search_read("company.company", [["rec_name", "=", EU]], ["id"])[0]["id"]
    widget = rpc("product.template.search_read", [["code", "=", "W-100"]], 0, 1, None,
                 ["list_price"], context={"company": eu})[0]  # fmt: skip
    assert filled.payload["items"][0]["rate"] == float(widget["list_price"])
    created = await connector.create(cred, "quotation", filled.payload)
    stored = rpc("sale.sale.read", [created["id"]], ["total_amount", "company", "currency.code"])[0]
    assert stored["company"] == eu
    assert float(stored["total_amount"]) == filled.document["total"]


async def test_overdue_receivables_equal_the_ledgers_unreconciled_lines(
    tryton: Tryton,  # noqa: F811
    connector: TrytonConnector,
) -> None:
    """What is overdue on invoices (outstanding > 0, due before the day) is what Tryton's ledger
    holds: receivable lines of posted moves, not reconciled, matured before the day."""
    cred = await connector.login("accountant", PASSWORD)
    day = TEST_TODAY.isoformat()
    got = await connector.aggregate(cred, "sales_invoice", AggregateRequest(
        (Measure(Func.SUM, "outstanding"),), (GroupKey("company"),),
        (Filter("docstatus", Op.EQ, 1), Filter("outstanding", Op.GT, 0),
         Filter("due_date", Op.LT, day), Filter("is_return", Op.EQ, 0))))  # fmt: skip
    rpc = TrytonRPC(tryton, "accountant")
    when = {"__class__": "date", "year": TEST_TODAY.year, "month": TEST_TODAY.month,
            "day": TEST_TODAY.day}  # fmt: skip
    lines = rpc("account.move.line.search_read", [
        ["account.type.receivable", "=", True], ["reconciliation", "=", None],
        ["maturity_date", "<", when], ["move.state", "=", "posted"], ["debit", ">", 0]],
        0, None, None, ["debit", "credit", "move.company.rec_name"])  # fmt: skip
    ledger: dict[str, Decimal] = defaultdict(Decimal)
    for line in lines:
        ledger[line["move."]["company."]["rec_name"]] += line["debit"] - line["credit"]
    assert {r["company"]: Decimal(str(r["sum_outstanding"])) for r in got.rows} == dict(ledger)
    # A sales user may not read the ledger's lines: their invoices come without due dates.
    sales = await connector.login("sales_us", PASSWORD)
    page = await connector.list(sales, "sales_invoice", fields=["id", "due_date"], limit=3)
    assert page.records
    assert {r["due_date"] for r in page.records} == {None}


async def test_status_is_read_from_trytons_state_and_amounts(
    connector: TrytonConnector,
) -> None:
    cred = await connector.login("accountant", PASSWORD)
    rows = (await connector.list(cred, "sales_invoice", limit=0,
                                 fields=["id", "docstatus", "status", "total"])).records  # fmt: skip
    by_state: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        by_state[row["state"]].add(row["status"])
    assert by_state["paid"] == {"Paid"}
    assert by_state["cancelled"] == {"Cancelled"}
    assert by_state["draft"] == {"Draft"}
    assert by_state["posted"] <= {"Overdue", "Unpaid", "Partly Paid", "Return", "Paid"}
    overdue = await connector.count(cred, "sales_invoice", [Filter("status", Op.EQ, "Overdue")])
    assert overdue == sum(1 for r in rows if r["status"] == "Overdue") > 0
    # A due date lives on the ledger's lines: a sales user asking by it gets Tryton's refusal,
    # never an empty answer that looks like "nothing is overdue".
    sales = await connector.login("sales_us", PASSWORD)
    with pytest.raises(ErpRefusal) as refused:
        await connector.count(sales, "sales_invoice", [Filter("due_date", Op.LT, "2026-11-30")])
    assert refused.value.refusal.message == 'You are not allowed to access "Account Move Line".'
