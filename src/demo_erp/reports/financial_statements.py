"""Profit and Loss Statement and Balance Sheet: account trees with one column per period.

Balances are summed in SQL per account and period bucket (in cents), then rolled up the
account tree in Python — the tree is small, the ledger is not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from demo_erp.context import Ctx
from demo_erp.reports import ReportOutput, as_list, column, report
from demo_erp.reports._common import (
    cents,
    company_currency,
    field_in,
    in_list,
    money,
    scope,
    truthy,
    with_descendants,
)
from demo_erp.reports._periods import Period, financial_periods

ROLES = ("Accounts User", "Accounts Manager", "Auditor")
FILTERS = ("company",)


@dataclass
class Section:
    """One root type's rows plus its total, values in cents."""

    root_type: str
    balance_must_be: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    opening: int = 0


def _accounts(ctx: Ctx, company: str, root_type: str) -> list[dict[str, Any]]:
    """Accounts of a root type in tree order (depth first, siblings by lft), with indent."""
    rows = ctx.conn.execute(
        'select name, account_name, parent_account, is_group, account_type from "tabAccount" '
        "where company = ? and root_type = ? order by ifnull(lft, 0), name",
        (company, root_type),
    ).fetchall()
    names = {r["name"] for r in rows}
    children: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        parent = r["parent_account"] if r["parent_account"] in names else ""
        children.setdefault(parent, []).append(dict(r))
    ordered: list[dict[str, Any]] = []

    def walk(parent: str, indent: int) -> None:
        for child in children.get(parent, []):
            child["indent"] = indent
            ordered.append(child)
            walk(child["name"], indent + 1)

    walk("", 0)
    return ordered


def _buckets(
    ctx: Ctx,
    filters: dict[str, Any],
    periods: list[Period],
    root_types: tuple[str, ...],
    profit_and_loss: bool,
) -> dict[str, list[int]]:
    """Per account: [before first period, period 1, …, period n] of debit − credit, in cents."""
    first, last = periods[0].from_date.isoformat(), periods[-1].to_date.isoformat()
    case = "case when g.posting_date < ? then 0"
    case_params: list[Any] = [first]
    for i, p in enumerate(periods, start=1):
        case += f" when g.posting_date <= ? then {i}"
        case_params.append(p.to_date.isoformat())
    case += " end"
    where = " and g.company = ? and ifnull(g.is_cancelled, 0) = 0 and g.posting_date <= ?"
    params: list[Any] = [filters.get("company"), last]
    if profit_and_loss:
        # P&L shows the chosen years only; closing vouchers would zero it.
        where += (
            " and g.posting_date >= ? and ifnull(g.voucher_type, '') != 'Period Closing Voucher'"
        )
        params.append(first)
    cost_centers = with_descendants(ctx, "Cost Center", as_list(filters.get("cost_center")))
    for part_sql, part_params in (
        in_list("g.cost_center", cost_centers),
        in_list("g.branch", as_list(filters.get("branch"))),
        field_in("GL Entry", "g", "project", filters.get("project")),
        in_list("a.root_type", root_types),
        scope(ctx, "GL Entry", "g"),
    ):
        where += part_sql
        params += part_params
    sql = f"""
        select g.account, {case} as bucket, sum({cents("g.debit")} - {cents("g.credit")}) as net
        from "tabGL Entry" g join "tabAccount" a on a.name = g.account
        where 1 = 1{where}
        group by g.account, bucket
    """
    out: dict[str, list[int]] = {}
    for r in ctx.conn.execute(sql, [*case_params, *params]):
        out.setdefault(r["account"], [0] * (len(periods) + 1))[r["bucket"]] += r["net"] or 0
    return out


def _section(
    ctx: Ctx,
    filters: dict[str, Any],
    root_type: str,
    balance_must_be: str,
    periods: list[Period],
    buckets: dict[str, list[int]],
    accumulated: bool,
    reset_each_year: bool,
) -> Section:
    accounts = _accounts(ctx, str(filters.get("company")), root_type)
    sign = 1 if balance_must_be == "Debit" else -1
    n = len(periods)
    values: dict[str, list[int]] = {}
    opening: dict[str, int] = {}
    for acc in accounts:
        raw = buckets.get(acc["name"], [0] * (n + 1))
        opening[acc["name"]] = raw[0]
        if accumulated:
            vals, running = [], raw[0]
            for i, p in enumerate(periods):
                if reset_each_year and i and p.fiscal_year != periods[i - 1].fiscal_year:
                    running = 0
                running += raw[i + 1]
                vals.append(running)
        else:
            vals = raw[1:]
        values[acc["name"]] = vals
    by_name = {a["name"]: a for a in accounts}
    for acc in reversed(accounts):  # children come after parents: roll values upwards
        parent = acc["parent_account"]
        if parent in by_name:
            values[parent] = [
                x + y for x, y in zip(values[parent], values[acc["name"]], strict=True)
            ]
            opening[parent] += opening[acc["name"]]
    section = Section(root_type, balance_must_be, totals=[0] * n)
    currency = company_currency(ctx, filters.get("company"))
    for acc in accounts:
        vals = [v * sign for v in values[acc["name"]]]
        row: dict[str, Any] = {
            "account": acc["name"],
            "account_name": acc["account_name"] or acc["name"],
            "parent_account": acc["parent_account"] if acc["parent_account"] in by_name else "",
            "indent": float(acc["indent"]),
            "year_start_date": periods[0].from_date.isoformat(),
            "year_end_date": periods[-1].to_date.isoformat(),
            "currency": currency,
            "account_type": acc["account_type"],
            "is_group": acc["is_group"] or 0,
            "opening_balance": opening[acc["name"]] * sign,
            "has_value": any(v != 0 for v in vals),
            "total": sum(vals),
            **{p.key: v for p, v in zip(periods, vals, strict=True)},
        }
        section.rows.append(row)
        if not row["parent_account"]:
            section.totals = [t + v for t, v in zip(section.totals, vals, strict=True)]
            section.opening += row["opening_balance"]
    if not truthy(filters.get("show_zero_values")):
        section.rows = _drop_zero_rows(section.rows)
    return section


def _drop_zero_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep rows with a value, and groups with a valued descendant (ERPNext's rule)."""
    keep = {r["account"] for r in rows if r["has_value"]}
    parents = {r["account"]: r["parent_account"] for r in rows}
    for name in list(keep):
        parent = parents.get(name)
        while parent:
            keep.add(parent)
            parent = parents.get(parent)
    return [r for r in rows if r["account"] in keep]


def _summary_row(
    label: str, periods: list[Period], values: list[int], currency: str | None
) -> dict[str, Any]:
    return {
        "account_name": f"'{label}'",
        "account": f"'{label}'",
        "currency": currency,
        **{p.key: v for p, v in zip(periods, values, strict=True)},
        "total": sum(values),
    }


def _rows_in_money(rows: list[dict[str, Any]], periods: list[Period]) -> list[dict[str, Any]]:
    keys = [p.key for p in periods] + ["total", "opening_balance"]
    return [{k: (money(v) if k in keys else v) for k, v in row.items()} for row in rows]


def _section_rows(
    section: Section, periods: list[Period], currency: str | None
) -> list[dict[str, Any]]:
    if not section.rows:
        return []
    label = f"Total {section.root_type} ({section.balance_must_be})"
    total = _summary_row(label, periods, section.totals, currency)
    total["opening_balance"] = section.opening
    return [*section.rows, total, {}]


def _columns(periods: list[Period], periodicity: str, accumulated: bool) -> list[dict[str, Any]]:
    cols = [
        column("Account", "account", "Link", "Account", 300),
        {**column("Currency", "currency", "Link", "Currency"), "hidden": 1},
    ]
    cols += [column(p.label, p.key, "Currency", "currency", 150) for p in periods]
    if periodicity != "Yearly" and not accumulated:
        cols.append(column("Total", "total", "Currency", width=150))
    return cols


def _chart(
    periods: list[Period],
    datasets: list[tuple[str, list[int]]],
    accumulated: bool,
    currency: str | None,
) -> dict[str, Any]:
    return {
        "data": {
            "labels": [p.label for p in periods],
            "datasets": [
                {"name": name, "values": [money(v) for v in vals]} for name, vals in datasets
            ],
        },
        "type": "line" if accumulated else "bar",
        "fieldtype": "Currency",
        "options": "currency",
        "currency": currency,
    }


def _last(values: list[int]) -> int:
    """Accumulated columns already carry running totals: the last one is the figure."""
    return values[-1]


def _accumulated(filters: dict[str, Any], default: bool) -> bool:
    value = filters.get("accumulated_values")
    return default if value in (None, "") else truthy(value)


@report(
    "Profit and Loss Statement", "GL Entry", ROLES, add_total_row=False, required_filters=FILTERS
)
def profit_and_loss(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    accumulated = _accumulated(filters, False)
    periods = financial_periods(ctx, filters, accumulated)
    currency = company_currency(ctx, filters.get("company"))
    buckets = _buckets(ctx, filters, periods, ("Income", "Expense"), profit_and_loss=True)
    income = _section(ctx, filters, "Income", "Credit", periods, buckets, accumulated, True)
    expense = _section(ctx, filters, "Expense", "Debit", periods, buckets, accumulated, True)
    net = [i - e for i, e in zip(income.totals, expense.totals, strict=True)]
    rows = _section_rows(income, periods, currency) + _section_rows(expense, periods, currency)
    if any(net):
        rows.append(
            {
                **_summary_row("Profit for the year", periods, net, currency),
                "warn_if_negative": True,
            }
        )
    pick = _last if accumulated else sum
    yearly = len(periods) == 1 and filters.get("periodicity", "Yearly") == "Yearly"
    suffix = " This Year" if yearly else ""
    net_total = pick(net)
    summary: list[dict[str, Any]] = [
        {"value": money(pick(income.totals)), "label": f"Total Income{suffix}", "datatype": "Currency", "currency": currency},
        {"type": "separator", "value": "-"},
        {"value": money(pick(expense.totals)), "label": f"Total Expense{suffix}", "datatype": "Currency", "currency": currency},
        {"type": "separator", "value": "=", "color": "blue"},
        {
            "value": money(net_total),
            "indicator": "Green" if net_total > 0 else "Red",
            "label": "Profit This Year" if yearly else "Net Profit",
            "datatype": "Currency",
            "currency": currency,
        },
    ]  # fmt: skip
    chart = _chart(
        periods,
        [("Income", income.totals), ("Expense", expense.totals), ("Net Profit/Loss", net)],
        accumulated,
        currency,
    )
    return ReportOutput(
        _columns(periods, str(filters.get("periodicity") or "Yearly"), accumulated),
        _rows_in_money(rows, periods),
        chart=chart,
        report_summary=summary,
    )


@report("Balance Sheet", "GL Entry", ROLES, add_total_row=False, required_filters=FILTERS)
def balance_sheet(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    accumulated = _accumulated(filters, True)
    periods = financial_periods(ctx, filters, accumulated)
    currency = company_currency(ctx, filters.get("company"))
    buckets = _buckets(
        ctx, filters, periods, ("Asset", "Liability", "Equity"), profit_and_loss=False
    )
    asset, liability, equity = (
        _section(ctx, filters, root, side, periods, buckets, accumulated, False)
        for root, side in (("Asset", "Debit"), ("Liability", "Credit"), ("Equity", "Credit"))
    )
    rows = [r for s in (asset, liability, equity) for r in _section_rows(s, periods, currency)]
    message = None
    # Opening balances that do not balance are prior years' P&L never closed to equity.
    unclosed = asset.opening - liability.opening - equity.opening
    funding = [lv + ev for lv, ev in zip(liability.totals, equity.totals, strict=True)]
    provisional = [a - f - unclosed for a, f in zip(asset.totals, funding, strict=True)]
    if unclosed:
        message = "Previous Financial Year is not closed"
        label = "Unclosed Fiscal Years Profit / Loss (Credit)"
        row = _summary_row(label, periods, [unclosed] * len(periods), currency)
        rows.append({**row, "total": unclosed, "warn_if_negative": True})
    if asset.rows and (liability.rows or equity.rows):
        if any(provisional):
            label = "Provisional Profit / Loss (Credit)"
            rows.append(
                {**_summary_row(label, periods, provisional, currency), "warn_if_negative": True}
            )
        total_credit = [f + p + unclosed for f, p in zip(funding, provisional, strict=True)]
        rows.append(
            {
                **_summary_row("Total (Credit)", periods, total_credit, currency),
                "warn_if_negative": True,
            }
        )
    pick = _last if accumulated else sum
    net_provisional = pick(provisional)
    summary: list[dict[str, Any]] = [
        {"value": money(pick(asset.totals)), "label": "Total Asset", "datatype": "Currency", "currency": currency},
        {"value": money(pick(liability.totals)), "label": "Total Liability", "datatype": "Currency", "currency": currency},
        {"value": money(pick(equity.totals)), "label": "Total Equity", "datatype": "Currency", "currency": currency},
        {
            "value": money(net_provisional),
            "label": "Provisional Profit / Loss (Credit)",
            "indicator": "Green" if net_provisional > 0 else "Red",
            "datatype": "Currency",
            "currency": currency,
        },
    ]  # fmt: skip
    chart = _chart(
        periods,
        [("Assets", asset.totals), ("Liabilities", liability.totals), ("Equity", equity.totals)],
        accumulated,
        currency,
    )
    return ReportOutput(
        _columns(periods, str(filters.get("periodicity") or "Yearly"), accumulated),
        _rows_in_money(rows, periods),
        message=message,
        chart=chart,
        report_summary=summary,
    )
