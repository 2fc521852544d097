"""Accounts Receivable / Payable: one row per open invoice, aged into ranges.

ERPNext builds these from the Payment Ledger; the demo ERP keeps ``outstanding_amount`` on the
invoice, so a row is the invoice with its outstanding rolled back to ``report_date`` (payments
posted after that date are added back).
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass
from typing import Any

from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError
from demo_erp.meta import get_meta
from demo_erp.reports import ReportOutput, as_list, column
from demo_erp.reports._common import (
    cents,
    company_currency,
    field_in,
    get_date,
    in_list,
    money,
    scope,
    tree_filter,
    truthy,
)

DEFAULT_RANGES = (30, 60, 90, 120)


@dataclass(frozen=True)
class PartySide:
    doctype: str
    party_type: str
    party_field: str
    account_field: str
    account_label: str
    note_label: str


RECEIVABLE = PartySide(
    "Sales Invoice", "Customer", "customer", "debit_to", "Receivable Account", "Credit Note"
)
PAYABLE = PartySide(
    "Purchase Invoice", "Supplier", "supplier", "credit_to", "Payable Account", "Debit Note"
)


def parse_ranges(filters: dict[str, Any]) -> list[int]:
    """``range`` = "30, 60, 90, 120" (v15/v16), or the older range1..range4 integers."""
    raw = filters.get("range")
    if raw not in (None, ""):
        parts = [p.strip() for p in str(raw).split(",") if p.strip()]
    else:
        parts = [
            str(filters[k]) for k in ("range1", "range2", "range3", "range4") if filters.get(k)
        ]
    if not parts:
        return list(DEFAULT_RANGES)
    try:
        ranges = [int(float(p)) for p in parts]
    except ValueError as exc:
        raise ValidationError(f"Ageing range must be numbers separated by commas: {raw}") from exc
    if any(b <= a for a, b in itertools.pairwise(ranges)):
        raise ValidationError("Ageing ranges must be in ascending order")
    return ranges


def range_labels(ranges: list[int]) -> list[str]:
    labels, low = [], 0
    for high in ranges:
        labels.append(f"{low}-{high}")
        low = high + 1
    return [*labels, f"{low}-Above"]


def bucket(age: int, ranges: list[int]) -> int:
    """Index of the ageing column; not-yet-due (negative age) falls in the first."""
    for i, days in enumerate(ranges):
        if age <= days:
            return i
    return len(ranges)


def _columns(side: PartySide, labels: list[str]) -> list[dict[str, Any]]:
    def amount(label: str, fieldname: str) -> dict[str, Any]:
        return column(label, fieldname, "Currency", "currency")

    cols = [
        column("Posting Date", "posting_date", "Date", width=90),
        column("Party Type", "party_type", "Data", width=100),
        column("Party", "party", "Dynamic Link", "party_type", 180),
        column(side.account_label, "party_account", "Link", "Account", 180),
        column(f"{side.party_type} Name", f"{side.party_field}_name", "Data", width=180),
        column("Cost Center", "cost_center", "Data"),
        column("Voucher Type", "voucher_type", "Data"),
        column("Voucher No", "voucher_no", "Dynamic Link", "voucher_type", 180),
        column("Due Date", "due_date", "Date"),
    ]
    if side is PAYABLE:
        cols += [column("Bill No", "bill_no", "Data"), column("Bill Date", "bill_date", "Date")]
    cols += [
        amount("Invoiced Amount", "invoiced"),
        amount("Paid Amount", "paid"),
        amount(side.note_label, "credit_note"),
        amount("Outstanding Amount", "outstanding"),
        column("Age (Days)", "age", "Int", width=80),
    ]
    cols += [amount(label, f"range{i + 1}") for i, label in enumerate(labels)]
    cols.append(column("Currency", "currency", "Link", "Currency", 80))
    if side is RECEIVABLE:
        cols += [
            column("Customer LPO", "po_no", "Data"),
            column("Territory", "territory", "Link", "Territory"),
            column("Customer Group", "customer_group", "Link", "Customer Group"),
        ]
    else:
        cols.append(column("Supplier Group", "supplier_group", "Link", "Supplier Group"))
    cols.append(column("Remarks", "remarks", "Text", width=200))
    return cols


def _party_filters(ctx: Ctx, side: PartySide, filters: dict[str, Any]) -> tuple[str, list[Any]]:
    sql, params = "", []
    parties = as_list(filters.get("party")) or as_list(filters.get(side.party_field))
    for part in (
        in_list(f"i.{side.party_field}", parties),
        in_list(f"i.{side.account_field}", as_list(filters.get("party_account"))),
        in_list("i.cost_center", as_list(filters.get("cost_center"))),
        in_list("i.branch", as_list(filters.get("branch"))),
    ):
        sql += part[0]
        params += part[1]
    if side is RECEIVABLE:
        for doctype, expr, key in (
            ("Customer Group", "coalesce(nullif(i.customer_group, ''), p.customer_group)", "customer_group"),
            ("Territory", "coalesce(nullif(i.territory, ''), p.territory)", "territory"),
        ):  # fmt: skip
            part = tree_filter(ctx, doctype, expr, filters.get(key))
            sql += part[0]
            params += part[1]
        part = ("", [])
    else:
        part = in_list("p.supplier_group", as_list(filters.get("supplier_group")))
    project = field_in(side.doctype, "i", "project", filters.get("project"))
    return sql + part[0] + project[0], params + part[1] + project[1]


def _query(ctx: Ctx, side: PartySide, filters: dict[str, Any], report_date: dt.date) -> list[Any]:
    meta = get_meta(side.doctype)
    assert meta is not None
    has_returns = meta.is_valid_column("return_against")
    on = report_date.isoformat()
    extra = (
        "coalesce(nullif(i.territory, ''), p.territory) as territory, "
        "coalesce(nullif(i.customer_group, ''), p.customer_group) as customer_group, "
        "i.po_no, null as bill_no, null as bill_date, null as supplier_group"
        if side is RECEIVABLE
        else "null as territory, null as customer_group, null as po_no, "
        "i.bill_no, i.bill_date, p.supplier_group"
    )
    returns_cte = (
        f", ret as (select return_against as inv, -sum({cents('grand_total')}) as returned "
        f'from "tab{side.doctype}" where docstatus = 1 and is_return = 1 '
        "and ifnull(return_against, '') != '' and posting_date <= ? group by return_against)"
        if has_returns
        else ", ret as (select null as inv, 0 as returned where 0)"
    )
    where, params = _party_filters(ctx, side, filters)
    perm_sql, perm_params = scope(ctx, side.doctype, "i")
    alloc = cents("r.allocated_amount")
    sql = f"""
        with pe as (
            select r.reference_name as inv,
                sum(case when p.posting_date <= ? then {alloc} else 0 end) as paid_upto,
                sum(case when p.posting_date > ? then {alloc} else 0 end) as paid_after
            from "tabPayment Entry Reference" r join "tabPayment Entry" p on p.name = r.parent
            where p.docstatus = 1 and r.parenttype = 'Payment Entry' and r.reference_doctype = ?
            group by r.reference_name
        ){returns_cte}
        select i.name, i.posting_date, i.due_date, i.{side.party_field} as party,
            coalesce(nullif(i.{side.party_field}_name, ''), p.{side.party_field}_name) as party_name,
            i.{side.account_field} as party_account, i.cost_center, i.currency, i.is_return,
            i.remarks, {cents("i.grand_total")} as invoiced,
            {cents("i.outstanding_amount")} + ifnull(pe.paid_after, 0) as outstanding,
            ifnull(pe.paid_upto, 0) as pe_paid, ifnull(ret.returned, 0) as returned, {extra}
        from "tab{side.doctype}" i
        left join "tab{side.party_type}" p on p.name = i.{side.party_field}
        left join pe on pe.inv = i.name
        left join ret on ret.inv = i.name
        where i.docstatus = 1 and i.company = ? and i.posting_date <= ?{where}{perm_sql}
            and {cents("i.outstanding_amount")} + ifnull(pe.paid_after, 0) != 0
        order by i.posting_date, i.name
    """
    args: list[Any] = [on, on, side.doctype]
    if has_returns:
        args.append(on)
    args += [filters.get("company"), on, *params, *perm_params]
    return ctx.conn.execute(sql, args).fetchall()


def execute(ctx: Ctx, side: PartySide, filters: dict[str, Any]) -> ReportOutput:
    party_type = filters.get("party_type")
    if party_type and party_type != side.party_type:
        raise ValidationError(
            f"Party Type must be {side.party_type} for this report, not {party_type}"
        )
    report_date = get_date(filters, "report_date", ctx.today)
    ranges = parse_ranges(filters)
    labels = range_labels(ranges)
    based_on = filters.get("ageing_based_on") or "Due Date"
    age_as_on = ctx.today if filters.get("calculate_ageing_with") == "Today Date" else report_date
    default_currency = company_currency(ctx, filters.get("company"))
    totals = [0] * len(labels)
    data: list[dict[str, Any]] = []
    for r in _query(ctx, side, filters, report_date):
        invoiced = 0 if r["is_return"] else r["invoiced"]
        outstanding = r["outstanding"]
        if r["is_return"]:
            credit_note = -r["invoiced"]
        else:
            # Credit notes only count as far as they reduced this invoice's outstanding.
            settled = max(invoiced - outstanding - r["pe_paid"], 0)
            credit_note = min(r["returned"], settled)
        paid = invoiced - credit_note - outstanding
        ageing_date = r["posting_date"]
        if based_on == "Due Date" and r["due_date"]:
            ageing_date = r["due_date"]
        elif based_on == "Supplier Invoice Date" and r["bill_date"]:
            ageing_date = r["bill_date"]
        age = (age_as_on - dt.date.fromisoformat(ageing_date)).days
        slot = bucket(age, ranges)
        totals[slot] += outstanding
        row: dict[str, Any] = {
            "posting_date": r["posting_date"],
            "party_type": side.party_type,
            "party": r["party"],
            "party_account": r["party_account"],
            f"{side.party_field}_name": r["party_name"],
            "cost_center": r["cost_center"],
            "voucher_type": side.doctype,
            "voucher_no": r["name"],
            "due_date": r["due_date"],
            "invoiced": money(invoiced),
            "paid": money(paid),
            "credit_note": money(credit_note),
            "outstanding": money(outstanding),
            "age": age,
            "currency": r["currency"] or default_currency,
            "remarks": r["remarks"],
        }
        row.update(
            {f"range{i + 1}": money(outstanding if i == slot else 0) for i in range(len(labels))}
        )
        if side is RECEIVABLE:
            row.update(
                po_no=r["po_no"], territory=r["territory"], customer_group=r["customer_group"]
            )
        else:
            row.update(
                bill_no=r["bill_no"], bill_date=r["bill_date"], supplier_group=r["supplier_group"]
            )
        data.append(row)
    chart = {
        "data": {"labels": labels, "datasets": [{"values": [money(t) for t in totals]}]},
        "type": "percentage",
    }
    columns = _columns(side, labels)
    if truthy(filters.get("group_by_party")):
        return ReportOutput(
            columns, _group_by_party(side, columns, data), chart=chart, skip_total_row=True
        )
    return ReportOutput(columns, data, chart=chart)


def _group_by_party(
    side: PartySide, columns: list[dict[str, Any]], data: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """ERPNext's group_by_party: rows by party, a bold subtotal after each, a grand 'Total'."""
    amounts = [c["fieldname"] for c in columns if c["fieldtype"] == "Currency"]

    def subtotal(party: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
        sums = {k: round(sum(r[k] for r in rows), 2) for k in amounts}
        return {"party": party, "party_type": side.party_type, "bold": 1, **sums}

    out: list[dict[str, Any]] = []
    by_party: dict[str, list[dict[str, Any]]] = {}
    for row in data:
        by_party.setdefault(row["party"] or "", []).append(row)
    for party in sorted(by_party):
        out += [*by_party[party], subtotal(party, by_party[party]), {}]
    out.append(subtotal("Total", data))
    return out
