"""The standard reports over real HTTP on the seeded data set, reconciled with raw rows."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest

from conftest import DemoERP, raw

COMPANY = "Savanna Trading Ltd"
D = Decimal


def run(
    demo: DemoERP, user: str, report: str, filters: dict[str, object], **extra: object
) -> dict[str, object]:
    with httpx.Client(base_url=demo.url, timeout=60) as client:
        assert (
            client.post("/api/method/login", json={"usr": user, "pwd": "demo"}).status_code == 200
        )
        reply = client.get(
            "/api/method/frappe.desk.query_report.run",
            params={
                "report_name": report,
                "filters": json.dumps(filters),
                **{k: str(v) for k, v in extra.items()},
            },
        )
    assert reply.status_code == 200, reply.text
    return reply.json()["message"]  # type: ignore[no-any-return]


def money(value: object) -> Decimal:
    return D(str(value or 0)).quantize(D("0.01"))


def test_accounts_receivable_equals_outstanding_of_submitted_invoices(demo_erp: DemoERP) -> None:
    report = run(
        demo_erp, "accounts.manager@demo.local", "Accounts Receivable", {"company": COMPANY}
    )
    rows = [r for r in report["result"] if isinstance(r, dict)]  # type: ignore[union-attr]
    total_row = report["result"][-1]  # type: ignore[index]
    assert isinstance(total_row, list)
    [(expected,)] = raw(
        demo_erp,
        "select sum(outstanding_amount) from `tabSales Invoice` where docstatus = 1 and company = ? and outstanding_amount != 0",
        COMPANY,
    )
    assert sum(money(r["outstanding"]) for r in rows) == money(expected)


def test_profit_and_loss_net_profit_equals_the_ledger(demo_erp: DemoERP) -> None:
    report = run(
        demo_erp, "accounts.manager@demo.local", "Profit and Loss Statement",
        {"company": COMPANY, "filter_based_on": "Fiscal Year", "from_fiscal_year": "2026", "to_fiscal_year": "2026", "periodicity": "Yearly"},
    )  # fmt: skip
    profit = next(
        r
        for r in report["result"]
        if isinstance(r, dict) and r.get("account") == "'Profit for the year'"
    )  # type: ignore[union-attr]
    [(expected,)] = raw(
        demo_erp,
        "select sum(g.credit) - sum(g.debit) from `tabGL Entry` g join tabAccount a on a.name = g.account "
        "where g.company = ? and g.is_cancelled = 0 and a.root_type in ('Income', 'Expense') "
        "and g.posting_date between '2026-01-01' and '2026-12-31'",
        COMPANY,
    )
    assert money(profit["total"]) == money(expected)


def test_balance_sheet_balances(demo_erp: DemoERP) -> None:
    report = run(
        demo_erp, "accounts.manager@demo.local", "Balance Sheet",
        {"company": COMPANY, "filter_based_on": "Fiscal Year", "from_fiscal_year": "2026", "to_fiscal_year": "2026", "periodicity": "Yearly"},
    )  # fmt: skip
    [(assets,)] = raw(
        demo_erp,
        "select sum(g.debit) - sum(g.credit) from `tabGL Entry` g join tabAccount a on a.name = g.account "
        "where g.company = ? and g.is_cancelled = 0 and a.root_type = 'Asset' and g.posting_date <= '2026-12-31'",
        COMPANY,
    )
    [(claims,)] = raw(
        demo_erp,
        "select sum(g.credit) - sum(g.debit) from `tabGL Entry` g join tabAccount a on a.name = g.account "
        "where g.company = ? and g.is_cancelled = 0 and g.posting_date <= '2026-12-31' "
        "and a.root_type in ('Liability', 'Equity', 'Income', 'Expense')",
        COMPANY,
    )
    assert money(assets) == money(
        claims
    )  # the ledger balances: assets = liabilities + equity + profit
    rows = [r for r in report["result"] if isinstance(r, dict) and r.get("account")]  # type: ignore[union-attr]
    total_assets = next(r for r in rows if "Total Asset" in str(r["account"]))
    assert money(total_assets["total"]) == money(assets)


def test_stock_balance_equals_the_stock_ledger(demo_erp: DemoERP) -> None:
    report = run(
        demo_erp, "stock@demo.local", "Stock Balance",
        {"company": COMPANY, "from_date": "2024-01-01", "to_date": "2026-11-30"}, ignore_prepared_report=1,
    )  # fmt: skip
    rows = [r for r in report["result"] if isinstance(r, dict)]  # type: ignore[union-attr]
    got = {(r["item_code"], r["warehouse"]): D(str(r["bal_qty"])) for r in rows}
    expected = {
        (item, wh): D(str(qty))
        for item, wh, qty in raw(
            demo_erp,
            "select item_code, warehouse, sum(actual_qty) from `tabStock Ledger Entry` where is_cancelled = 0 "
            "and company = ? and posting_date <= '2026-11-30' group by item_code, warehouse having sum(actual_qty) != 0",
            COMPANY,
        )
    }
    assert {k: v for k, v in got.items() if v != 0} == expected


def test_branch_manager_report_shows_only_their_branch(demo_erp: DemoERP) -> None:
    report = run(demo_erp, "kisumu.manager@demo.local", "Accounts Receivable", {"company": COMPANY})
    vouchers = {r["voucher_no"] for r in report["result"] if isinstance(r, dict)}  # type: ignore[union-attr]
    assert vouchers
    branches = {
        b
        for (n, b) in raw(demo_erp, "select name, branch from `tabSales Invoice`")
        if n in vouchers
    }
    assert branches <= {"Kisumu", None}


@pytest.mark.parametrize("user", ["sales@demo.local", "employee@demo.local"])
def test_report_without_the_role_is_refused(demo_erp: DemoERP, user: str) -> None:
    with httpx.Client(base_url=demo_erp.url) as client:
        client.post("/api/method/login", json={"usr": user, "pwd": "demo"})
        reply = client.get(
            "/api/method/frappe.desk.query_report.run",
            params={"report_name": "General Ledger", "filters": "{}"},
        )
    assert reply.status_code == 403
    assert "You don't have access to Report: General Ledger" in reply.text
