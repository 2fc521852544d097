"""Small data sets for the demo ERP's domain-rule tests: one company with everything it needs.

``make_world(ctx)`` builds a company "Demo Co" (abbr "DC", tax 10 %), its accounts, a fiscal
year 2026, a customer, a supplier, two items (one stock, one service), two warehouses and an
employee. Other tests may reuse it: ``from builders import make_world`` (pytest puts this
folder on the import path, as for ``api_fixtures``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from demo_erp import documents, records
from demo_erp.context import ADMINISTRATOR, Ctx, as_user

COMPANY = "Demo Co"
ABBR = "DC"

# account_name -> (root_type, account_type); names match the data generator's chart.
ACCOUNTS = {
    "Debtors": ("Asset", "Receivable"),
    "Creditors": ("Liability", "Payable"),
    "Sales": ("Income", "Income Account"),
    "Cost of Goods Sold": ("Expense", "Cost of Goods Sold"),
    "Bank": ("Asset", "Bank"),
    "Cash": ("Asset", "Cash"),
    "Stock In Hand": ("Asset", "Stock"),
    "Stock Received But Not Billed": ("Liability", "Stock Received But Not Billed"),
    "Stock Adjustment": ("Expense", "Expense Account"),
    "Payroll Payable": ("Liability", "Payroll Payable"),
    "VAT": ("Liability", "Tax"),
    "Salary": ("Expense", "Expense Account"),
}
COMPANY_DEFAULTS = {
    "default_receivable_account": "Debtors",
    "default_payable_account": "Creditors",
    "default_income_account": "Sales",
    "default_expense_account": "Cost of Goods Sold",
    "default_bank_account": "Bank",
    "default_cash_account": "Cash",
    "default_inventory_account": "Stock In Hand",
    "stock_received_but_not_billed": "Stock Received But Not Billed",
    "stock_adjustment_account": "Stock Adjustment",
    "default_payroll_payable_account": "Payroll Payable",
    "default_tax_account": "VAT",
    "default_salary_account": "Salary",
}


def acc(name: str) -> str:
    return f"{name} - {ABBR}"


@dataclass
class World:
    ctx: Ctx
    company: str = COMPANY
    customer: str = "Acme Corp"
    supplier: str = "Parts Ltd"
    item: str = "WIDGET"  # stock item, valuation 50
    service: str = "SUPPORT"  # non-stock item
    store: str = f"Stores - {ABBR}"
    shop: str = f"Shop - {ABBR}"
    employee: str = ""

    def insert(self, doctype: str, data: dict[str, Any], submit: bool = False) -> dict[str, Any]:
        payload = {"company": self.company, **data}
        if submit:
            payload["docstatus"] = 1
        return documents.insert(self.ctx, doctype, payload, ignore_permissions=True)

    def load(self, doctype: str, name: str) -> dict[str, Any]:
        return records.load(self.ctx, doctype, name)

    def gl(self, voucher_no: str, cancelled: int | None = None) -> list[dict[str, Any]]:
        sql = 'select * from "tabGL Entry" where voucher_no = ?'
        params: list[Any] = [voucher_no]
        if cancelled is not None:
            sql += " and is_cancelled = ?"
            params.append(cancelled)
        return [dict(r) for r in self.ctx.conn.execute(sql + " order by name", params)]

    def bin(self, item: str, warehouse: str) -> dict[str, Any] | None:
        row = self.ctx.conn.execute(
            'select * from "tabBin" where item_code = ? and warehouse = ?', (item, warehouse)
        ).fetchone()
        return dict(row) if row else None

    def sales_invoice(
        self, qty: float = 2, rate: float = 100, submit: bool = True, **extra: Any
    ) -> dict[str, Any]:
        data = {
            "customer": self.customer,
            "posting_date": "2026-11-01",
            "items": [{"item_code": self.service, "qty": qty, "rate": rate}],
            **extra,
        }
        return self.insert("Sales Invoice", data, submit=submit)

    def receive_stock(
        self, qty: float, rate: float, warehouse: str | None = None
    ) -> dict[str, Any]:
        return self.insert(
            "Purchase Receipt",
            {
                "supplier": self.supplier,
                "posting_date": "2026-11-02",
                "items": [
                    {
                        "item_code": self.item,
                        "qty": qty,
                        "rate": rate,
                        "warehouse": warehouse or self.store,
                    }
                ],
            },
            submit=True,
        )

    def user(self, email: str, *roles: str) -> Ctx:
        """A System User with ``roles`` and a context acting as them."""
        documents.insert(
            self.ctx,
            "User",
            {
                "email": email,
                "first_name": email.split("@")[0],
                "roles": [{"role": r} for r in roles],
            },
            ignore_permissions=True,
        )
        return as_user(self.ctx.conn, self.ctx.settings, email)


def make_world(ctx: Ctx, tax_rate: float = 10) -> World:
    assert ctx.user == ADMINISTRATOR
    ins = lambda doctype, data: documents.insert(ctx, doctype, data, ignore_permissions=True)  # noqa: E731
    ins("Currency", {"currency_name": "USD", "symbol": "$"})
    ins(
        "Company",
        {
            "company_name": COMPANY,
            "abbr": ABBR,
            "default_currency": "USD",
            "country": "United States",
            "tax_rate": tax_rate,
        },
    )
    for name, (root_type, account_type) in ACCOUNTS.items():
        ins(
            "Account",
            {
                "account_name": name,
                "company": COMPANY,
                "root_type": root_type,
                "account_type": account_type,
                "account_currency": "USD",
            },
        )
    ins("Cost Center", {"cost_center_name": "Main", "company": COMPANY})
    documents.save(
        ctx,
        "Company",
        COMPANY,
        {**{k: acc(v) for k, v in COMPANY_DEFAULTS.items()}, "cost_center": acc("Main")},
        ignore_permissions=True,
    )
    ins(
        "Fiscal Year",
        {"year": "2026", "year_start_date": "2026-01-01", "year_end_date": "2026-12-31"},
    )
    ins("Territory", {"territory_name": "All Territories", "is_group": 1})
    ins("Customer Group", {"customer_group_name": "Commercial"})
    ins(
        "Customer",
        {
            "customer_name": "Acme Corp",
            "territory": "All Territories",
            "customer_group": "Commercial",
            "payment_terms_days": 30,
        },
    )
    ins("Supplier Group", {"supplier_group_name": "Hardware"})
    ins(
        "Supplier",
        {"supplier_name": "Parts Ltd", "supplier_group": "Hardware", "payment_terms_days": 15},
    )
    ins("UOM", {"uom_name": "Nos"})
    ins("Item Group", {"item_group_name": "Products"})
    ins(
        "Item",
        {
            "item_code": "WIDGET",
            "item_name": "Widget",
            "item_group": "Products",
            "stock_uom": "Nos",
            "valuation_rate": 50,
        },
    )
    ins(
        "Item",
        {
            "item_code": "SUPPORT",
            "item_name": "Support Hour",
            "item_group": "Products",
            "stock_uom": "Nos",
            "is_stock_item": 0,
        },
    )
    ins("Warehouse", {"warehouse_name": "Stores", "company": COMPANY})
    ins("Warehouse", {"warehouse_name": "Shop", "company": COMPANY})
    employee = ins(
        "Employee",
        {
            "first_name": "Jane",
            "last_name": "Doe",
            "company": COMPANY,
            "gender": "Female",
            "date_of_birth": "1990-01-01",
            "date_of_joining": "2020-01-01",
        },
    )
    ins("Leave Type", {"leave_type_name": "Casual Leave"})
    return World(ctx=ctx, employee=employee["name"])


def assert_balanced(world: World, voucher_no: str) -> None:
    rows = world.gl(voucher_no)
    assert rows, f"no GL entries for {voucher_no}"
    for cancelled in (0, 1):
        subset = [r for r in rows if r["is_cancelled"] == cancelled]
        debit = round(sum(r["debit"] for r in subset), 2)
        credit = round(sum(r["credit"] for r in subset), 2)
        assert debit == credit, (voucher_no, cancelled, debit, credit)
