"""The ERPNext connector against the demo ERP over real HTTP, as several demo users."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest

from conftest import DemoERP, raw
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.connectors.query import (
    AggregateRequest,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.errors import ErpAuthenticationError, ErpRefusal, ErpSessionExpired

pytestmark = pytest.mark.anyio
PASSWORD = "demo"


@pytest.fixture
async def erp(demo_erp: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(demo_erp.url)
    yield connector
    await connector.aclose()


@pytest.fixture
async def erp16(demo_erp: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(demo_erp.v16_url)
    yield connector
    await connector.aclose()


async def as_user(connector: ERPNextConnector, user: str) -> Credential:
    return await connector.login(user, PASSWORD)


# ------------------------------------------------------------------ sign-in


async def test_login_roles_and_failures(erp: ERPNextConnector) -> None:
    cred = await as_user(erp, "accounts@demo.local")
    assert cred.kind == "session"
    assert "secret" not in repr(cred)
    assert cred.sid not in repr(cred)
    assert "Accounts User" in await erp.roles(cred)
    with pytest.raises(ErpAuthenticationError, match="Invalid login credentials"):
        await erp.login("accounts@demo.local", "wrong")


async def test_expired_session_is_a_clear_error(erp: ERPNextConnector) -> None:
    cred = await as_user(erp, "accounts@demo.local")
    await erp.client.logout(cred)
    with pytest.raises(ErpSessionExpired, match="sign in again"):
        await erp.count(cred, "sales_invoice")


async def test_api_key_credential(erp: ERPNextConnector) -> None:
    from demo_erp.seed import api_credentials

    key, secret = api_credentials(42, "stock@demo.local")
    cred = Credential.token("stock@demo.local", key, secret)
    assert await erp.client.whoami(cred) == "stock@demo.local"


# ------------------------------------------------------------------ permissions


async def test_sales_user_cannot_read_salary_slips(erp: ERPNextConnector) -> None:
    cred = await as_user(erp, "sales@demo.local")
    with pytest.raises(ErpRefusal) as caught:
        await erp.list(cred, "salary_slip")
    refusal = caught.value.refusal
    assert refusal.status == 403
    assert refusal.exc_type == "PermissionError"
    assert refusal.message == (
        "User sales@demo.local does not have doctype access via role permission for document Salary Slip"
    )


async def test_kisumu_manager_sees_no_mombasa_invoice_anywhere(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    cred = await as_user(erp, "kisumu.manager@demo.local")
    mombasa = raw(
        demo_erp,
        "select name from `tabSales Invoice` where branch = 'Mombasa' and docstatus = 1 limit 1",
    )
    assert mombasa, "the seed has Mombasa invoices"
    # list
    page = await erp.list(cred, "sales_invoice", filters=[Filter("branch", Op.EQ, "Mombasa")])
    assert page.records == []
    everything = await erp.list(cred, "sales_invoice", fields=["id", "branch"], limit=0)
    assert everything.records
    assert {r["branch"] for r in everything.records} <= {"Kisumu", None}
    # get
    with pytest.raises(ErpRefusal) as caught:
        await erp.get(cred, "sales_invoice", mombasa[0]["name"])
    assert caught.value.refusal.status == 403
    # count
    assert await erp.count(cred, "sales_invoice", [Filter("branch", Op.EQ, "Mombasa")]) == 0
    # aggregate
    result = await erp.aggregate(
        cred,
        "sales_invoice",
        AggregateRequest((Measure(Func.SUM, "total"),), (GroupKey("branch"),)),
    )
    assert {r["branch"] for r in result.rows} <= {"Kisumu", None}
    # report
    report = await erp.run_report(cred, "accounts_receivable", {"company": "Savanna Trading Ltd"})
    names = {r["voucher_no"] for r in report.rows}
    branches = {
        row["branch"]
        for row in raw(demo_erp, "select name, branch from `tabSales Invoice`")
        if row["name"] in names
    }
    assert branches <= {"Kisumu", None}


async def test_over_issue_returns_insufficient_stock_verbatim(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    cred = await as_user(erp, "stock@demo.local")
    row = raw(
        demo_erp,
        "select item_code, warehouse, actual_qty from tabBin b join tabWarehouse w on w.name = b.warehouse "
        "where w.company = 'Savanna Trading Ltd' and actual_qty > 0 order by actual_qty limit 1",
    )[0]
    draft = await erp.create(
        cred,
        "stock_entry",
        {
            "entry_type": "Material Issue",
            "company": "Savanna Trading Ltd",
            "date": "2026-11-30",
            "from_warehouse": row["warehouse"],
            "items": [
                {
                    "item": row["item_code"],
                    "qty": row["actual_qty"] + 5,
                    "from_warehouse": row["warehouse"],
                }
            ],
        },
    )
    with pytest.raises(ErpRefusal) as caught:
        await erp.submit(cred, "stock_entry", str(draft["id"]))
    refusal = caught.value.refusal
    assert refusal.exc_type == "NegativeStockError"
    assert refusal.status == 417
    assert refusal.title == "Insufficient Stock"
    assert refusal.message.startswith("5.0 units of Item ")
    assert refusal.message.endswith("to complete this transaction.")


# ------------------------------------------------------------------ exact aggregates


def _independent_sums(demo: DemoERP, year: str) -> dict[str, Decimal]:
    sums: dict[str, Decimal] = defaultdict(Decimal)
    for r in raw(
        demo,
        "select customer, grand_total from `tabSales Invoice` where docstatus = 1 and posting_date like ?",
        f"{year}%",
    ):
        sums[r["customer"]] += Decimal(str(r["grand_total"]))
    return sums


@pytest.mark.parametrize("version", [15, 16])
async def test_aggregates_equal_sums_from_raw_rows(
    erp: ERPNextConnector, erp16: ERPNextConnector, demo_erp: DemoERP, version: int
) -> None:
    connector = erp if version == 15 else erp16
    cred = await as_user(connector, "accounts.manager@demo.local")
    request = AggregateRequest(
        (Measure(Func.SUM, "total"), Measure(Func.COUNT)),
        (GroupKey("customer"),),
        (
            Filter("date", Op.BETWEEN, ["2026-01-01", "2026-12-31"]),
            Filter("status", Op.NE, "Cancelled"),
            Filter("status", Op.NE, "Draft"),
        ),
    )
    pushed = await connector.aggregate(cred, "sales_invoice", request)
    assert pushed.method == "pushdown"
    assert ("v16" in pushed.detail) == (version == 16)
    expected = _independent_sums(demo_erp, "2026")
    got = {
        r["customer"]: Decimal(str(r["sum_total"])).quantize(Decimal("0.01")) for r in pushed.rows
    }
    assert got == {k: v.quantize(Decimal("0.01")) for k, v in expected.items()}
    assert pushed.record_count == sum(r["count_records"] for r in pushed.rows)
    chunked = ERPNextConnector(connector.base_url, allow_pushdown=False)
    try:
        slow = await chunked.aggregate(
            await as_user(chunked, "accounts.manager@demo.local"), "sales_invoice", request
        )
    finally:
        await chunked.aclose()
    assert slow.method == "chunked"
    assert {
        r["customer"]: Decimal(str(r["sum_total"])).quantize(Decimal("0.01")) for r in slow.rows
    } == got
    assert slow.record_count == pushed.record_count


async def test_aggregate_by_month_of_a_date(erp: ERPNextConnector, demo_erp: DemoERP) -> None:
    cred = await as_user(erp, "accounts.manager@demo.local")
    result = await erp.aggregate(
        cred,
        "sales_invoice",
        AggregateRequest(
            (Measure(Func.SUM, "base_total"),),
            (GroupKey("date", DatePart.YEAR), GroupKey("date", DatePart.MONTH)),
            (Filter("status", Op.NOT_IN, ["Draft", "Cancelled"]),),
        ),
    )
    expected: dict[tuple[int, int], Decimal] = defaultdict(Decimal)
    for r in raw(
        demo_erp,
        "select posting_date, base_grand_total from `tabSales Invoice` where docstatus = 1",
    ):
        expected[(int(r["posting_date"][:4]), int(r["posting_date"][5:7]))] += Decimal(
            str(r["base_grand_total"])
        )
    got = {
        (r["year_date"], r["month_date"]): Decimal(str(r["sum_base_total"])).quantize(
            Decimal("0.01")
        )
        for r in result.rows
    }
    assert got == {k: v.quantize(Decimal("0.01")) for k, v in expected.items()}
    assert len(got) >= 24


async def test_v16_refuses_strings_so_fallback_is_exact(demo_erp: DemoERP) -> None:
    """A v16 site given v15 syntax refuses it; the connector then computes in chunks, exactly."""
    connector = ERPNextConnector(demo_erp.v16_url)
    try:
        cred = await as_user(connector, "accounts.manager@demo.local")
        connector.client._version = 15  # a site that reports the wrong version
        result = await connector.aggregate(
            cred,
            "sales_invoice",
            AggregateRequest((Measure(Func.SUM, "total"),), (GroupKey("company"),)),
        )
    finally:
        await connector.aclose()
    assert result.method == "chunked"
    assert "SQL functions are not allowed as strings" in result.detail
    expected: dict[str, Decimal] = defaultdict(Decimal)
    for r in raw(demo_erp, "select company, grand_total from `tabSales Invoice`"):
        expected[r["company"]] += Decimal(str(r["grand_total"]))
    assert {r["company"]: round(r["sum_total"], 2) for r in result.rows} == {
        k: float(v) for k, v in expected.items()
    }


# ------------------------------------------------------------------ records, reports, metadata


async def test_list_get_and_paging_never_silently_capped(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    cred = await as_user(erp, "accounts.manager@demo.local")
    first = await erp.list(
        cred,
        "sales_invoice",
        fields=["id", "customer", "total"],
        order_by=[("date", "asc")],
        limit=5,
    )
    assert len(first.records) == 5
    assert first.has_more
    doc = await erp.get(cred, "sales_invoice", str(first.records[0]["id"]))
    assert doc["items"]
    assert doc["items"][0]["item"]
    assert erp.link("sales_invoice", doc) == f"{erp.base_url}/app/sales-invoice/{doc['id']}"
    total = raw(demo_erp, "select count(*) as n from `tabSales Invoice`")[0]["n"]
    assert await erp.count(cred, "sales_invoice") == total


async def test_accounts_receivable_report_reconciles(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    cred = await as_user(erp, "accounts.manager@demo.local")
    report = await erp.run_report(
        cred,
        "accounts_receivable",
        {"company": "Savanna Trading Ltd", "ageing_ranges": [30, 60, 90]},
    )
    labels = [c["label"] for c in report.columns if c["fieldname"].startswith("range")]
    assert labels == ["0-30", "31-60", "61-90", "91-Above"]
    outstanding = sum(Decimal(str(r["outstanding"])) for r in report.rows)
    expected = sum(
        Decimal(str(r["outstanding_amount"]))
        for r in raw(
            demo_erp,
            "select outstanding_amount from `tabSales Invoice` where docstatus = 1 and company = 'Savanna Trading Ltd' and outstanding_amount != 0",
        )
    )
    assert outstanding.quantize(Decimal("0.01")) == expected.quantize(Decimal("0.01"))
    assert report.total_row is not None


async def test_prepared_report_is_run_not_queued(erp: ERPNextConnector) -> None:
    cred = await as_user(erp, "stock@demo.local")
    report = await erp.run_report(
        cred, "stock_balance", {"from_date": "2026-11-01", "to_date": "2026-11-30"}
    )
    assert not report.prepared
    assert report.rows


async def test_describe_includes_custom_fields(erp: ERPNextConnector) -> None:
    cred = await as_user(erp, "accounts@demo.local")
    fields = {f.native: f for f in await erp.describe(cred, "sales_invoice")}
    assert fields["branch"].custom
    assert fields["grand_total"].name == "total"
    assert not fields["posting_date"].custom


async def test_workflow_actions_are_the_users_own(erp: ERPNextConnector, demo_erp: DemoERP) -> None:
    pending = raw(
        demo_erp,
        "select name, owner from `tabPurchase Order` where workflow_state = 'Pending Approval' and docstatus = 0 limit 1",
    )
    assert pending
    name = pending[0]["name"]
    manager = await as_user(erp, "purchase.manager@demo.local")
    info = await erp.workflow(manager, "purchase_order", name)
    assert info is not None
    assert info.current_state == "Pending Approval"
    assert {t.action for t in info.available_actions} == {"Approve", "Reject"}
    assert {t.state for t in info.transitions} >= {"Draft", "Pending Approval"}
    clerk = await as_user(erp, "purchase@demo.local")
    clerk_info = await erp.workflow(clerk, "purchase_order", name)
    assert clerk_info is not None
    assert clerk_info.available_actions == []
    with pytest.raises(ErpRefusal) as caught:
        await erp.apply_workflow_action(clerk, "purchase_order", name, "Approve")
    assert caught.value.refusal.message == "Not a valid Workflow Action"
    approved = await erp.apply_workflow_action(manager, "purchase_order", name, "Approve")
    assert approved["workflow_state"] == "Approved"


async def test_changes_since_sees_edits_and_deletions(erp: ERPNextConnector) -> None:
    cred = await as_user(erp, "admin@demo.local")
    first = await erp.changes_since(cred, "lead", None, limit=100_000)
    assert first.complete
    assert first.watermark
    lead = await erp.create(cred, "lead", {"name": "Delta Sync Prospect"})
    edited = await erp.update(cred, "lead", str(lead["id"]), {"organization": "Delta Ltd"})
    later = await erp.changes_since(cred, "lead", first.watermark)
    assert str(lead["id"]) in {r["id"] for r in later.records}
    assert any(r["id"] == lead["id"] and r["organization"] == "Delta Ltd" for r in later.records)
    assert edited["organization"] == "Delta Ltd"
    await erp.client.delete(cred, "Lead", str(lead["id"]))
    after_delete = await erp.changes_since(cred, "lead", later.watermark)
    assert str(lead["id"]) in after_delete.deleted


async def test_access_is_asked_of_the_erp(erp: ERPNextConnector) -> None:
    sales = await as_user(erp, "sales@demo.local")
    assert (await erp.access(sales, "salary_slip"))["read"] is False
    quotation = await erp.access(sales, "quotation")
    assert quotation["read"]
    assert quotation["create"]
    assert quotation["submit"]
    assert await erp.report_access(sales, "accounts_receivable") is False
    accounts = await as_user(erp, "accounts@demo.local")
    assert await erp.report_access(accounts, "accounts_receivable") is True
