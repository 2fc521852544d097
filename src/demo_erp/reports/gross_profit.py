"""Gross Profit: selling amount against buying (valuation) amount of Sales Invoice lines.

Buying rate per line, first found: the line's own stock ledger (update-stock invoice), the
linked Delivery Note's stock ledger, the Bin's valuation rate, the Item's valuation rate.
"""

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
    get_date,
    in_list,
    money,
    scope,
    tree_filter,
    truthy,
    with_descendants,
)

_AMOUNTS = ["qty", "base_rate", "buying_rate", "base_amount", "buying_amount", "gross_profit", "gross_profit_percent"]  # fmt: skip
_PROFIT = ["base_amount", "buying_amount", "gross_profit", "gross_profit_percent"]
# group_by -> (SQL key over the lines CTE, columns) as ERPNext's group_wise_columns.
GROUPS: dict[str, tuple[str, list[str]]] = {
    "Item Code": ("item_code", ["item_code", "item_name", "brand", "description", *_AMOUNTS]),
    "Item Group": ("item_group", ["item_group", *_AMOUNTS]),
    "Brand": ("brand", ["brand", *_AMOUNTS]),
    "Warehouse": ("warehouse", ["warehouse", *_AMOUNTS]),
    "Customer": ("customer", ["customer", "customer_group", *_AMOUNTS]),
    "Customer Group": ("customer_group", ["customer_group", *_AMOUNTS]),
    "Territory": ("territory", ["territory", *_PROFIT]),
    "Project": ("project", ["project", *_PROFIT]),
    "Cost Center": ("cost_center", ["cost_center", *_PROFIT]),
    "Monthly": ("substr(posting_date, 1, 7)", ["monthly", *_PROFIT]),
}
_INVOICE_COLUMNS = [
    "invoice_or_item", "customer", "customer_group", "posting_date", "currency", "item_code",
    "item_name", "warehouse", *_AMOUNTS, "project",
]  # fmt: skip
_COLUMN_DEFS = {
    "invoice_or_item": column("Sales Invoice", "invoice_or_item", "Link", "Sales Invoice", 160),
    "posting_date": column("Posting Date", "posting_date", "Date", width=100),
    "currency": {**column("Currency", "currency", "Link", "Currency", 100), "hidden": 1},
    "item_code": column("Item Code", "item_code", "Link", "Item", 100),
    "item_name": column("Item Name", "item_name", "Data", width=100),
    "item_group": column("Item Group", "item_group", "Link", "Item Group", 100),
    "brand": column("Brand", "brand", "Data", width=100),
    "description": column("Description", "description", "Data", width=150),
    "warehouse": column("Warehouse", "warehouse", "Link", "Warehouse", 100),
    "qty": column("Qty", "qty", "Float", width=80),
    "base_rate": column("Avg. Selling Rate", "base_rate", "Currency", "currency", 100),
    "buying_rate": column("Valuation Rate", "buying_rate", "Currency", "currency", 100),
    "base_amount": column("Selling Amount", "base_amount", "Currency", "currency", 100),
    "buying_amount": column("Buying Amount", "buying_amount", "Currency", "currency", 100),
    "gross_profit": column("Gross Profit", "gross_profit", "Currency", "currency", 100),
    "gross_profit_percent": column("Gross Profit Percent", "gross_profit_percent", "Percent", width=100),
    "customer": column("Customer", "customer", "Link", "Customer", 100),
    "customer_group": column("Customer Group", "customer_group", "Link", "Customer Group", 100),
    "territory": column("Territory", "territory", "Link", "Territory", 100),
    "project": column("Project", "project", "Link", "Project", 100),
    "cost_center": column("Cost Center", "cost_center", "Link", "Cost Center", 100),
    "monthly": column("Monthly", "monthly", "Data", width=100),
}  # fmt: skip


def _lines_cte(ctx: Ctx, filters: dict[str, Any]) -> tuple[str, list[Any]]:
    """A CTE ``lines``: one row per submitted invoice line, amounts in cents."""
    from_date, to_date = get_date(filters, "from_date"), get_date(filters, "to_date")
    check_dates(from_date, to_date)
    where, params = "", []
    include_returns = filters.get("include_returned_invoices") in (None, "") or truthy(
        filters.get("include_returned_invoices")
    )
    parts = [
        in_list("si.name", as_list(filters.get("sales_invoice"))),
        in_list("si.customer", as_list(filters.get("customer"))),
        in_list("si.branch", as_list(filters.get("branch"))),
        in_list("si.project", as_list(filters.get("project"))),
        in_list("r.warehouse", with_descendants(ctx, "Warehouse", as_list(filters.get("warehouse")))),
        in_list("ifnull(r.cost_center, si.cost_center)", with_descendants(ctx, "Cost Center", as_list(filters.get("cost_center")))),
        tree_filter(ctx, "Item Group", "it.item_group", filters.get("item_group")),
        scope(ctx, "Sales Invoice", "si"),
    ]  # fmt: skip
    if not include_returns:
        parts.append((" and ifnull(si.is_return, 0) = 0", []))
    for part_sql, part_params in parts:
        where += part_sql
        params += part_params
    rate = """coalesce(
        case when s1.q != 0 then s1.v / s1.q end, case when s2.q != 0 then s2.v / s2.q end,
        nullif(b.valuation_rate, 0), it.valuation_rate, 0)"""
    sql = f"""
        with sle as (
            select voucher_no, item_code, sum(stock_value_difference) as v, sum(actual_qty) as q
            from "tabStock Ledger Entry"
            where ifnull(is_cancelled, 0) = 0 and voucher_type in ('Sales Invoice', 'Delivery Note')
            group by voucher_no, item_code
        ), lines as (
            select si.name as invoice, si.posting_date, si.customer, si.currency, si.project,
                coalesce(nullif(si.customer_group, ''), c.customer_group) as customer_group,
                coalesce(nullif(si.territory, ''), c.territory) as territory,
                ifnull(r.cost_center, si.cost_center) as cost_center, r.idx, r.item_code,
                coalesce(nullif(r.item_name, ''), it.item_name) as item_name, it.item_group,
                it.brand, coalesce(r.description, it.description) as description, r.warehouse,
                ifnull(r.qty, 0) as qty,
                {cents("r.amount * ifnull(si.conversion_rate, 1)")} as selling,
                cast(round(ifnull(r.qty, 0) * {rate} * 100) as integer) as buying
            from "tabSales Invoice" si
            join "tabSales Invoice Item" r on r.parent = si.name and r.parenttype = 'Sales Invoice'
            left join "tabCustomer" c on c.name = si.customer
            left join "tabItem" it on it.name = r.item_code
            left join sle s1 on s1.voucher_no = si.name and s1.item_code = r.item_code
            left join sle s2 on s2.voucher_no = r.delivery_note and s2.item_code = r.item_code
            left join "tabBin" b on b.item_code = r.item_code and b.warehouse = r.warehouse
            where si.docstatus = 1 and si.company = ? and si.posting_date between ? and ?{where}
        )
    """
    return sql, [filters.get("company"), from_date.isoformat(), to_date.isoformat(), *params]


def _figures(qty: float, selling: int, buying: int) -> dict[str, Any]:
    profit = selling - buying
    return {
        "qty": round(qty, 6),
        "base_rate": round(selling / 100 / qty, 2) if qty else 0.0,
        "buying_rate": round(buying / 100 / qty, 2) if qty else 0.0,
        "base_amount": money(selling),
        "buying_amount": money(buying),
        "gross_profit": money(profit),
        "gross_profit_percent": round(profit / selling * 100, 2) if selling else 0.0,
    }


def _by_invoice(
    ctx: Ctx, cte: str, params: list[Any], currency: str | None
) -> list[dict[str, Any]]:
    """An invoice row (indent 0) with its totals, then its lines (indent 1), newest first."""
    sql = cte + " select * from lines order by posting_date desc, invoice desc, idx"
    rows: list[dict[str, Any]] = []
    headers: dict[str, dict[str, Any]] = {}
    sums: dict[str, tuple[float, int, int]] = {}
    for line in ctx.conn.execute(sql, params):
        invoice = line["invoice"]
        if invoice not in headers:
            headers[invoice] = {
                "invoice_or_item": invoice,
                "customer": line["customer"],
                "customer_group": line["customer_group"],
                "posting_date": line["posting_date"],
                "currency": line["currency"] or currency,
                "project": line["project"],
                "indent": 0.0,
            }
            rows.append(headers[invoice])
        qty, selling, buying = sums.get(invoice, (0.0, 0, 0))
        sums[invoice] = (qty + line["qty"], selling + line["selling"], buying + line["buying"])
        rows.append(
            {
                "invoice_or_item": line["item_code"],
                "item_code": line["item_code"],
                "item_name": line["item_name"],
                "warehouse": line["warehouse"],
                "currency": line["currency"] or currency,
                "parent_invoice": invoice,
                "indent": 1.0,
                **_figures(line["qty"], line["selling"], line["buying"]),
            }
        )
    for invoice, header in headers.items():
        header.update(_figures(*sums[invoice]))
    return rows


def _grouped(
    ctx: Ctx, cte: str, params: list[Any], group_by: str, currency: str | None
) -> list[dict[str, Any]]:
    key, names = GROUPS[group_by]
    extra = {
        "Item Code": ", max(item_name) as item_name, max(brand) as brand, max(description) as description",
        "Customer": ", max(customer_group) as customer_group",
    }.get(group_by, "")
    sql = (
        f"{cte} select {key} as k, sum(qty) as qty, sum(selling) as selling, sum(buying) as buying"
        f"{extra} from lines group by {key} order by {key}"
    )
    rows = []
    for r in map(dict, ctx.conn.execute(sql, params)):
        row: dict[str, Any] = {names[0]: r["k"], "currency": currency}
        if group_by == "Monthly" and r["k"]:
            row["monthly"] = f"{dt.date.fromisoformat(r['k'] + '-01'):%b %Y}"
        for extra_key in ("item_name", "brand", "description", "customer_group"):
            if extra_key in names[1:] and extra_key in r:
                row[extra_key] = r[extra_key]
        row.update(_figures(r["qty"] or 0.0, r["selling"] or 0, r["buying"] or 0))
        rows.append({k: v for k, v in row.items() if k in names or k == "currency"})
    return rows


@report(
    "Gross Profit",
    "Sales Invoice",
    ("Accounts Manager", "Accounts User"),
    required_filters=("company", "from_date", "to_date"),
)
def gross_profit(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    group_by = str(filters.get("group_by") or "Invoice")
    if group_by != "Invoice" and group_by not in GROUPS:
        raise ValidationError(f"Unsupported group_by: {group_by}")
    cte, params = _lines_cte(ctx, filters)
    currency = company_currency(ctx, filters.get("company"))
    if group_by == "Invoice":
        names = _INVOICE_COLUMNS
        data = _by_invoice(ctx, cte, params, currency)
    else:
        names = GROUPS[group_by][1]
        data = _grouped(ctx, cte, params, group_by, currency)
    columns = [_COLUMN_DEFS[n] for n in names]
    if "currency" not in names:
        columns.append(_COLUMN_DEFS["currency"])
    # Invoice rows repeat the sums of their lines: a column total would count them twice.
    return ReportOutput(columns, data, skip_total_row=group_by == "Invoice")
