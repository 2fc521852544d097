"""General Ledger: GL entries of a period between an 'Opening' and a 'Closing' row."""

from __future__ import annotations

import datetime as dt
from typing import Any

from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError
from demo_erp.reports import ReportOutput, as_list, column, report
from demo_erp.reports._common import (
    cents,
    check_dates,
    company_currency,
    field_in,
    get_date,
    in_list,
    money,
    scope,
    truthy,
    with_descendants,
)

CONSOLIDATED = "Categorize by Voucher (Consolidated)"
BY_VOUCHER = "Categorize by Voucher"
GROUPINGS = {
    CONSOLIDATED: None,
    BY_VOUCHER: None,
    "Categorize by Account": "account",
    "Categorize by Party": "party",
    "": None,
}
# Older ERPNext releases called the same choices "Group by …".
_LEGACY = {
    "Group by Voucher (Consolidated)": CONSOLIDATED,
    "Group by Voucher": BY_VOUCHER,
    "Group by Account": "Categorize by Account",
    "Group by Party": "Categorize by Party",
}
_ENTRY_FIELDS = (
    "account, party_type, party, voucher_type, voucher_no, against, cost_center, "
    "against_voucher_type, against_voucher, remarks"
)


def _columns(currency: str | None) -> list[dict[str, Any]]:
    cur = f" ({currency})" if currency else ""
    return [
        {**column("GL Entry", "gl_entry", "Link", "GL Entry"), "hidden": 1},
        column("Posting Date", "posting_date", "Date", width=100),
        column("Account", "account", "Link", "Account", 180),
        column(f"Debit{cur}", "debit", "Currency", "currency", 130),
        column(f"Credit{cur}", "credit", "Currency", "currency", 130),
        column(f"Balance{cur}", "balance", "Currency", "currency", 130),
        column("Voucher Type", "voucher_type", "Data", width=120),
        column("Voucher No", "voucher_no", "Dynamic Link", "voucher_type", 180),
        column("Against Account", "against", "Data", width=120),
        column("Party Type", "party_type", "Data", width=100),
        column("Party", "party", "Dynamic Link", "party_type", 100),
        column("Cost Center", "cost_center", "Link", "Cost Center", 100),
        column("Against Voucher Type", "against_voucher_type", "Data", width=100),
        column("Against Voucher", "against_voucher", "Dynamic Link", "against_voucher_type", 100),
        column("Remarks", "remarks", "Data", width=400),
    ]


def _conditions(ctx: Ctx, filters: dict[str, Any]) -> tuple[str, list[Any]]:
    sql = " and g.company = ?"
    params: list[Any] = [filters.get("company")]
    if not truthy(filters.get("show_cancelled_entries")):
        sql += " and ifnull(g.is_cancelled, 0) = 0"
    accounts = as_list(filters.get("account"))
    parts = [
        in_list("g.account", with_descendants(ctx, "Account", accounts)),
        in_list("g.party", as_list(filters.get("party"))),
        in_list("g.cost_center", with_descendants(ctx, "Cost Center", as_list(filters.get("cost_center")))),
        in_list("g.branch", as_list(filters.get("branch"))),
        field_in("GL Entry", "g", "project", filters.get("project")),
    ]  # fmt: skip
    if accounts and not parts[0][1]:
        parts[0] = (" and 0", [])
    if filters.get("party_type"):
        parts.append((" and g.party_type = ?", [filters["party_type"]]))
    if filters.get("voucher_no"):
        parts.append((" and g.voucher_no = ?", [filters["voucher_no"]]))
    for part_sql, part_params in parts:
        sql += part_sql
        params += part_params
    perm_sql, perm_params = scope(ctx, "GL Entry", "g")
    return sql + perm_sql, params + perm_params


def _totals(debit: int, credit: int, label: str) -> dict[str, Any]:
    return {"account": f"'{label}'", "debit": debit, "credit": credit}


def _entries(
    ctx: Ctx, where: str, params: list[Any], from_date: dt.date, to_date: dt.date, mode: str
) -> list[dict[str, Any]]:
    dr, cr = cents("g.debit"), cents("g.credit")
    period = " and g.posting_date between ? and ? and ifnull(g.is_opening, 'No') != 'Yes'"
    args = [*params, from_date.isoformat(), to_date.isoformat()]
    if mode == CONSOLIDATED:
        # One line per voucher and account (and party), debits and credits netted.
        sql = f"""
            select min(g.name) as gl_entry, g.posting_date, g.account, g.party_type, g.party,
                g.voucher_type, g.voucher_no, group_concat(distinct g.against) as against,
                g.cost_center, g.against_voucher_type, g.against_voucher, g.remarks,
                sum({dr}) - sum({cr}) as net
            from "tabGL Entry" g where 1 = 1{where}{period}
            group by g.posting_date, g.voucher_type, g.voucher_no, g.account,
                g.party_type, g.party, g.cost_center, g.against_voucher_type, g.against_voucher
            order by g.posting_date, min(g.creation), g.voucher_no, g.account
        """
        rows = []
        for r in ctx.conn.execute(sql, args):
            row = dict(r)
            net = row.pop("net")
            row.update(debit=max(net, 0), credit=max(-net, 0))
            rows.append(row)
        return rows
    sql = f"""
        select g.name as gl_entry, g.posting_date, {_ENTRY_FIELDS},
            {dr} as debit, {cr} as credit
        from "tabGL Entry" g where 1 = 1{where}{period}
        order by g.posting_date, g.creation, g.name
    """
    return [dict(r) for r in ctx.conn.execute(sql, args)]


def _opening(
    ctx: Ctx, where: str, params: list[Any], from_date: dt.date, to_date: dt.date, key: str | None
) -> dict[str, tuple[int, int]]:
    """Opening debit/credit (before from_date, or marked is_opening) per group key."""
    group = f"g.{key}" if key else "''"
    sql = f"""
        select {group} as k, sum({cents("g.debit")}) as debit, sum({cents("g.credit")}) as credit
        from "tabGL Entry" g
        where 1 = 1{where} and (g.posting_date < ? or
            (ifnull(g.is_opening, 'No') = 'Yes' and g.posting_date <= ?))
        group by {group}
    """
    rows = ctx.conn.execute(sql, [*params, from_date.isoformat(), to_date.isoformat()])
    return {str(r["k"] or ""): (r["debit"] or 0, r["credit"] or 0) for r in rows}


def _block(opening: tuple[int, int], entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Opening, entries with a running balance, Total, Closing — amounts still in cents."""
    total_dr = sum(e["debit"] for e in entries)
    total_cr = sum(e["credit"] for e in entries)
    rows = [_totals(*opening, "Opening"), *entries, _totals(total_dr, total_cr, "Total")]
    rows.append(_totals(opening[0] + total_dr, opening[1] + total_cr, "Closing (Opening + Total)"))
    return rows


def _finish(rows: list[dict[str, Any]], currency: str | None) -> list[dict[str, Any]]:
    """Balance as ERPNext computes it: running within entries, reset on each summary row."""
    balance = 0
    out: list[dict[str, Any]] = []
    for row in rows:
        if not row:
            out.append(row)
            continue
        if not row.get("posting_date"):
            balance = 0
        balance += row["debit"] - row["credit"]
        out.append(
            {
                **row,
                "debit": money(row["debit"]),
                "credit": money(row["credit"]),
                "balance": money(balance),
                "account_currency": currency,
                "currency": currency,
            }
        )
    return out


@report(
    "General Ledger",
    "GL Entry",
    ("Accounts User", "Accounts Manager", "Auditor"),
    add_total_row=False,
    required_filters=("company", "from_date", "to_date"),
)
def general_ledger(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    from_date, to_date = get_date(filters, "from_date"), get_date(filters, "to_date")
    check_dates(from_date, to_date)
    mode = str(filters.get("categorize_by") or filters.get("group_by") or CONSOLIDATED)
    mode = _LEGACY.get(mode, mode)
    if mode not in GROUPINGS:
        raise ValidationError(f"Invalid categorize_by: {mode}")
    key = GROUPINGS[mode]
    where, params = _conditions(ctx, filters)
    entries = _entries(ctx, where, params, from_date, to_date, mode)
    openings = _opening(ctx, where, params, from_date, to_date, key)
    overall = (sum(v[0] for v in openings.values()), sum(v[1] for v in openings.values()))
    if key is None:
        rows = _block(overall, entries)
    else:
        # As in ERPNext, only groups with entries in the period get a block.
        groups: dict[str, list[dict[str, Any]]] = {}
        for entry in entries:
            groups.setdefault(str(entry[key] or ""), []).append(entry)
        rows = [_totals(*overall, "Opening")]
        for name in sorted(groups):
            block = _block(openings.get(name, (0, 0)), groups[name])
            if key == "party":
                for summary in (block[0], block[-1]):
                    summary.update(party_type=groups[name][0]["party_type"], party=name)
            rows += [{}, *block]
        grand = _block(overall, entries)
        rows += [{}, grand[-2], grand[-1]]
    currency = company_currency(ctx, filters.get("company"))
    return ReportOutput(_columns(currency), _finish(rows, currency))
