"""Companies, their charts of accounts and cost centers; journal entries; the closed period."""

from __future__ import annotations

import datetime as dt

from demo_erp.seed.base import CompanyInfo, Seeder, add_months, month_end

# (account_name, parent account_name or None, is_group, root_type, account_type)
CHART: tuple[tuple[str, str | None, int, str, str], ...] = (
    ("Application of Funds (Assets)", None, 1, "Asset", ""),
    ("Current Assets", "Application of Funds (Assets)", 1, "Asset", ""),
    ("Accounts Receivable", "Current Assets", 1, "Asset", ""),
    ("Debtors", "Accounts Receivable", 0, "Asset", "Receivable"),
    ("Bank Accounts", "Current Assets", 1, "Asset", "Bank"),
    ("Bank", "Bank Accounts", 0, "Asset", "Bank"),
    ("Cash In Hand", "Current Assets", 1, "Asset", "Cash"),
    ("Cash", "Cash In Hand", 0, "Asset", "Cash"),
    ("Stock Assets", "Current Assets", 1, "Asset", "Stock"),
    ("Stock In Hand", "Stock Assets", 0, "Asset", "Stock"),
    ("Fixed Assets", "Application of Funds (Assets)", 1, "Asset", ""),
    ("Office Equipment", "Fixed Assets", 0, "Asset", ""),
    ("Source of Funds (Liabilities)", None, 1, "Liability", ""),
    ("Current Liabilities", "Source of Funds (Liabilities)", 1, "Liability", ""),
    ("Accounts Payable", "Current Liabilities", 1, "Liability", ""),
    ("Creditors", "Accounts Payable", 0, "Liability", "Payable"),
    ("Payroll Payable", "Accounts Payable", 0, "Liability", "Payroll Payable"),
    ("Stock Liabilities", "Current Liabilities", 1, "Liability", ""),
    (
        "Stock Received But Not Billed",
        "Stock Liabilities",
        0,
        "Liability",
        "Stock Received But Not Billed",
    ),
    ("Duties and Taxes", "Current Liabilities", 1, "Liability", "Tax"),
    ("VAT", "Duties and Taxes", 0, "Liability", "Tax"),
    ("Equity", None, 1, "Equity", ""),
    ("Capital Stock", "Equity", 0, "Equity", "Equity"),
    ("Retained Earnings", "Equity", 0, "Equity", "Equity"),
    ("Income", None, 1, "Income", ""),
    ("Direct Income", "Income", 1, "Income", "Income Account"),
    ("Sales", "Direct Income", 0, "Income", "Income Account"),
    ("Indirect Income", "Income", 1, "Income", "Income Account"),
    ("Other Income", "Indirect Income", 0, "Income", "Income Account"),
    ("Expenses", None, 1, "Expense", ""),
    ("Direct Expenses", "Expenses", 1, "Expense", "Expense Account"),
    ("Cost of Goods Sold", "Direct Expenses", 0, "Expense", "Cost of Goods Sold"),
    ("Stock Adjustment", "Direct Expenses", 0, "Expense", "Expense Account"),
    ("Indirect Expenses", "Expenses", 1, "Expense", "Expense Account"),
    ("Salary", "Indirect Expenses", 0, "Expense", "Expense Account"),
    ("Rent", "Indirect Expenses", 0, "Expense", "Expense Account"),
    ("Utilities", "Indirect Expenses", 0, "Expense", "Expense Account"),
    ("Marketing", "Indirect Expenses", 0, "Expense", "Expense Account"),
    ("Office Expenses", "Indirect Expenses", 0, "Expense", "Expense Account"),
    ("Travel Expenses", "Indirect Expenses", 0, "Expense", "Expense Account"),
    ("Bank Charges", "Indirect Expenses", 0, "Expense", "Expense Account"),
    ("Round Off", "Indirect Expenses", 0, "Expense", "Round Off"),
)

# Company field -> account_name, the contract the controllers read.
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
_BALANCE_SHEET = {"Asset", "Liability", "Equity"}


def create_company(s: Seeder, company: CompanyInfo) -> None:
    """The company, its chart of accounts and cost centers, then the default-account links."""
    s.insert(
        "Company",
        {
            "company_name": company.name,
            "abbr": company.abbr,
            "default_currency": company.currency,
            "country": company.country,
            "tax_rate": company.tax_rate,
        },
    )
    for account_name, parent, is_group, root_type, account_type in CHART:
        s.insert(
            "Account",
            {
                "account_name": account_name,
                "company": company.name,
                "parent_account": company.acc(parent) if parent else None,
                "is_group": is_group,
                "root_type": root_type,
                "report_type": "Balance Sheet"
                if root_type in _BALANCE_SHEET
                else "Profit and Loss",
                "account_type": account_type,
                "account_currency": company.currency,
            },
        )
    root = s.insert(
        "Cost Center", {"cost_center_name": company.name, "company": company.name, "is_group": 1}
    )
    for name in ("Main", *company.branches):
        doc = s.insert(
            "Cost Center",
            {"cost_center_name": name, "company": company.name, "parent_cost_center": root["name"]},
        )
        if name in s.branches:
            s.branches[name].cost_center = doc["name"]
    values: dict[str, object] = {f: company.acc(a) for f, a in COMPANY_DEFAULTS.items()}
    values["cost_center"] = company.acc("Main")
    s.set_values("Company", company.name, values)


def fiscal_years(s: Seeder) -> None:
    # One year beyond today: due dates and delivery dates run into it.
    for year in range(s.start.year, s.today.year + 2):
        s.insert(
            "Fiscal Year",
            {
                "year": str(year),
                "year_start_date": dt.date(year, 1, 1),
                "year_end_date": dt.date(year, 12, 31),
            },
        )


def journal(
    s: Seeder,
    company: CompanyInfo,
    day: dt.date,
    title: str,
    lines: list[tuple[str, float, float]],
    voucher_type: str = "Journal Entry",
    branch: str | None = None,
    cost_center: str | None = None,
) -> None:
    s.insert(
        "Journal Entry",
        {
            "title": title,
            "voucher_type": voucher_type,
            "posting_date": day,
            "company": company.name,
            "user_remark": title,
            # Company-wide entries are booked at the head office (the first branch).
            "branch": branch or company.branches[0],
            "docstatus": 1,
            "accounts": [
                {
                    "account": company.acc(account),
                    "debit_in_account_currency": debit,
                    "credit_in_account_currency": credit,
                    "debit": debit,
                    "credit": credit,
                    "cost_center": cost_center or company.acc("Main"),
                }
                for account, debit, credit in lines
            ],
        },
        on=day,
    )


def capital_injection(s: Seeder) -> None:
    """Share capital paid into the bank on the first day of history."""
    for company in s.companies.values():
        amount = round(2_500_000 * company.fx, -3)
        journal(
            s,
            company,
            s.start,
            "Share capital paid in",
            [("Bank", amount, 0.0), ("Capital Stock", 0.0, amount)],
            voucher_type="Bank Entry",
        )


# Doctypes whose posting the closed period blocks, as ERPNext's Accounting Period lists them.
CLOSED_DOCTYPES = (
    "Sales Invoice",
    "Purchase Invoice",
    "Journal Entry",
    "Payment Entry",
    "Delivery Note",
    "Purchase Receipt",
    "Stock Entry",
)


def close_first_month(s: Seeder) -> None:
    """Close the first month of history in every company, after its transactions exist."""
    first = s.start.replace(day=1)
    s.at(add_months(first, 1) + dt.timedelta(days=9))
    for company in s.companies.values():
        s.insert(
            "Accounting Period",
            {
                "period_name": f"{first:%B %Y}",
                "start_date": first,
                "end_date": month_end(first),
                "company": company.name,
                "closed_documents": [
                    {"document_type": doctype, "closed": 1} for doctype in CLOSED_DOCTYPES
                ],
            },
        )
