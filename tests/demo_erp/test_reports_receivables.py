"""Accounts Receivable / Payable reports: figures checked against the invoices themselves."""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

import pytest

from demo_erp.context import Ctx, Settings, as_user
from demo_erp.exceptions import PermissionError, ValidationError
from demo_erp.meta import get_meta
from demo_erp.reports import run

TODAY = dt.date(2026, 11, 30)
COMPANY = "Sample Trading"


def put(
    ctx: Ctx, doctype: str, children: dict[str, list[dict[str, Any]]] | None = None, **values: Any
) -> str:
    """Insert a row straight into the table (no controllers: ledgers are not posted)."""
    meta = get_meta(doctype)
    assert meta is not None
    row = {"name": secrets.token_hex(5), "owner": "Administrator", "creation": "2026-01-01 00:00:00",
           "modified": "2026-01-01 00:00:00", "docstatus": 0, "idx": 0, **values}  # fmt: skip
    cols = [c for c in row if meta.is_valid_column(c)]
    names = ", ".join(f'"{c}"' for c in cols)
    marks = ", ".join("?" for _ in cols)
    ctx.conn.execute(
        f'insert into "{meta.table_name}" ({names}) values ({marks})', [row[c] for c in cols]
    )
    for fieldname, rows in (children or {}).items():
        field = meta.get_field(fieldname)
        assert field is not None
        for i, child in enumerate(rows, start=1):
            put(ctx, field.options, parent=row["name"], parentfield=fieldname, parenttype=doctype,
                idx=i, docstatus=row["docstatus"], **child)  # fmt: skip
    return str(row["name"])


def days_ago(n: int) -> str:
    return (TODAY - dt.timedelta(days=n)).isoformat()


def make_user(
    ctx: Ctx, settings: Settings, email: str, roles: list[str], branch: str | None = None
) -> Ctx:
    put(ctx, "User", name=email, email=email, first_name="Test", user_type="System User", enabled=1)
    for role in roles:
        put(ctx, "Has Role", parent=email, parentfield="roles", parenttype="User", role=role)
    if branch:
        put(ctx, "User Permission", user=email, allow="Branch", for_value=branch)
    return as_user(ctx.conn, settings, email)


def invoice(ctx: Ctx, name: str, customer: str, total: float, outstanding: float, posted: int, due: int,
            branch: str = "North", docstatus: int = 1, **extra: Any) -> str:  # fmt: skip
    return put(
        ctx, "Sales Invoice", name=name, customer=customer, customer_name=f"{customer} Ltd",
        company=COMPANY, posting_date=days_ago(posted), due_date=days_ago(due), grand_total=total,
        outstanding_amount=outstanding, docstatus=docstatus, branch=branch, currency="USD",
        debit_to="Debtors - ST", **extra,
    )  # fmt: skip


@pytest.fixture
def ar(empty_db: tuple[Settings, Ctx]) -> tuple[Settings, Ctx]:
    settings, ctx = empty_db
    put(
        ctx,
        "Company",
        name=COMPANY,
        company_name=COMPANY,
        abbr="ST",
        default_currency="USD",
        country="US",
    )
    for name, parent in (("All Territories", None), ("Europe", "All Territories"),
                         ("France", "Europe"), ("Asia", "All Territories")):  # fmt: skip
        put(ctx, "Territory", name=name, territory_name=name, parent_territory=parent)
    for name, parent in (("All Customer Groups", None), ("Commercial", "All Customer Groups"),
                         ("Retail", "All Customer Groups")):  # fmt: skip
        put(
            ctx, "Customer Group", name=name, customer_group_name=name, parent_customer_group=parent
        )
    for name, group, territory in (("Acme", "Commercial", "France"), ("Bolt", "Retail", "Asia"),
                                   ("Cobalt", "Commercial", "Europe")):  # fmt: skip
        put(
            ctx,
            "Customer",
            name=name,
            customer_name=f"{name} Ltd",
            customer_group=group,
            territory=territory,
        )
    invoice(ctx, "SINV-1", "Acme", 1000, 1000, posted=40, due=10)  # age 10 -> 0-30
    invoice(ctx, "SINV-2", "Acme", 500, 200, posted=100, due=70)  # partly paid; age 70 -> 61-90
    invoice(ctx, "SINV-3", "Bolt", 300, 300, posted=200, due=150, branch="South")  # 121-Above
    invoice(ctx, "SINV-4", "Cobalt", 250.55, 250.55, posted=5, due=-25, branch="South")  # not due
    invoice(ctx, "SINV-5", "Bolt", 80, 0, posted=20, due=0)  # paid: not listed
    invoice(ctx, "SINV-6", "Bolt", 999, 999, posted=20, due=0, docstatus=0)  # draft
    invoice(ctx, "SINV-7", "Bolt", 777, 777, posted=20, due=0, docstatus=2)  # cancelled
    invoice(ctx, "SINV-8", "Cobalt", 400, 100, posted=95, due=95)  # 200 paid, 100 credit note
    invoice(
        ctx, "SINV-8R", "Cobalt", -100, 0, posted=50, due=50, is_return=1, return_against="SINV-8"
    )
    invoice(ctx, "SINV-9", "Bolt", -60, -60, posted=35, due=35, is_return=1, branch="South")
    put(ctx, "Payment Entry", name="PE-1", payment_type="Receive", company=COMPANY, docstatus=1,
        posting_date=days_ago(30), paid_from="Debtors - ST", paid_to="Cash - ST", paid_amount=300,
        children={"references": [
            {"reference_doctype": "Sales Invoice", "reference_name": "SINV-2", "allocated_amount": 100},
            {"reference_doctype": "Sales Invoice", "reference_name": "SINV-8", "allocated_amount": 200},
        ]})  # fmt: skip
    put(ctx, "Payment Entry", name="PE-2", payment_type="Receive", company=COMPANY, docstatus=1,
        posting_date=days_ago(3), paid_from="Debtors - ST", paid_to="Cash - ST", paid_amount=200,
        children={"references": [
            {"reference_doctype": "Sales Invoice", "reference_name": "SINV-2", "allocated_amount": 200},
        ]})  # fmt: skip
    return settings, ctx


def rows_of(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["voucher_no"]: r for r in result["result"] if isinstance(r, dict)}


def expected_outstanding(ctx: Ctx, branch: str | None = None) -> float:
    sql = (
        'select sum(outstanding_amount) from "tabSales Invoice" where docstatus = 1 and company = ?'
    )
    args: list[Any] = [COMPANY]
    if branch:
        sql += " and branch = ?"
        args.append(branch)
    return round(float(ctx.conn.execute(sql, args).fetchone()[0]), 2)


def test_accounts_receivable_rows_totals_and_ageing(ar: tuple[Settings, Ctx]) -> None:
    _, ctx = ar
    out = run(ctx, "Accounts Receivable", {"company": COMPANY})
    rows = rows_of(out)
    assert set(rows) == {"SINV-1", "SINV-2", "SINV-3", "SINV-4", "SINV-8", "SINV-9"}
    total = round(sum(r["outstanding"] for r in rows.values()), 2)
    assert total == expected_outstanding(ctx) == 1790.55
    labels = [c["label"] for c in out["columns"] if c["fieldname"].startswith("range")]
    assert labels == ["0-30", "31-60", "61-90", "91-120", "121-Above"]
    assert rows["SINV-1"]["age"] == 10
    assert rows["SINV-1"]["range1"] == 1000
    assert rows["SINV-2"]["age"] == 70
    assert rows["SINV-2"]["range3"] == 200
    assert rows["SINV-3"]["range5"] == 300
    assert rows["SINV-4"]["age"] == -25
    assert rows["SINV-4"]["range1"] == 250.55
    for row in rows.values():
        ranges = sum(row[f"range{i}"] for i in range(1, 6))
        assert round(ranges, 2) == row["outstanding"]
        assert round(row["invoiced"] - row["paid"] - row["credit_note"], 2) == row["outstanding"]
    assert (rows["SINV-2"]["paid"], rows["SINV-2"]["credit_note"]) == (300, 0)
    assert (rows["SINV-8"]["paid"], rows["SINV-8"]["credit_note"]) == (200, 100)
    assert (rows["SINV-9"]["invoiced"], rows["SINV-9"]["credit_note"]) == (0, 60)
    first = rows["SINV-1"]
    assert (first["party_type"], first["party"], first["customer_name"]) == (
        "Customer",
        "Acme",
        "Acme Ltd",
    )
    assert (first["territory"], first["customer_group"], first["currency"]) == (
        "France",
        "Commercial",
        "USD",
    )
    assert first["voucher_type"] == "Sales Invoice"
    assert first["due_date"] == days_ago(10)
    # Frappe's total row: a list, last in the result, with the column sums ('' under a date).
    total_row = out["result"][-1]
    assert isinstance(total_row, list)
    assert total_row[0] == ""
    names = [c["fieldname"] for c in out["columns"]]
    assert total_row[names.index("outstanding")] == 1790.55
    chart = out["chart"]
    assert chart["type"] == "percentage"
    assert chart["data"]["labels"] == labels
    assert round(sum(chart["data"]["datasets"][0]["values"]), 2) == 1790.55
    assert out["add_total_row"] == 1


def test_accounts_receivable_filters(ar: tuple[Settings, Ctx]) -> None:
    _, ctx = ar
    by_party = rows_of(run(ctx, "Accounts Receivable", {"company": COMPANY, "party": '["Acme"]'}))
    assert set(by_party) == {"SINV-1", "SINV-2"}
    europe = rows_of(run(ctx, "Accounts Receivable", {"company": COMPANY, "territory": "Europe"}))
    assert set(europe) == {"SINV-1", "SINV-2", "SINV-4", "SINV-8"}  # France is under Europe
    retail = rows_of(
        run(ctx, "Accounts Receivable", {"company": COMPANY, "customer_group": "Retail"})
    )
    assert set(retail) == {"SINV-3", "SINV-9"}
    south = rows_of(run(ctx, "Accounts Receivable", {"company": COMPANY, "branch": "South"}))
    assert set(south) == {"SINV-3", "SINV-4", "SINV-9"}
    by_posting = rows_of(
        run(
            ctx,
            "Accounts Receivable",
            {"company": COMPANY, "ageing_based_on": "Posting Date", "range": "15, 45"},
        )
    )
    assert by_posting["SINV-1"]["age"] == 40
    assert by_posting["SINV-1"]["range2"] == 1000
    out = run(ctx, "Accounts Receivable", {"company": COMPANY, "range1": 15, "range2": 45})
    assert [c["label"] for c in out["columns"] if c["fieldname"].startswith("range")] == [
        "0-15", "16-45", "46-Above"
    ]  # fmt: skip
    with pytest.raises(ValidationError):
        run(ctx, "Accounts Receivable", {})


def test_accounts_receivable_as_of_an_earlier_date(ar: tuple[Settings, Ctx]) -> None:
    _, ctx = ar
    # Ten days ago PE-2 (200 on SINV-2, three days ago) had not been posted, nor had SINV-4's
    # successor invoices; invoices posted after the date are left out.
    out = rows_of(
        run(ctx, "Accounts Receivable", {"company": COMPANY, "report_date": days_ago(10)})
    )
    assert out["SINV-2"]["outstanding"] == 400
    assert out["SINV-2"]["paid"] == 100
    assert "SINV-4" not in out  # posted five days ago
    assert out["SINV-1"]["age"] == 0


def test_accounts_receivable_respects_branch_user_permission(ar: tuple[Settings, Ctx]) -> None:
    settings, ctx = ar
    north = make_user(ctx, settings, "north@example.com", ["Accounts User"], branch="North")
    rows = rows_of(run(north, "Accounts Receivable", {"company": COMPANY}))
    assert set(rows) == {"SINV-1", "SINV-2", "SINV-8"}
    assert round(sum(r["outstanding"] for r in rows.values()), 2) == expected_outstanding(
        ctx, "North"
    )


def test_report_role_is_required(ar: tuple[Settings, Ctx]) -> None:
    settings, ctx = ar
    clerk = make_user(ctx, settings, "clerk@example.com", ["Sales User"])
    with pytest.raises(PermissionError) as err:
        run(clerk, "Accounts Receivable", {"company": COMPANY})
    assert "You don't have access to Report: Accounts Receivable" in str(err.value)
    buyer = make_user(ctx, settings, "buyer@example.com", ["Purchase User"])
    with pytest.raises(
        PermissionError, match="You don't have access to Report: Accounts Receivable"
    ):
        run(buyer, "Accounts Receivable", {"company": COMPANY})
    run(buyer, "Accounts Payable", {"company": COMPANY})  # Purchase User may see payables


def test_accounts_payable(ar: tuple[Settings, Ctx]) -> None:
    _, ctx = ar
    put(ctx, "Supplier Group", name="Raw Material", supplier_group_name="Raw Material")
    put(ctx, "Supplier", name="Forge", supplier_name="Forge Inc", supplier_group="Raw Material")
    put(ctx, "Supplier", name="Mill", supplier_name="Mill Co")
    common: dict[str, Any] = {
        "company": COMPANY,
        "docstatus": 1,
        "currency": "USD",
        "credit_to": "Creditors - ST",
    }
    put(ctx, "Purchase Invoice", name="PINV-1", supplier="Forge", posting_date=days_ago(50), due_date=days_ago(20),
        bill_no="F-77", bill_date=days_ago(55), grand_total=700, outstanding_amount=700, **common)  # fmt: skip
    put(ctx, "Purchase Invoice", name="PINV-2", supplier="Mill", posting_date=days_ago(10), due_date=days_ago(-20),
        grand_total=120.10, outstanding_amount=20.10, **common)  # fmt: skip
    put(ctx, "Purchase Invoice", name="PINV-3", supplier="Mill", posting_date=days_ago(10), grand_total=50,
        outstanding_amount=0, **common)  # fmt: skip
    out = run(
        ctx, "Accounts Payable", {"company": COMPANY, "ageing_based_on": "Supplier Invoice Date"}
    )
    rows = rows_of(out)
    assert set(rows) == {"PINV-1", "PINV-2"}
    assert rows["PINV-1"]["age"] == 55
    assert rows["PINV-1"]["range2"] == 700
    assert (rows["PINV-1"]["bill_no"], rows["PINV-1"]["supplier_name"]) == ("F-77", "Forge Inc")
    assert rows["PINV-1"]["supplier_group"] == "Raw Material"
    assert rows["PINV-1"]["party_type"] == "Supplier"
    assert rows["PINV-2"]["paid"] == 100
    assert rows["PINV-2"]["outstanding"] == 20.1
    labels = {c["fieldname"]: c["label"] for c in out["columns"]}
    assert labels["credit_note"] == "Debit Note"
    assert labels["party_account"] == "Payable Account"
    grouped = rows_of(
        run(ctx, "Accounts Payable", {"company": COMPANY, "supplier_group": "Raw Material"})
    )
    assert set(grouped) == {"PINV-1"}


def test_accounts_receivable_group_by_party(ar: tuple[Settings, Ctx]) -> None:
    _, ctx = ar
    out = run(
        ctx,
        "Accounts Receivable",
        {"company": COMPANY, "group_by_party": 1, "party_type": "Customer"},
    )
    result = out["result"]
    assert out["skip_total_row"] == 1
    assert not isinstance(result[-1], list)
    subtotals = {r["party"]: r["outstanding"] for r in result if r.get("bold")}
    assert subtotals == {"Acme": 1200.0, "Bolt": 240.0, "Cobalt": 350.55, "Total": 1790.55}
    with pytest.raises(ValidationError, match="Party Type must be Customer"):
        run(ctx, "Accounts Receivable", {"company": COMPANY, "party_type": "Employee"})
