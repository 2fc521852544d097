"""The seeded demo data set: complete, consistent, deterministic, with working demo users."""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from demo_erp import auth, db, documents
from demo_erp.context import Settings, as_user
from demo_erp.exceptions import ClosedAccountingPeriod
from demo_erp.meta import all_doctypes
from demo_erp.seed import DEMO_USERS, SeedSummary, api_credentials, seed
from demo_erp.seed.accounts import COMPANY_DEFAULTS
from demo_erp.seed.users import USER_PERMISSIONS

TODAY = dt.date(2026, 11, 30)
SMALL = 0.1
# Tables whose rows the determinism check compares (with creation/modified timestamps).
KEY_TABLES = (
    "Company", "Account", "Customer", "Supplier", "Item", "Item Price", "Employee", "User",
    "User Permission", "Sales Invoice", "Sales Invoice Item", "Payment Entry", "Delivery Note",
    "Purchase Order", "Purchase Invoice", "Journal Entry", "GL Entry", "Stock Ledger Entry",
    "Salary Slip", "Leave Application", "Quotation", "Lead", "Task",
)  # fmt: skip


@pytest.fixture(scope="module")
def small(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SeedSummary, sqlite3.Connection]]:
    path = tmp_path_factory.mktemp("seed") / "demo.sqlite"
    summary = seed(path, seed=7, today=TODAY, scale=SMALL)
    conn = db.connect(path)
    yield summary, conn
    conn.close()


def _one(conn: sqlite3.Connection, sql: str, *params: object) -> object:
    return conn.execute(sql, params).fetchone()[0]


def digest(path: Path) -> str:
    """A hash of the key tables; random child row names (hash autoname) are left out."""
    conn = sqlite3.connect(path)
    h = hashlib.sha256()
    for doctype in KEY_TABLES:
        meta = all_doctypes()[doctype]
        cols = [c for c in meta.column_names if not (meta.istable and c == "name")]
        quoted = ", ".join(f'"{c}"' for c in cols)
        for row in conn.execute(f'select {quoted} from "{meta.table_name}" order by {quoted}'):
            h.update(repr(tuple(row)).encode())
    conn.close()
    return h.hexdigest()


def test_same_seed_same_data(tmp_path: Path) -> None:
    first = seed(tmp_path / "a.sqlite", seed=3, today=TODAY, scale=0.04)
    second = seed(tmp_path / "b.sqlite", seed=3, today=TODAY, scale=0.04)
    seed(tmp_path / "c.sqlite", seed=4, today=TODAY, scale=0.04)
    assert first.counts == second.counts
    assert digest(tmp_path / "a.sqlite") == digest(tmp_path / "b.sqlite")
    assert digest(tmp_path / "a.sqlite") != digest(tmp_path / "c.sqlite")


def test_reseed_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.sqlite"
    seed(path, today=TODAY, scale=0.03)
    summary = seed(path, today=TODAY, scale=0.03)
    conn = db.connect(path)
    assert _one(conn, 'select count(*) from "tabCompany"') == 2
    assert _one(conn, 'select count(*) from "tabSales Invoice"') == summary.counts["Sales Invoice"]
    conn.close()


def test_small_seed_is_complete(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    summary, _ = small
    for doctype in (
        "Company", "Branch", "Fiscal Year", "Accounting Period", "Territory", "Customer Group",
        "Supplier Group", "Item Group", "UOM", "Price List", "Mode of Payment", "Department",
        "Designation", "Leave Type", "Customer", "Supplier", "Item", "Item Price", "Warehouse",
        "Quotation", "Sales Order", "Delivery Note", "Sales Invoice", "Payment Entry",
        "Purchase Order", "Purchase Receipt", "Purchase Invoice", "Stock Entry", "Journal Entry",
        "Employee", "Leave Application", "Salary Slip", "Attendance", "Expense Claim", "Lead",
        "Opportunity", "Contact", "Address", "Project", "Task", "User", "User Permission",
        "GL Entry", "Stock Ledger Entry", "Bin",
    ):  # fmt: skip
        assert summary.counts.get(doctype, 0) > 0, doctype
    assert summary.seconds > 0
    assert any("Sales Invoice" in line for line in summary.lines())


def test_company_contract(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    companies = {r["name"]: dict(r) for r in conn.execute('select * from "tabCompany"')}
    assert set(companies) == {"Savanna Trading Ltd", "Harbor Goods Inc"}
    st, hg = companies["Savanna Trading Ltd"], companies["Harbor Goods Inc"]
    assert (st["abbr"], st["default_currency"], st["country"], st["tax_rate"]) == (
        "ST", "KES", "Kenya", 16.0,
    )  # fmt: skip
    assert (hg["abbr"], hg["default_currency"], hg["tax_rate"]) == ("HG", "USD", 8.0)
    for company in companies.values():
        for field, account in COMPANY_DEFAULTS.items():
            name = f"{account} - {company['abbr']}"
            assert company[field] == name
            row = conn.execute("select company, is_group from tabAccount where name = ?", (name,))
            assert tuple(row.fetchone()) == (company["name"], 0)
        assert company["cost_center"] == f"Main - {company['abbr']}"
    debtors = conn.execute("select * from tabAccount where name = 'Debtors - ST'").fetchone()
    assert (debtors["root_type"], debtors["account_type"], debtors["report_type"]) == (
        "Asset", "Receivable", "Balance Sheet",
    )  # fmt: skip
    assert debtors["parent_account"] == "Accounts Receivable - ST"
    branches = dict(conn.execute("select name, company from tabBranch").fetchall())
    assert branches["Kisumu"] == "Savanna Trading Ltd"
    assert branches["Houston"] == "Harbor Goods Inc"
    warehouse = conn.execute("select * from tabWarehouse where name = 'Kisumu Stores - ST'")
    assert warehouse.fetchone()["branch"] == "Kisumu"


@pytest.mark.parametrize(
    ("doctype", "parent_field"),
    [
        ("Account", "parent_account"),
        ("Territory", "parent_territory"),
        ("Item Group", "parent_item_group"),
        ("Warehouse", "parent_warehouse"),
        ("Cost Center", "parent_cost_center"),
        ("Customer Group", "parent_customer_group"),
    ],
)
def test_trees_are_nested_sets(
    small: tuple[SeedSummary, sqlite3.Connection], doctype: str, parent_field: str
) -> None:
    _, conn = small
    rows = {r["name"]: r for r in conn.execute(f'select * from "tab{doctype}"')}
    bounds = sorted(b for r in rows.values() for b in (r["lft"], r["rgt"]))
    assert bounds == list(range(1, 2 * len(rows) + 1))
    for row in rows.values():
        assert row["lft"] < row["rgt"]
        parent = rows.get(row[parent_field]) if row[parent_field] else None
        if parent is not None:
            assert parent["lft"] < row["lft"]
            assert row["rgt"] < parent["rgt"]


def test_territory_tree(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    parents = dict(conn.execute("select name, parent_territory from tabTerritory").fetchall())
    assert parents["Nairobi"] == parents["Coast"] == "Kenya"
    assert parents["Midwest"] == "United States"
    assert parents["Kenya"] == "All Territories"


def test_fiscal_years_cover_all_dates(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    years = {r[0] for r in conn.execute('select year from "tabFiscal Year"')}
    assert {"2024", "2025", "2026", "2027"} <= years
    first = _one(conn, 'select min(posting_date) from "tabGL Entry"')
    assert first == "2024-12-01"  # 24 months of history ending at today


def test_transactions_follow_their_branch(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    bad = conn.execute(
        'select si.name from "tabSales Invoice" si join tabBranch b on b.name = si.branch '
        "where b.company != si.company or si.branch is null"
    ).fetchall()
    assert bad == []
    bad = conn.execute(
        'select si.name from "tabSales Invoice" si join tabCustomer c on c.name = si.customer '
        "where c.territory != si.territory or c.branch != si.branch"
    ).fetchall()
    assert bad == []
    bad = conn.execute(
        'select i.parent from "tabSales Invoice Item" i join "tabSales Invoice" si '
        "on si.name = i.parent join tabWarehouse w on w.name = i.warehouse "
        "where w.branch != si.branch"
    ).fetchall()
    assert bad == []
    for doctype in ("Delivery Note", "Purchase Invoice", "Payment Entry", "Stock Entry"):
        missing = _one(conn, f'select count(*) from "tab{doctype}" where branch is null')
        assert missing == 0, doctype


def test_invoice_payment_mix(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    statuses = dict(
        conn.execute(
            'select status, count(*) from "tabSales Invoice" where is_return = 0 group by status'
        ).fetchall()
    )
    assert statuses["Paid"] > statuses.get("Overdue", 0) > 0
    assert statuses.get("Unpaid", 0) + statuses.get("Partly Paid", 0) > 0
    assert _one(conn, 'select count(*) from "tabSales Invoice" where is_return = 1') > 0
    overdue = conn.execute(
        'select outstanding_amount, due_date from "tabSales Invoice" where status = ?',
        ("Overdue",),
    ).fetchall()
    assert all(r[0] > 0 and r[1] < TODAY.isoformat() for r in overdue)
    ages = {(TODAY - dt.date.fromisoformat(r[1])).days for r in overdue}
    assert min(ages) <= 30
    assert max(ages) > 120
    paid = _one(
        conn, 'select max(outstanding_amount) from "tabSales Invoice" where status = ?', "Paid"
    )
    assert paid == 0


def test_hr_history(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    months = conn.execute(
        'select distinct substr(start_date, 1, 7) from "tabSalary Slip" order by 1'
    ).fetchall()
    assert [m[0] for m in months][-1] == "2026-11"
    assert len(months) == 12
    first_attendance = _one(conn, "select min(attendance_date) from tabAttendance")
    assert first_attendance >= (TODAY - dt.timedelta(days=29)).isoformat()
    statuses = {r[0] for r in conn.execute('select status from "tabLeave Application"')}
    assert {"Open", "Approved"} <= statuses
    assert _one(conn, "select count(*) from tabEmployee where ctc > 0") == _one(
        conn, "select count(*) from tabEmployee"
    )


def test_stock_never_negative(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    assert _one(conn, "select count(*) from tabBin where actual_qty < 0") == 0
    assert (
        _one(conn, 'select count(*) from "tabStock Ledger Entry" where qty_after_transaction < 0')
        == 0
    )


def test_purchase_orders_in_workflow(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    states = {
        r[0]
        for r in conn.execute('select workflow_state from "tabPurchase Order" where docstatus = 0')
    }
    assert states & {"Draft", "Pending Approval"}
    approved = _one(
        conn,
        'select count(*) from "tabPurchase Order" where docstatus = 1 and workflow_state = ?',
        "Approved",
    )
    assert approved > 0


def test_first_month_is_closed(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    summary, conn = small
    settings = Settings(db_path=summary.path, today=TODAY)
    ctx = as_user(conn, settings, "Administrator")
    data = {
        "customer": "Acme Ltd",
        "company": "Savanna Trading Ltd",
        "posting_date": "2024-12-10",
        "items": [{"item_code": "SVC-DELIVERY", "qty": 1, "rate": 100}],
    }
    with pytest.raises(ClosedAccountingPeriod), documents.transaction(conn):
        documents.insert(ctx, "Sales Invoice", data, ignore_permissions=True)
    period = conn.execute('select * from "tabAccounting Period" where company = ?',
                          ("Savanna Trading Ltd",)).fetchone()  # fmt: skip
    assert (period["start_date"], period["end_date"]) == ("2024-12-01", "2024-12-31")
    closed_docs = _one(
        conn,
        'select count(*) from "tabSales Invoice" where posting_date <= ? and docstatus = 1',
        "2024-12-31",
    )
    assert closed_docs > 0  # the period was closed after its transactions were posted


def test_demo_users(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    summary, conn = small
    for user in [*DEMO_USERS]:
        assert auth.check_password(conn, user.email, "demo"), user.email
        assert not auth.check_password(conn, user.email, "wrong")
        row = conn.execute("select * from tabUser where name = ?", (user.email,)).fetchone()
        assert row["user_type"] == "System User"
        assert row["enabled"] == 1
        roles = {
            r[0]
            for r in conn.execute('select role from "tabHas Role" where parent = ?', (user.email,))
        }
        assert roles == set(user.roles)
        key, secret = api_credentials(summary.seed, user.email)
        assert auth.user_for_api_key(conn, key, secret) == user.email
    assert auth.check_password(conn, "Administrator", "demo")
    admin_roles = set(DEMO_USERS[0].roles)
    assert {"System Manager", "Accounts Manager", "Sales Manager", "Purchase Manager",
            "Stock Manager", "HR Manager"} <= admin_roles  # fmt: skip


def test_user_permissions(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    _, conn = small
    perms: dict[str, set[tuple[str, str]]] = {}
    for row in conn.execute('select user, allow, for_value from "tabUser Permission"'):
        perms.setdefault(row[0], set()).add((row[1], row[2]))
    for user, expected in USER_PERMISSIONS.items():
        assert set(expected) <= perms[user]
    assert perms["kisumu.manager@demo.local"] == {
        ("Branch", "Kisumu"), ("Company", "Savanna Trading Ltd"),
    }  # fmt: skip
    assert perms["sales@demo.local"] == {("Territory", "Nairobi")}
    (employee_perm,) = perms["employee@demo.local"]
    assert employee_perm[0] == "Employee"
    employee = conn.execute("select * from tabEmployee where name = ?", (employee_perm[1],))
    assert employee.fetchone()["user_id"] == "employee@demo.local"
    nairobi = _one(conn, "select count(*) from tabCustomer where territory = 'Nairobi'")
    assert nairobi >= 5
    for name in ("Acme Ltd", "Gulf Traders"):
        assert _one(conn, "select count(*) from tabCustomer where name = ?", name) == 1
    assert _one(conn, "select count(*) from tabCustomer where is_frozen = 1") <= 2


def test_restricted_users_see_their_slice(small: tuple[SeedSummary, sqlite3.Connection]) -> None:
    from demo_erp import query

    summary, conn = small
    settings = Settings(db_path=summary.path, today=TODAY)
    kisumu = as_user(conn, settings, "kisumu.manager@demo.local")
    rows = query.get_list(
        kisumu, "Sales Invoice", fields=["branch", "company"], limit_page_length=0
    )
    assert rows
    assert {(r["branch"], r["company"]) for r in rows} == {("Kisumu", "Savanna Trading Ltd")}
    sales = as_user(conn, settings, "sales@demo.local")
    customers = query.get_list(sales, "Customer", fields=["territory"], limit_page_length=0)
    assert customers
    assert {r["territory"] for r in customers} == {"Nairobi"}


def test_bulk_invoices(tmp_path: Path) -> None:
    path = tmp_path / "bulk.sqlite"
    summary = seed(path, today=TODAY, scale=0.03, invoices=3000)
    assert summary.bulk_invoices == 3000
    assert summary.notes
    assert "no GL" in summary.notes[0]
    conn = db.connect(path)
    bulk = conn.execute(
        'select * from "tabSales Invoice" where remarks = ?', ("Bulk benchmark invoice",)
    ).fetchall()
    assert len(bulk) == 3000
    assert summary.counts["Sales Invoice"] > 3000
    names = [r["name"] for r in conn.execute('select name from "tabSales Invoice"')]
    assert len(names) == len(set(names))
    items = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            'select parent, sum(amount), count(*) from "tabSales Invoice Item" group by parent'
        )
    }
    statuses = set()
    for inv in bulk:
        amount, _ = items[inv["name"]]
        assert round(amount, 2) == inv["net_total"]
        assert round(inv["net_total"] + inv["total_taxes_and_charges"], 2) == inv["grand_total"]
        assert 0 <= inv["outstanding_amount"] <= inv["grand_total"]
        assert inv["name"].startswith(f"ACC-SINV-{inv['posting_date'][:4]}-")
        statuses.add(inv["status"])
        if inv["status"] == "Overdue":
            assert inv["due_date"] < TODAY.isoformat()
    assert {"Paid", "Overdue", "Unpaid"} <= statuses
    conn.close()


@pytest.mark.slow
def test_default_scale(tmp_path: Path) -> None:
    summary = seed(tmp_path / "demo.sqlite", today=TODAY)
    counts = summary.counts
    assert counts["Company"] == 2
    assert counts["Customer"] >= 200
    assert counts["Supplier"] >= 80
    assert counts["Item"] >= 300
    assert 50 <= counts["Employee"] <= 70
    assert counts["Sales Invoice"] >= 4000
    assert counts["Payment Entry"] >= 3000
    assert counts["Salary Slip"] >= 500
    assert counts["Attendance"] >= 1000
