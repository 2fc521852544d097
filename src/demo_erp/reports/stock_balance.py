"""Stock Balance: opening, in, out and closing quantity and value per item and warehouse."""

from __future__ import annotations

from typing import Any

from demo_erp.context import Ctx
from demo_erp.reports import ReportOutput, as_list, column, report
from demo_erp.reports._common import (
    cents,
    check_dates,
    get_date,
    in_list,
    money,
    scope,
    tree_filter,
    truthy,
    with_descendants,
)

_COLUMNS = [
    column("Item", "item_code", "Link", "Item", 100),
    column("Item Name", "item_name", "Data", width=150),
    column("Item Group", "item_group", "Link", "Item Group", 100),
    column("Warehouse", "warehouse", "Link", "Warehouse", 100),
    column("Stock UOM", "stock_uom", "Link", "UOM", 90),
    column("Opening Qty", "opening_qty", "Float", width=100),
    column("Opening Value", "opening_val", "Currency", "currency", 110),
    column("In Qty", "in_qty", "Float", width=80),
    column("In Value", "in_val", "Float", width=80),
    column("Out Qty", "out_qty", "Float", width=80),
    column("Out Value", "out_val", "Float", width=80),
    column("Balance Qty", "bal_qty", "Float", width=100),
    column("Balance Value", "bal_val", "Currency", "currency", 100),
    column("Valuation Rate", "val_rate", "Currency", "currency", 90),
    column("Company", "company", "Link", "Company", 100),
]
_QTY_KEYS = ("opening_qty", "in_qty", "out_qty", "bal_qty")
_VAL_KEYS = ("opening_val", "in_val", "out_val", "bal_val")


def _where(ctx: Ctx, filters: dict[str, Any]) -> tuple[str, list[Any]]:
    sql, params = "", []
    warehouses = as_list(filters.get("warehouse"))
    parts = [
        in_list("s.item_code", as_list(filters.get("item_code"))),
        in_list("s.warehouse", with_descendants(ctx, "Warehouse", warehouses)),
        tree_filter(ctx, "Item Group", "i.item_group", filters.get("item_group")),
        in_list("w.warehouse_type", as_list(filters.get("warehouse_type"))),
        scope(ctx, "Stock Ledger Entry", "s"),
        scope(ctx, "Item", "i"),
    ]
    if filters.get("company"):
        parts.append((" and s.company = ?", [filters["company"]]))
    for part_sql, part_params in parts:
        sql += part_sql
        params += part_params
    return sql, params


@report(
    "Stock Balance",
    "Stock Ledger Entry",
    ("Stock User", "Accounts Manager"),
    prepared_report=True,
    required_filters=("from_date", "to_date"),
)
def stock_balance(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    from_date, to_date = get_date(filters, "from_date"), get_date(filters, "to_date")
    check_dates(from_date, to_date)
    where, params = _where(ctx, filters)
    val = cents("s.stock_value_difference")
    before, in_period = "s.posting_date < ?", "s.posting_date >= ?"
    sql = f"""
        with agg as (
            select s.item_code, s.warehouse, s.company, s.valuation_rate as val_rate,
                -- SQLite takes bare columns from the row holding the single max(): the last SLE.
                max(s.posting_date || ' ' || ifnull(s.posting_time, '') || ' '
                    || ifnull(s.creation, '') || ' ' || s.name) as last_entry,
                sum(case when {before} then s.actual_qty else 0 end) as opening_qty,
                sum(case when {before} then {val} else 0 end) as opening_val,
                sum(case when {in_period} and s.actual_qty >= 0 then s.actual_qty else 0 end) as in_qty,
                sum(case when {in_period} and s.actual_qty >= 0 then {val} else 0 end) as in_val,
                sum(case when {in_period} and s.actual_qty < 0 then -s.actual_qty else 0 end) as out_qty,
                sum(case when {in_period} and s.actual_qty < 0 then -{val} else 0 end) as out_val,
                sum(s.actual_qty) as bal_qty, sum({val}) as bal_val
            from "tabStock Ledger Entry" s
            left join "tabItem" i on i.name = s.item_code
            left join "tabWarehouse" w on w.name = s.warehouse
            where ifnull(s.is_cancelled, 0) = 0 and s.posting_date <= ?{where}
            group by s.item_code, s.warehouse
        )
        select agg.*, i.item_name, i.item_group, i.stock_uom
        from agg left join "tabItem" i on i.name = agg.item_code
        order by agg.item_code, agg.warehouse
    """
    start, end = from_date.isoformat(), to_date.isoformat()
    args = [start, start, start, start, start, start, end, *params]
    include_zero = truthy(filters.get("include_zero_stock_items"))
    data: list[dict[str, Any]] = []
    for r in ctx.conn.execute(sql, args):
        row: dict[str, Any] = {
            "item_code": r["item_code"],
            "item_name": r["item_name"],
            "item_group": r["item_group"],
            "warehouse": r["warehouse"],
            "stock_uom": r["stock_uom"],
            **{k: round(r[k] or 0.0, 6) for k in _QTY_KEYS},
            **{k: money(r[k]) for k in _VAL_KEYS},
            "val_rate": round(r["val_rate"] or 0.0, 6),
            "company": r["company"],
        }
        if include_zero or any(row[k] for k in (*_QTY_KEYS, *_VAL_KEYS)):
            data.append(row)
    return ReportOutput(_COLUMNS, data)
