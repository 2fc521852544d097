"""General Ledger, Profit and Loss Statement, Balance Sheet: checked against raw GL entries."""

from __future__ import annotations

import datetime as dt
import random
import secrets
from dataclasses import dataclass
from typing import Any

import pytest

from demo_erp.context import Ctx, Settings, as_user
from demo_erp.meta import get_meta
from demo_erp.reports import run

CO = "Sample Trading"
ACCOUNTS = {  # name: (parent, root_type, is_group)
    "Application of Funds (Assets) - ST": (None, "Asset", 1),
    "Current Assets - ST": ("Application of Funds (Assets) - ST", "Asset", 1),
    "Debtors - ST": ("Current Assets - ST", "Asset", 0),
    "Cash - ST": ("Current Assets - ST", "Asset", 0),
    "Stock In Hand - ST": ("Current Assets - ST", "Asset", 0),
    "Source of Funds (Liabilities) - ST": (None, "Liability", 1),
    "Creditors - ST": ("Source of Funds (Liabilities) - ST", "Liability", 0),
    "Equity - ST": (None, "Equity", 1),
    "Capital Stock - ST": ("Equity - ST", "Equity", 0),
    "Income - ST": (None, "Income", 1),
    "Sales - ST": ("Income - ST", "Income", 0),
    "Service - ST": ("Income - ST", "Income", 0),
    "Expenses - ST": (None, "Expense", 1),
    "Cost of Goods Sold - ST": ("Expenses - ST", "Expense", 0),
    "Rent - ST": ("Expenses - ST", "Expense", 0),
    "Unused - ST": ("Expenses - ST", "Expense", 0),
}
TEMPLATES = [
    ("Debtors - ST", "Sales - ST"), ("Debtors - ST", "Service - ST"), ("Cash - ST", "Debtors - ST"),
    ("Cost of Goods Sold - ST", "Stock In Hand - ST"), ("Rent - ST", "Cash - ST"),
    ("Stock In Hand - ST", "Creditors - ST"), ("Creditors - ST", "Cash - ST"),
]  # fmt: skip


@dataclass
class Entry:
    account: str
    debit: int  # cents
    credit: int
    posting_date: str
    voucher_no: str
    branch: str
    cancelled: int = 0


def put(ctx: Ctx, doctype: str, **values: Any) -> str:
    """Insert a row straight into the table (no controllers: ledgers are not posted)."""
    meta = get_meta(doctype)
    assert meta is not None
    row = {"name": secrets.token_hex(5), "owner": "Administrator", "docstatus": 0, "idx": 0,
           "creation": "2026-01-01 00:00:00", "modified": "2026-01-01 00:00:00", **values}  # fmt: skip
    cols = [c for c in row if meta.is_valid_column(c)]
    names = ", ".join(f'"{c}"' for c in cols)
    marks = ", ".join("?" for _ in cols)
    ctx.conn.execute(
        f'insert into "{meta.table_name}" ({names}) values ({marks})', [row[c] for c in cols]
    )
    return str(row["name"])


def post(ctx: Ctx, entries: list[Entry], e: Entry, seq: int) -> None:
    entries.append(e)
    put(ctx, "GL Entry", account=e.account, debit=e.debit / 100, credit=e.credit / 100,
        posting_date=e.posting_date, voucher_type="Journal Entry", voucher_no=e.voucher_no,
        company=CO, branch=e.branch, is_cancelled=e.cancelled,
        creation=f"{e.posting_date} 00:00:{seq % 60:02d}")  # fmt: skip


@pytest.fixture
def ledger(empty_db: tuple[Settings, Ctx]) -> tuple[Settings, Ctx, list[Entry]]:
    settings, ctx = empty_db
    put(ctx, "Company", name=CO, company_name=CO, abbr="ST", default_currency="USD", country="US")
    for lft, (name, (parent, root, group)) in enumerate(ACCOUNTS.items()):
        put(ctx, "Account", name=name, account_name=name[:-5], company=CO, parent_account=parent,
            root_type=root, is_group=group, lft=lft * 2 + 1, rgt=lft * 2 + 2)  # fmt: skip
    for year in (2025, 2026):
        put(ctx, "Fiscal Year", name=str(year), year=str(year), year_start_date=f"{year}-01-01",
            year_end_date=f"{year}-12-31")  # fmt: skip
    rng = random.Random(7)
    entries: list[Entry] = []
    post(ctx, entries, Entry("Cash - ST", 5_000_000, 0, "2025-01-02", "JV-0", "North"), 0)
    post(ctx, entries, Entry("Capital Stock - ST", 0, 5_000_000, "2025-01-02", "JV-0", "North"), 1)
    start = dt.date(2025, 1, 1)
    for n in range(1, 241):
        day = (start + dt.timedelta(days=rng.randrange(699))).isoformat()
        debit_acc, credit_acc = rng.choice(TEMPLATES)
        amount = rng.randrange(1_000, 900_000)
        branch = rng.choice(["North", "South"])
        cancelled = int(n % 25 == 0)
        post(ctx, entries, Entry(debit_acc, amount, 0, day, f"JV-{n}", branch, cancelled), 2 * n)
        post(
            ctx, entries, Entry(credit_acc, 0, amount, day, f"JV-{n}", branch, cancelled), 2 * n + 1
        )
    # One voucher touching Cash twice: the consolidated view nets it into one line.
    for i, (acc, dr, cr) in enumerate([("Cash - ST", 10_000, 0), ("Cash - ST", 0, 3_000),
                                       ("Sales - ST", 0, 7_000)]):  # fmt: skip
        post(ctx, entries, Entry(acc, dr, cr, "2026-03-15", "JV-NET", "South"), 1000 + i)
    # Another company's books must never show up.
    put(ctx, "GL Entry", account="Cash - OT", debit=999, credit=0, posting_date="2026-02-01",
        voucher_type="Journal Entry", voucher_no="JV-OTHER", company="Other Co")  # fmt: skip
    return settings, ctx, entries


def net(
    entries: list[Entry], accounts: set[str], start: str = "", end: str = "9999", branch: str = ""
) -> int:
    """Σ debit − credit in cents of live entries on these accounts within [start, end]."""
    return sum(
        e.debit - e.credit
        for e in entries
        if e.account in accounts and not e.cancelled and start <= e.posting_date <= end
        and (not branch or e.branch == branch)
    )  # fmt: skip


def of_root(root: str) -> set[str]:
    return {name for name, (_, r, group) in ACCOUNTS.items() if r == root and not group}


def by_account(result: list[Any]) -> dict[str, dict[str, Any]]:
    return {r["account"]: r for r in result if isinstance(r, dict) and r.get("account")}


# ---------------------------------------------------------------- General Ledger


def test_general_ledger_opening_entries_total_closing(
    ledger: tuple[Settings, Ctx, list[Entry]],
) -> None:
    _, ctx, entries = ledger
    filters = {
        "company": CO,
        "from_date": "2026-01-01",
        "to_date": "2026-06-30",
        "account": '["Debtors - ST"]',
    }
    out = run(ctx, "General Ledger", filters)
    rows = out["result"]
    assert out["add_total_row"] == 0
    assert all(isinstance(r, dict) for r in rows)
    assert [rows[0]["account"], rows[-2]["account"], rows[-1]["account"]] == [
        "'Opening'", "'Total'", "'Closing (Opening + Total)'"
    ]  # fmt: skip
    debtors = {"Debtors - ST"}
    opening = net(entries, debtors, end="2025-12-31")
    period = [e for e in entries if e.account == "Debtors - ST" and not e.cancelled
              and "2026-01-01" <= e.posting_date <= "2026-06-30"]  # fmt: skip
    assert rows[0]["balance"] == round(opening / 100, 2)
    body = rows[1:-2]
    assert len(body) == len(period)
    assert [r["posting_date"] for r in body] == sorted(r["posting_date"] for r in body)
    assert rows[-2]["debit"] == round(sum(e.debit for e in period) / 100, 2)
    assert rows[-2]["credit"] == round(sum(e.credit for e in period) / 100, 2)
    closing = net(entries, debtors, end="2026-06-30")
    assert rows[-1]["balance"] == round(closing / 100, 2) == body[-1]["balance"]
    assert rows[-1]["debit"] == round((rows[0]["debit"] + rows[-2]["debit"]), 2)
    fieldnames = [c["fieldname"] for c in out["columns"]]
    assert fieldnames[:6] == ["gl_entry", "posting_date", "account", "debit", "credit", "balance"]
    assert "Debit (USD)" in [c["label"] for c in out["columns"]]


def test_general_ledger_group_account_cancelled_and_consolidation(
    ledger: tuple[Settings, Ctx, list[Entry]],
) -> None:
    _, ctx, entries = ledger
    base = {"company": CO, "from_date": "2026-03-01", "to_date": "2026-03-31"}
    current = {n for n in ACCOUNTS if ACCOUNTS[n][0] == "Current Assets - ST"}
    rows = run(ctx, "General Ledger", {**base, "account": ["Current Assets - ST"]})["result"]
    assert rows[-1]["balance"] == round(net(entries, current, end="2026-03-31") / 100, 2)
    netted = [r for r in rows if r.get("voucher_no") == "JV-NET"]
    assert [(r["account"], r["debit"], r["credit"]) for r in netted] == [("Cash - ST", 70.0, 0.0)]
    split = run(
        ctx,
        "General Ledger",
        {**base, "voucher_no": "JV-NET", "categorize_by": "Categorize by Voucher"},
    )
    assert [(r["debit"], r["credit"]) for r in split["result"][1:-2]] == [
        (100.0, 0.0),
        (0.0, 30.0),
        (0.0, 70.0),
    ]
    everything = {**base, "from_date": "2025-01-01", "to_date": "2026-12-31"}
    live = run(ctx, "General Ledger", everything)["result"]
    with_cancelled = run(ctx, "General Ledger", {**everything, "show_cancelled_entries": 1})[
        "result"
    ]
    cancelled = {e.voucher_no for e in entries if e.cancelled}
    assert cancelled
    assert not cancelled & {r.get("voucher_no") for r in live}
    assert cancelled <= {r.get("voucher_no") for r in with_cancelled}
    assert "JV-OTHER" not in {r.get("voucher_no") for r in with_cancelled}
    assert live[-1]["debit"] == live[-1]["credit"]  # the books balance


def test_general_ledger_categorize_by_account(ledger: tuple[Settings, Ctx, list[Entry]]) -> None:
    _, ctx, entries = ledger
    filters = {"company": CO, "from_date": "2026-01-01", "to_date": "2026-01-31",
               "categorize_by": "Categorize by Account"}  # fmt: skip
    rows = run(ctx, "General Ledger", filters)["result"]
    closings = [i for i, r in enumerate(rows) if r.get("account") == "'Closing (Opening + Total)'"]
    assert len(closings) >= 3
    for i in closings[:-1]:  # one block per account: its closing is that account's balance
        account = rows[i - 2]["account"]
        assert rows[i]["balance"] == round(net(entries, {account}, end="2026-01-31") / 100, 2)


# ---------------------------------------------------------------- Profit and Loss


def test_profit_and_loss_yearly(ledger: tuple[Settings, Ctx, list[Entry]]) -> None:
    _, ctx, entries = ledger
    out = run(ctx, "Profit and Loss Statement", {"company": CO, "from_fiscal_year": "2025",
                                                 "to_fiscal_year": "2025", "periodicity": "Yearly"})  # fmt: skip
    assert out["add_total_row"] == 0
    assert [(c["fieldname"], c["label"]) for c in out["columns"][2:]] == [("dec_2025", "2025")]
    rows = by_account(out["result"])
    income = -net(entries, of_root("Income"), "2025-01-01", "2025-12-31")
    expense = net(entries, of_root("Expense"), "2025-01-01", "2025-12-31")
    assert rows["'Total Income (Credit)'"]["dec_2025"] == round(income / 100, 2)
    assert rows["'Total Expense (Debit)'"]["dec_2025"] == round(expense / 100, 2)
    assert rows["'Profit for the year'"]["dec_2025"] == round((income - expense) / 100, 2)
    assert rows["Sales - ST"]["dec_2025"] == round(
        -net(entries, {"Sales - ST"}, "2025-01-01", "2025-12-31") / 100, 2
    )
    assert rows["Sales - ST"]["indent"] == 1.0
    assert rows["Income - ST"]["is_group"] == 1
    assert rows["Sales - ST"]["parent_account"] == "Income - ST"
    assert rows["Income - ST"]["parent_account"] == ""
    assert "Unused - ST" not in rows  # zero rows are left out
    accounts = [r.get("account") for r in out["result"]]
    assert (
        accounts.index("Income - ST")
        < accounts.index("Sales - ST")
        < accounts.index("'Total Income (Credit)'")
    )
    summary = {s["label"]: s["value"] for s in out["report_summary"] if "label" in s}
    assert summary == {
        "Total Income This Year": round(income / 100, 2),
        "Total Expense This Year": round(expense / 100, 2),
        "Profit This Year": round((income - expense) / 100, 2),
    }


def test_profit_and_loss_monthly_and_accumulated(ledger: tuple[Settings, Ctx, list[Entry]]) -> None:
    _, ctx, entries = ledger
    base = {"company": CO, "from_fiscal_year": "2026", "to_fiscal_year": "2026"}
    pl = of_root("Income") | of_root("Expense")
    out = run(ctx, "Profit and Loss Statement", {**base, "periodicity": "Monthly"})
    keys = [c["fieldname"] for c in out["columns"][2:]]
    assert keys[0] == "jan_2026"
    assert keys[-2:] == ["dec_2026", "total"]
    assert out["columns"][2]["label"] == "Jan 2026"
    profit = by_account(out["result"])["'Profit for the year'"]
    for month in range(1, 13):
        start = dt.date(2026, month, 1)
        end = (start + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
        expected = -net(entries, pl, start.isoformat(), end.isoformat())
        assert profit[f"{start:%b}_2026".lower()] == round(expected / 100, 2)
    year = round(-net(entries, pl, "2026-01-01", "2026-12-31") / 100, 2)
    assert profit["total"] == year
    summary = {s["label"]: s["value"] for s in out["report_summary"] if "label" in s}
    assert summary["Net Profit"] == year
    acc = run(
        ctx,
        "Profit and Loss Statement",
        {**base, "periodicity": "Quarterly", "accumulated_values": 1},
    )
    assert [c["fieldname"] for c in acc["columns"][2:]] == [
        "mar_2026",
        "jun_2026",
        "sep_2026",
        "dec_2026",
    ]
    assert acc["columns"][3]["label"] == "Jan 26-Jun 26"
    running = by_account(acc["result"])["'Profit for the year'"]
    assert running["dec_2026"] == year
    assert running["jun_2026"] == round(-net(entries, pl, "2026-01-01", "2026-06-30") / 100, 2)
    ranged = run(ctx, "Profit and Loss Statement", {"company": CO, "filter_based_on": "Date Range",
                 "period_start_date": "2026-02-01", "period_end_date": "2026-04-30", "periodicity": "Yearly"})  # fmt: skip
    assert [c["fieldname"] for c in ranged["columns"][2:]] == ["apr_2026"]
    assert by_account(ranged["result"])["'Profit for the year'"]["apr_2026"] == round(
        -net(entries, pl, "2026-02-01", "2026-04-30") / 100, 2
    )


def test_profit_and_loss_respects_branch_permission(
    ledger: tuple[Settings, Ctx, list[Entry]],
) -> None:
    settings, ctx, entries = ledger
    put(
        ctx,
        "User",
        name="south@example.com",
        email="south@example.com",
        first_name="S",
        user_type="System User",
    )
    put(
        ctx,
        "Has Role",
        parent="south@example.com",
        parentfield="roles",
        parenttype="User",
        role="Auditor",
    )
    put(ctx, "User Permission", user="south@example.com", allow="Branch", for_value="South")
    south = as_user(ctx.conn, settings, "south@example.com")
    filters = {"company": CO, "from_fiscal_year": "2026", "to_fiscal_year": "2026"}
    rows = by_account(run(south, "Profit and Loss Statement", filters)["result"])
    pl = of_root("Income") | of_root("Expense")
    expected = -net(entries, pl, "2026-01-01", "2026-12-31", branch="South")
    assert rows["'Profit for the year'"]["dec_2026"] == round(expected / 100, 2)
    assert expected != -net(entries, pl, "2026-01-01", "2026-12-31")


# ---------------------------------------------------------------- Balance Sheet


def test_balance_sheet_balances(ledger: tuple[Settings, Ctx, list[Entry]]) -> None:
    _, ctx, entries = ledger
    out = run(
        ctx, "Balance Sheet", {"company": CO, "from_fiscal_year": "2026", "to_fiscal_year": "2026"}
    )
    assert out["add_total_row"] == 0
    rows = by_account(out["result"])
    asset = net(entries, of_root("Asset"), end="2026-12-31")
    liability = -net(entries, of_root("Liability"), end="2026-12-31")
    equity = -net(entries, of_root("Equity"), end="2026-12-31")
    pl = of_root("Income") | of_root("Expense")
    assert rows["'Total Asset (Debit)'"]["dec_2026"] == round(asset / 100, 2)
    assert rows["'Total Liability (Credit)'"]["dec_2026"] == round(liability / 100, 2)
    assert rows["'Total Equity (Credit)'"]["dec_2026"] == round(equity / 100, 2)
    assert rows["Cash - ST"]["dec_2026"] == round(net(entries, {"Cash - ST"}) / 100, 2)
    provisional = rows["'Provisional Profit / Loss (Credit)'"]["dec_2026"]
    unclosed = rows["'Unclosed Fiscal Years Profit / Loss (Credit)'"]["dec_2026"]
    assert provisional == round(-net(entries, pl, "2026-01-01", "2026-12-31") / 100, 2)
    assert unclosed == round(-net(entries, pl, end="2025-12-31") / 100, 2)
    assert out["message"] == "Previous Financial Year is not closed"
    assert round(liability / 100 + equity / 100 + provisional + unclosed, 2) == round(
        asset / 100, 2
    )
    assert rows["'Total (Credit)'"]["dec_2026"] == round(asset / 100, 2)
    summary = {s["label"]: s["value"] for s in out["report_summary"]}
    assert summary["Total Asset"] == round(asset / 100, 2)
    assert summary["Provisional Profit / Loss (Credit)"] == provisional
    monthly = run(ctx, "Balance Sheet", {"company": CO, "from_fiscal_year": "2026", "to_fiscal_year": "2026",
                                         "periodicity": "Monthly", "accumulated_values": 1})  # fmt: skip
    cash = by_account(monthly["result"])["Cash - ST"]
    assert cash["mar_2026"] == round(net(entries, {"Cash - ST"}, end="2026-03-31") / 100, 2)
    assert cash["opening_balance"] == round(net(entries, {"Cash - ST"}, end="2025-12-31") / 100, 2)
    assert "total" not in [c["fieldname"] for c in monthly["columns"]]


def test_ledger_reports_filter_by_project_they_do_not_store(
    ledger: tuple[Settings, Ctx, list[Entry]],
) -> None:
    _, ctx, _ = ledger
    gl = run(
        ctx,
        "General Ledger",
        {"company": CO, "from_date": "2026-01-01", "to_date": "2026-12-31", "project": "P1"},
    )
    assert [r["account"] for r in gl["result"]] == [
        "'Opening'",
        "'Total'",
        "'Closing (Opening + Total)'",
    ]
    assert gl["result"][-1]["balance"] == 0
    pl = run(
        ctx,
        "Profit and Loss Statement",
        {"company": CO, "from_fiscal_year": "2026", "project": ["P1"]},
    )
    assert pl["result"] == []


def test_filters_arrive_as_json_text(ledger: tuple[Settings, Ctx, list[Entry]]) -> None:
    _, ctx, entries = ledger
    text = '{"company": "Sample Trading", "from_date": "2026-01-01", "to_date": "2026-01-31", "account": ["Cash - ST"]}'
    rows = run(ctx, "General Ledger", text)["result"]
    assert rows[-1]["balance"] == round(net(entries, {"Cash - ST"}, end="2026-01-31") / 100, 2)
