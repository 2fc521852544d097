"""Sales Analytics: sales value or quantity per customer, item, territory or group, per period."""

from __future__ import annotations

from typing import Any

from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError
from demo_erp.meta import get_meta
from demo_erp.reports import ReportOutput, column, report
from demo_erp.reports._common import TREE_PARENT, cents, check_dates, get_date, money, scope
from demo_erp.reports._periods import analytics_period, analytics_period_ends, scrub

DOC_TYPES = ("Sales Order", "Delivery Note", "Sales Invoice")
TREE_TYPES = (
    "Customer",
    "Item",
    "Territory",
    "Customer Group",
    "Item Group",
    "Order Type",
    "Project",
)
GROUPED = ("Territory", "Customer Group", "Item Group", "Order Type")
RANGES = ("Weekly", "Monthly", "Quarterly", "Half-Yearly", "Yearly")


def _entity_sql(tree_type: str, doc_type: str) -> tuple[str, str, str]:
    """(entity expression, entity-name expression, joins) over d = document, c = customer."""
    if tree_type == "Customer":
        return "d.customer", "coalesce(nullif(d.customer_name, ''), c.customer_name)", ""
    if tree_type in ("Item", "Item Group"):
        item = f'join "tab{doc_type} Item" r on r.parent = d.name and r.parenttype = ?'
        item += ' left join "tabItem" it on it.name = r.item_code'
        entity = "r.item_code" if tree_type == "Item" else "it.item_group"
        return entity, "max(coalesce(nullif(r.item_name, ''), it.item_name))", item
    if tree_type in ("Order Type", "Project"):
        fieldname = scrub(tree_type)
        meta = get_meta(doc_type)
        if meta is None or not meta.is_valid_column(fieldname):
            raise ValidationError(f"{doc_type} has no {tree_type} field: choose another Based On")
        return f"d.{fieldname}", "null", ""
    field = "territory" if tree_type == "Territory" else "customer_group"
    has_field = field == "territory" or doc_type == "Sales Invoice"
    expr = f"coalesce(nullif(d.{field}, ''), c.{field})" if has_field else f"c.{field}"
    return expr, "null", ""


def _query(
    ctx: Ctx, filters: dict[str, Any], tree_type: str, doc_type: str, ends: list[Any]
) -> list[Any]:
    date_field = "transaction_date" if doc_type == "Sales Order" else "posting_date"
    entity, entity_name, join = _entity_sql(tree_type, doc_type)
    by_item = tree_type in ("Item", "Item Group")
    quantity = filters.get("value_quantity") == "Quantity"
    # Values in company currency, like ERPNext's base_net_* fields.
    meta = get_meta(doc_type)
    fx = (
        " * ifnull(d.conversion_rate, 1)"
        if meta and meta.is_valid_column("conversion_rate")
        else ""
    )
    if by_item:
        value = "sum(r.qty)" if quantity else f"sum({cents('r.amount' + fx)})"
    else:
        value = "sum(d.total_qty)" if quantity else f"sum({cents('d.net_total' + fx)})"
    case = (
        "case " + " ".join(f"when d.{date_field} <= ? then {i}" for i in range(len(ends))) + " end"
    )
    perm_sql, perm_params = scope(ctx, doc_type, "d")
    sql = f"""
        select {entity} as entity, {entity_name} as entity_name, {case} as bucket,
            {value} as value
        from "tab{doc_type}" d
        left join "tabCustomer" c on c.name = d.customer
        {join}
        where d.docstatus = 1 and d.company = ? and d.{date_field} between ? and ?{perm_sql}
        group by entity, bucket
    """
    args: list[Any] = [end.isoformat() for end in ends]
    if by_item:
        args.append(doc_type)
    args += [filters.get("company"), get_date(filters, "from_date").isoformat()]
    args += [get_date(filters, "to_date").isoformat(), *perm_params]
    return ctx.conn.execute(sql, args).fetchall()


def _tree_nodes(ctx: Ctx, tree_type: str, doc_type: str) -> list[tuple[str, str]]:
    """(name, parent) of every node, in display order. Order types hang under 'Order Types'."""
    if tree_type == "Order Type":
        meta = get_meta(doc_type)
        field = meta.get_field("order_type") if meta else None
        options = field.select_options if field else []
        return [("Order Types", "")] + [(o, "Order Types") for o in options if o]
    parent_field = TREE_PARENT[tree_type]
    rows = ctx.conn.execute(
        f'select name, "{parent_field}" as parent from "tab{tree_type}" order by ifnull(lft, 0), name'
    )
    return [(r["name"], r["parent"] or "") for r in rows]


def _tree_rows(
    nodes: list[tuple[str, str]], values: dict[str, list[float]], width: int
) -> list[dict[str, Any]]:
    """Every node of the tree, depth first, each carrying its own and its children's figures."""
    names = {name for name, _ in nodes}
    children: dict[str, list[str]] = {}
    for name, parent in nodes:
        children.setdefault(parent if parent in names else "", []).append(name)
    ordered: list[tuple[str, int, str]] = []

    def walk(parent: str, depth: int) -> None:
        for name in children.get(parent, []):
            ordered.append((name, depth, parent))
            walk(name, depth + 1)

    walk("", 0)
    totals = {name: list(values.get(name, [0.0] * width)) for name, _, _ in ordered}
    for name, _, parent in reversed(ordered):
        if parent:
            totals[parent] = [a + b for a, b in zip(totals[parent], totals[name], strict=True)]
    return [
        {"entity": name, "indent": depth, "_values": totals[name]} for name, depth, _ in ordered
    ]


@report(
    "Sales Analytics",
    "Sales Order",
    ("Stock User", "Maintenance User", "Accounts User", "Sales Manager"),
    required_filters=("company", "from_date", "to_date"),
)
def sales_analytics(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    tree_type = str(filters.get("tree_type") or "Customer")
    doc_type = str(filters.get("doc_type") or "Sales Invoice")
    range_ = str(filters.get("range") or "Monthly")
    if tree_type not in TREE_TYPES or doc_type not in DOC_TYPES or range_ not in RANGES:
        raise ValidationError(
            f"Unsupported tree_type / doc_type / range: {tree_type} / {doc_type} / {range_}"
        )
    from_date, to_date = get_date(filters, "from_date"), get_date(filters, "to_date")
    check_dates(from_date, to_date)
    ends = analytics_period_ends(ctx, range_, from_date, to_date)
    labels = [analytics_period(ctx, range_, end) for end in ends]
    quantity = filters.get("value_quantity") == "Quantity"
    values: dict[str, list[float]] = {}
    names: dict[str, Any] = {}
    for r in _query(ctx, filters, tree_type, doc_type, ends):
        entity = r["entity"] or ""
        amount = float(r["value"] or 0) if quantity else money(r["value"])
        values.setdefault(entity, [0.0] * len(ends))[r["bucket"]] += amount
        names[entity] = r["entity_name"]

    if tree_type == "Order Type":
        columns = [column(tree_type, "entity", "Data", width=200)]
    else:
        columns = [column(tree_type, "entity", "Link", tree_type, 140)]
    if tree_type in ("Customer", "Item"):
        columns.append(column(f"{tree_type} Name", "entity_name", "Data", width=140))
    if tree_type == "Item":
        columns.append(column("UOM", "stock_uom", "Link", "UOM", 100))
    columns += [column(label, scrub(label), "Float", width=120) for label in labels]
    columns.append(column("Total", "total", "Float", width=120))

    grouped = tree_type in GROUPED
    if grouped:
        rows = _tree_rows(_tree_nodes(ctx, tree_type, doc_type), values, len(ends))
    else:
        rows = [{"entity": e, "entity_name": names.get(e), "_values": v} for e, v in values.items()]
        if tree_type == "Project":
            rows = [r for r in rows if r["entity"]]
        rows.sort(key=lambda row: (-sum(row["_values"]), row["entity"]))
        if tree_type == "Item":
            uoms = dict(ctx.conn.execute('select name, stock_uom from "tabItem"').fetchall())
            for row in rows:
                row["stock_uom"] = uoms.get(row["entity"])
    period_totals = [0.0] * len(ends)
    for row in rows:
        vals = [round(v, 6) for v in row.pop("_values")]
        row.update({scrub(label): v for label, v in zip(labels, vals, strict=True)})
        row["total"] = round(sum(vals), 6)
        if not grouped or row["indent"] == 0:
            period_totals = [a + b for a, b in zip(period_totals, vals, strict=True)]
    chart = {
        "data": {
            "labels": labels,
            "datasets": [{"name": "Total", "values": [round(v, 6) for v in period_totals]}],
        },
        "type": "line",
        "fieldtype": "Float" if quantity else "Currency",
    }
    # Group trees list parents and children: a column sum would count sales twice.
    return ReportOutput(columns, rows, chart=chart, skip_total_row=grouped)
