"""A small, hand-built data set for API tests, independent of the seed generator."""

from __future__ import annotations

from demo_erp import auth, documents
from demo_erp.context import Ctx

USERS = {
    "acc@test.local": (["Accounts User"], {"Company": "Alpha Ltd"}),
    "sales@test.local": (["Sales User"], {"Territory": "North"}),
    "kisumu@test.local": (["Accounts User", "Sales User"], {"Branch": "Kisumu"}),
    "hr@test.local": (["HR Manager"], {}),
    "emp@test.local": (["Employee"], {}),
    "stock@test.local": (["Stock User"], {}),
}
PASSWORD = "secret-pw"


def build(ctx: Ctx) -> dict[str, str]:
    """Masters, two branches, a few invoices and users. Returns names the tests need."""
    names: dict[str, str] = {}
    with documents.transaction(ctx.conn):
        ins = lambda doctype, data: documents.insert(ctx, doctype, data, ignore_permissions=True)  # noqa: E731
        for currency in ("KES", "USD"):
            ins("Currency", {"currency_name": currency})
        ins(
            "Company",
            {
                "company_name": "Alpha Ltd",
                "abbr": "AL",
                "default_currency": "KES",
                "country": "Kenya",
            },
        )
        ins(
            "Company",
            {
                "company_name": "Beta Inc",
                "abbr": "BI",
                "default_currency": "USD",
                "country": "United States",
            },
        )
        for branch in ("Kisumu", "Mombasa"):
            ins("Branch", {"branch": branch, "company": "Alpha Ltd"})
        ins("Territory", {"territory_name": "All Territories", "is_group": 1, "lft": 1, "rgt": 6})
        ins(
            "Territory",
            {"territory_name": "North", "parent_territory": "All Territories", "lft": 2, "rgt": 3},
        )
        ins(
            "Territory",
            {"territory_name": "South", "parent_territory": "All Territories", "lft": 4, "rgt": 5},
        )
        ins("Customer Group", {"customer_group_name": "Commercial"})
        ins("UOM", {"uom_name": "Nos"})
        ins("Item Group", {"item_group_name": "Products"})
        ins(
            "Item",
            {
                "item_code": "SKU-1",
                "item_name": "Blue Widget",
                "item_group": "Products",
                "stock_uom": "Nos",
            },
        )
        ins(
            "Customer",
            {"customer_name": "Gulf Traders", "customer_group": "Commercial", "territory": "North"},
        )
        ins(
            "Customer",
            {"customer_name": "Acme Ltd", "customer_group": "Commercial", "territory": "South"},
        )
        for i, (customer, company, branch, total) in enumerate(
            [
                ("Gulf Traders", "Alpha Ltd", "Kisumu", 100),
                ("Gulf Traders", "Alpha Ltd", "Mombasa", 250),
                ("Acme Ltd", "Alpha Ltd", "Kisumu", 75.5),
                ("Acme Ltd", "Beta Inc", None, 1000),
            ]
        ):
            doc = ins(
                "Sales Invoice",
                {
                    "customer": customer,
                    "company": company,
                    "branch": branch,
                    "posting_date": f"2026-0{i + 1}-15",
                    "due_date": f"2026-0{i + 2}-15",
                    "items": [{"item_code": "SKU-1", "qty": 1, "rate": total}],
                },
            )
            names[f"inv{i}"] = doc["name"]
        ins("Designation", {"designation_name": "Clerk"})
        emp = ins(
            "Employee",
            {
                "first_name": "Eve",
                "company": "Alpha Ltd",
                "gender": "Female",
                "date_of_birth": "1990-01-01",
                "date_of_joining": "2020-01-01",
                "ctc": 120000,
                "user_id": None,
            },
        )
        names["employee"] = emp["name"]
        slip = ins(
            "Salary Slip",
            {
                "employee": emp["name"],
                "posting_date": "2026-10-31",
                "start_date": "2026-10-01",
                "end_date": "2026-10-31",
                "company": "Alpha Ltd",
                "total_working_days": 22,
                "payment_days": 22,
                "earnings": [{"salary_component": "Basic", "amount": 10000}],
                "gross_pay": 10000,
                "net_pay": 9000,
            },
        )
        names["slip"] = slip["name"]
        for email, (roles, restrictions) in USERS.items():
            ins(
                "User",
                {
                    "email": email,
                    "first_name": email.split("@")[0].title(),
                    "full_name": email.split("@")[0].title(),
                    "user_type": "System User",
                    "roles": [{"role": r} for r in roles],
                },
            )
            for allow, value in restrictions.items():
                ins("User Permission", {"user": email, "allow": allow, "for_value": value})
            auth.set_password(ctx.conn, email, PASSWORD)
            auth.set_api_key(ctx.conn, email, f"key-{email}", f"secret-{email}")
        auth.set_password(ctx.conn, "Administrator", PASSWORD)
        ins(
            "User Permission",
            {"user": "emp@test.local", "allow": "Employee", "for_value": emp["name"]},
        )
    return names
