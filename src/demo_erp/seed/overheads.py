"""Overheads that grow with the business: rent, utilities, marketing, office costs and salaries.

A finance user believes a demo whose companies earn what trading companies earn: a gross margin
of 25-40 % and a net margin of 3-10 %. Cost of goods follows the sales by construction; the
overheads here are set as shares of each company's (or branch's) own gross profit, as posted to
the ledger, so the net margin holds at every ``--scale`` (about a fifth of gross profit is
left) instead of a fixed cost base swamping a small volume. Rent is steady (a share of the
branch's average monthly gross profit over the past year); the other costs vary month to month.
Salaries come from payroll for its last 12 months (pay levels calibrated to the company's size)
and, before payroll ran in the ERP, from a monthly salaries journal."""

from __future__ import annotations

import datetime as dt

from demo_erp.seed.accounts import journal
from demo_erp.seed.base import CompanyInfo, Seeder, add_months, month_end

# Shares of trading gross profit (net sales less cost of goods sold).
RENT_SHARE = 0.21  # of the branch's average monthly gross profit over the trailing year
UTILITIES_SHARE = (0.05, 0.075)
MARKETING_SHARE = (0.07, 0.12)
OFFICE_SHARE = (0.025, 0.045)
SALARY_SHARE = 0.40  # payroll cost
_TRAILING_MONTHS = 12
# The ledger accounts whose balance is trading gross profit (credit minus debit). Stock
# Adjustment is left out: it carries the opening stock, booked by branch and moved to equity
# at the head office, which would distort a branch's figure.
_GROSS_PROFIT_ACCOUNTS = ("Sales", "Cost of Goods Sold")


def gross_profit(
    s: Seeder, company: CompanyInfo, first: dt.date, last: dt.date, branch: str | None = None
) -> float:
    """Gross profit posted to the ledger in the days given (company currency)."""
    accounts = [company.acc(a) for a in _GROSS_PROFIT_ACCOUNTS]
    sql = (
        'select coalesce(sum(credit - debit), 0) from "tabGL Entry" '
        f"where is_cancelled = 0 and account in ({', '.join('?' for _ in accounts)}) "
        "and company = ? and posting_date between ? and ?"
    )
    args: list[object] = [*accounts, company.name, first.isoformat(), last.isoformat()]
    if branch is not None:
        sql += " and branch = ?"
        args.append(branch)
    (value,) = s.conn.execute(sql, args).fetchone()
    return float(value)


def payroll_months(s: Seeder) -> list[dt.date]:
    """First days of the months payroll ran in the ERP: the last 12 complete months."""
    current = s.today.replace(day=1)
    if month_end(current) <= s.today:  # the current month counts once its last day has come
        current = add_months(current, 1)
    months = [add_months(current, -back) for back in range(12, 0, -1)]
    return [m for m in months if m >= s.start.replace(day=1)]


def _run_rate(s: Seeder, company: CompanyInfo, month: dt.date, branch: str) -> float:
    """The branch's gross profit of ``month`` scaled to a whole month (the current one may be
    partial)."""
    last = min(month_end(month), s.today)
    covered = (last - month).days + 1
    return gross_profit(s, company, month, last, branch) * (month_end(month).day / covered)


def book_month(s: Seeder, month: dt.date) -> None:
    """Rent on the 1st; utilities, marketing, office costs (and salaries before payroll ran in
    the ERP) at month end, once that day has come. Called after the month's sales exist."""
    history: dict[str, list[float]] = s.data.setdefault("branch_run_rates", {})
    on_payroll = set(payroll_months(s))
    for company in s.companies.values():
        for branch_name in company.branches:
            rates = history.setdefault(branch_name, [])
            rates.append(_run_rate(s, company, month, branch_name))
            trailing = rates[-_TRAILING_MONTHS:]
            rent = round(RENT_SHARE * sum(trailing) / len(trailing), -1)
            if rent <= 0:
                continue
            journal(s, company, month, f"Rent {branch_name} {month:%b %Y}",
                    [("Rent", rent, 0.0), ("Bank", 0.0, rent)], voucher_type="Bank Entry",
                    branch=branch_name, cost_center=s.branches[branch_name].cost_center)  # fmt: skip
        last = month_end(month)
        if last > s.today:
            continue
        profit = max(0.0, gross_profit(s, company, month, last))
        lines = [
            (account, round(profit * s.rng.uniform(*share), 2), 0.0)
            for account, share in (
                ("Utilities", UTILITIES_SHARE),
                ("Marketing", MARKETING_SHARE),
                ("Office Expenses", OFFICE_SHARE),
            )
        ]
        if month not in on_payroll:
            salaries = round(profit * SALARY_SHARE * s.rng.uniform(0.97, 1.03), 2)
            lines.append(("Salary", salaries, 0.0))
        total = round(sum(debit for _, debit, _ in lines), 2)
        if total <= 0:
            continue
        title = (
            "Utilities, marketing and office costs"
            if month in on_payroll
            else "Salaries, utilities, marketing and office costs"
        )
        journal(s, company, last, f"{title} {month:%b %Y}", [*lines, ("Bank", 0.0, total)],
                voucher_type="Bank Entry")  # fmt: skip


def pay_factor(s: Seeder, company: CompanyInfo, monthly_pay: dict[dt.date, float]) -> float:
    """How much to scale the company's planned pay so payroll is SALARY_SHARE of its gross
    profit over the payroll months (``monthly_pay``: planned gross pay per month)."""
    planned = sum(monthly_pay.values())
    profit = sum(gross_profit(s, company, m, month_end(m)) for m in monthly_pay)
    return SALARY_SHARE * profit / planned if planned > 0 and profit > 0 else 1.0
