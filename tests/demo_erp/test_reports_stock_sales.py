"""Stock Balance, Sales Analytics and Gross Profit: checked against the raw rows."""

from __future__ import annotations

import datetime as dt
import random
import secrets
from typing import Any

import pytest

from demo_erp.context import Ctx, Settings, as_user
from demo_erp.exceptions import ValidationError
from demo_erp.meta import get_meta
from demo_erp.reports import run

CO = "Sample Trading"


def put(
    ctx: Ctx, doctype: str, children: dict[str, list[dict[str, Any]]] | None = None, **values: Any
) -> str:
    """Insert a row straight into the table (no controllers: ledgers are not posted)."""
    meta = get_meta(doctype)
    assert meta is not None
    row = {"name": secrets.token_hex(5), "owner": "Administrator", "docstatus": 0, "idx": 0,
           "creation": "2026-01-01 00:00:00", "modified": "2026-01-01 00:00:00", **values}  # fmt: skip
    cols = [c for c in row if meta.is_valid_column(c)]
    names = ", ".join(f'"{c}"' for c in cols)
    marks = ", ".join("?" for _ in cols)
    ctx.conn.execute(
        f'insert into "{meta.table_name}" ({names}) values ({marks})', [row[c] for c in cols]
    )
    for fieldname, rows in (children or {}).items():
        field = meta.get_field(fieldname)
        assert field is not None
        for i, child in enumerate(rows, start=1):
            put(ctx, field.options, parent=row["name"], parentfield=fieldname, parenttype=doctype,
                idx=i, docstatus=row["docstatus"], **child)  # fmt: skip
    return str(row["name"])


@pytest.fixture
def masters(empty_db: tuple[Settings, Ctx]) -> tuple[Settings, Ctx]:
    settings, ctx = empty_db
    put(ctx, "Company", name=CO, company_name=CO, abbr="ST", default_currency="USD", country="US")
    for name, parent in (("All Item Groups", None), ("Products", "All Item Groups"),
                         ("Raw Material", "All Item Groups")):  # fmt: skip
        put(ctx, "Item Group", name=name, item_group_name=name, parent_item_group=parent)
    put(ctx, "Item", name="WIDGET", item_code="WIDGET", item_name="Widget", item_group="Products",
        stock_uom="Nos", valuation_rate=8)  # fmt: skip
    put(ctx, "Item", name="GADGET", item_code="GADGET", item_name="Gadget", item_group="Raw Material",
        stock_uom="Kg", valuation_rate=21)  # fmt: skip
    for name in ("Stores - ST", "Finished - ST"):
        put(ctx, "Warehouse", name=name, warehouse_name=name[:-5], company=CO)
    for name, parent in (("All Territories", None), ("Europe", "All Territories"),
                         ("France", "Europe"), ("Asia", "All Territories")):  # fmt: skip
        put(ctx, "Territory", name=name, territory_name=name, parent_territory=parent)
    for name, territory in (("Acme", "France"), ("Bolt", "Asia"), ("Cobalt", "Europe")):
        put(ctx, "Customer", name=name, customer_name=f"{name} Ltd", territory=territory)
    return settings, ctx


# ---------------------------------------------------------------- Stock Balance


def test_stock_balance(masters: tuple[Settings, Ctx]) -> None:
    _, ctx = masters
    rng = random.Random(3)
    sles: list[dict[str, Any]] = []
    for n in range(200):
        item, wh = rng.choice(["WIDGET", "GADGET"]), rng.choice(["Stores - ST", "Finished - ST"])
        qty = rng.choice([-1, 1, 1]) * rng.randrange(1, 20)
        rate = rng.randrange(500, 900) / 100
        day = (dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(180))).isoformat()
        sle: dict[str, Any] = {"item_code": item, "warehouse": wh, "posting_date": day, "actual_qty": qty,
               "stock_value_difference": round(qty * rate, 2), "valuation_rate": rate,
               "is_cancelled": int(n % 17 == 0), "creation": f"{day} 10:{n // 60:02d}:{n % 60:02d}"}  # fmt: skip
        sles.append(sle)
        put(ctx, "Stock Ledger Entry", company=CO, **sle)
    filters = {"from_date": "2026-03-01", "to_date": "2026-04-30", "company": CO}
    prepared = run(ctx, "Stock Balance", filters)
    assert prepared["prepared_report"] is True
    assert prepared["doc"] is None
    assert "result" not in prepared
    out = run(ctx, "Stock Balance", filters, ignore_prepared_report=1)
    rows = {(r["item_code"], r["warehouse"]): r for r in out["result"] if isinstance(r, dict)}
    assert len(rows) == 4
    for (item, wh), row in rows.items():
        mine = sorted(
            (s for s in sles if (s["item_code"], s["warehouse"]) == (item, wh) and not s["is_cancelled"]
             and s["posting_date"] <= "2026-04-30"),
            key=lambda s: (s["posting_date"], s["creation"]),
        )  # fmt: skip
        before = [s for s in mine if s["posting_date"] < "2026-03-01"]
        during = [s for s in mine if s["posting_date"] >= "2026-03-01"]
        assert row["opening_qty"] == sum(s["actual_qty"] for s in before)
        assert row["in_qty"] == sum(s["actual_qty"] for s in during if s["actual_qty"] > 0)
        assert row["out_qty"] == -sum(s["actual_qty"] for s in during if s["actual_qty"] < 0)
        assert row["bal_qty"] == sum(s["actual_qty"] for s in mine)
        cents = sum(round(s["stock_value_difference"] * 100) for s in mine)
        assert row["bal_val"] == round(cents / 100, 2)
        assert row["opening_val"] == round(
            sum(round(s["stock_value_difference"] * 100) for s in before) / 100, 2
        )
        assert row["val_rate"] == mine[-1]["valuation_rate"]
        assert row["item_name"] == item.title()
        assert row["company"] == CO
        assert row["stock_uom"] == ("Nos" if item == "WIDGET" else "Kg")
    names = [c["fieldname"] for c in out["columns"]]
    assert names[:5] == ["item_code", "item_name", "item_group", "warehouse", "stock_uom"]
    total = out["result"][-1]
    assert isinstance(total, list)
    assert total[0] == "Total"
    assert total[names.index("bal_qty")] == sum(r["bal_qty"] for r in rows.values())
    only = run(ctx, "Stock Balance", {**filters, "item_group": "Products", "warehouse": ["Stores - ST"]},
               ignore_prepared_report=True)  # fmt: skip
    assert [(r["item_code"], r["warehouse"]) for r in only["result"][:-1]] == [
        ("WIDGET", "Stores - ST")
    ]


# ---------------------------------------------------------------- Sales Analytics


@pytest.fixture
def sales(masters: tuple[Settings, Ctx]) -> tuple[Settings, Ctx, list[dict[str, Any]]]:
    settings, ctx = masters
    rng = random.Random(11)
    invoices = []
    for n in range(60):
        day = (dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(181))).isoformat()
        customer = rng.choice(["Acme", "Bolt", "Cobalt"])
        items: list[dict[str, Any]] = [{"item_code": code, "qty": rng.randrange(1, 9), "rate": rng.randrange(100, 5000) / 100}
                 for code in rng.sample(["WIDGET", "GADGET"], rng.randrange(1, 3))]  # fmt: skip
        for it in items:
            it["amount"] = round(it["qty"] * it["rate"], 2)
        doc = {"name": f"SINV-{n}", "customer": customer, "posting_date": day, "docstatus": 1 if n % 10 else 0,
               "net_total": round(sum(i["amount"] for i in items), 2), "total_qty": sum(i["qty"] for i in items),
               "branch": "North" if n % 2 else "South"}  # fmt: skip
        invoices.append({**doc, "items": items})
        put(ctx, "Sales Invoice", company=CO, children={"items": items}, **doc)
    put(ctx, "Sales Invoice", name="SINV-X", customer="Acme", posting_date="2026-02-02", docstatus=2,
        company=CO, net_total=1000, total_qty=1)  # fmt: skip
    put(ctx, "Sales Order", name="SO-1", customer="Bolt", transaction_date="2026-05-20", docstatus=1,
        company=CO, net_total=321.5, total_qty=4, territory="Asia")  # fmt: skip
    return settings, ctx, [i for i in invoices if i["docstatus"] == 1]


def test_sales_analytics_by_customer_monthly(
    sales: tuple[Settings, Ctx, list[dict[str, Any]]],
) -> None:
    _, ctx, invoices = sales
    base = {"company": CO, "from_date": "2026-01-01", "to_date": "2026-06-30"}
    out = run(ctx, "Sales Analytics", base)  # defaults: Customer, Sales Invoice, Monthly, Value
    fields = [c["fieldname"] for c in out["columns"]]
    assert fields == ["entity", "entity_name", "jan_2026", "feb_2026", "mar_2026", "apr_2026",
                      "may_2026", "jun_2026", "total"]  # fmt: skip
    assert out["columns"][2]["label"] == "Jan 2026"
    assert out["columns"][2]["fieldtype"] == "Float"
    rows = {r["entity"]: r for r in out["result"] if isinstance(r, dict)}
    for customer, row in rows.items():
        mine = [i for i in invoices if i["customer"] == customer]
        assert row["total"] == round(sum(round(i["net_total"] * 100) for i in mine) / 100, 2)
        feb = [i for i in mine if i["posting_date"].startswith("2026-02")]
        assert row["feb_2026"] == round(sum(round(i["net_total"] * 100) for i in feb) / 100, 2)
        assert row["entity_name"] == f"{customer} Ltd"
    assert out["chart"]["type"] == "line"
    assert out["chart"]["data"]["labels"][0] == "Jan 2026"
    assert isinstance(out["result"][-1], list)  # total row
    qty = run(ctx, "Sales Analytics", {**base, "value_quantity": "Quantity", "range": "Quarterly"})
    assert [c["fieldname"] for c in qty["columns"][2:]] == [
        "quarter_1_2026",
        "quarter_2_2026",
        "total",
    ]
    acme = next(r for r in qty["result"] if isinstance(r, dict) and r["entity"] == "Acme")
    assert acme["total"] == sum(i["total_qty"] for i in invoices if i["customer"] == "Acme")
    weekly = run(ctx, "Sales Analytics", {**base, "range": "Weekly", "to_date": "2026-01-20"})
    assert [c["fieldname"] for c in weekly["columns"][2:5]] == [
        "week_1_2026",
        "week_2_2026",
        "week_3_2026",
    ]


def test_sales_analytics_items_trees_and_orders(
    sales: tuple[Settings, Ctx, list[dict[str, Any]]],
) -> None:
    _, ctx, invoices = sales
    base = {"company": CO, "from_date": "2026-01-01", "to_date": "2026-06-30", "range": "Yearly"}
    items = run(ctx, "Sales Analytics", {**base, "tree_type": "Item"})
    assert [c["fieldname"] for c in items["columns"][:3]] == ["entity", "entity_name", "stock_uom"]
    assert [c["fieldname"] for c in items["columns"][3:]] == ["2026", "total"]
    widget = next(r for r in items["result"] if isinstance(r, dict) and r["entity"] == "WIDGET")
    lines = [i for inv in invoices for i in inv["items"] if i["item_code"] == "WIDGET"]
    assert widget["total"] == round(sum(round(i["amount"] * 100) for i in lines) / 100, 2)
    assert widget["stock_uom"] == "Nos"
    tree = run(ctx, "Sales Analytics", {**base, "tree_type": "Territory"})
    assert not isinstance(tree["result"][-1], list)  # parents repeat children: no column total
    rows = {r["entity"]: r for r in tree["result"]}
    by_customer = {c: sum(round(i["net_total"] * 100) for i in invoices if i["customer"] == c) for c in ("Acme", "Bolt", "Cobalt")}  # fmt: skip
    assert rows["France"]["total"] == round(by_customer["Acme"] / 100, 2)
    assert rows["Europe"]["total"] == round((by_customer["Acme"] + by_customer["Cobalt"]) / 100, 2)
    assert rows["All Territories"]["total"] == round(sum(by_customer.values()) / 100, 2)
    assert (
        rows["All Territories"]["indent"],
        rows["Europe"]["indent"],
        rows["France"]["indent"],
    ) == (0, 1, 2)
    assert [r["entity"] for r in tree["result"]].index("Europe") < [
        r["entity"] for r in tree["result"]
    ].index("France")
    orders = run(ctx, "Sales Analytics", {**base, "doc_type": "Sales Order"})
    assert [(r["entity"], r["total"]) for r in orders["result"] if isinstance(r, dict)] == [
        ("Bolt", 321.5)
    ]


def test_sales_analytics_respects_branch_permission(
    sales: tuple[Settings, Ctx, list[dict[str, Any]]],
) -> None:
    settings, ctx, invoices = sales
    put(
        ctx,
        "User",
        name="n@example.com",
        email="n@example.com",
        first_name="N",
        user_type="System User",
    )
    put(
        ctx,
        "Has Role",
        parent="n@example.com",
        parentfield="roles",
        parenttype="User",
        role="Sales Manager",
    )
    put(ctx, "User Permission", user="n@example.com", allow="Branch", for_value="North")
    user = as_user(ctx.conn, settings, "n@example.com")
    out = run(
        user, "Sales Analytics", {"company": CO, "from_date": "2026-01-01", "to_date": "2026-06-30"}
    )
    total = sum(r["total"] for r in out["result"] if isinstance(r, dict))
    expected = sum(round(i["net_total"] * 100) for i in invoices if i["branch"] == "North")
    assert round(total, 2) == round(expected / 100, 2)


# ---------------------------------------------------------------- Gross Profit


def test_gross_profit(masters: tuple[Settings, Ctx]) -> None:
    _, ctx = masters
    put(ctx, "Bin", item_code="WIDGET", warehouse="Stores - ST", actual_qty=50, valuation_rate=7.5)
    common: dict[str, Any] = {
        "company": CO,
        "docstatus": 1,
        "conversion_rate": 1,
        "currency": "USD",
    }
    put(ctx, "Sales Invoice", name="SI-A", customer="Acme", posting_date="2026-03-05", **common, children={"items": [
        {"item_code": "WIDGET", "qty": 10, "rate": 12, "amount": 120, "warehouse": "Stores - ST"},
        {"item_code": "GADGET", "qty": 2, "rate": 25, "amount": 50, "warehouse": "Stores - ST"},
    ]})  # fmt: skip
    put(ctx, "Stock Ledger Entry", item_code="GADGET", warehouse="Stores - ST", posting_date="2026-03-05",
        actual_qty=-2, stock_value_difference=-44, voucher_type="Sales Invoice", voucher_no="SI-A")  # fmt: skip
    put(ctx, "Sales Invoice", name="SI-B", customer="Bolt", posting_date="2026-04-10", **common, children={"items": [
        {"item_code": "GADGET", "qty": 3, "rate": 30, "amount": 90, "delivery_note": "DN-1"},
        {"item_code": "WIDGET", "qty": 1, "rate": 15, "amount": 15, "warehouse": "Finished - ST"},
    ]})  # fmt: skip
    put(ctx, "Stock Ledger Entry", item_code="GADGET", warehouse="Stores - ST", posting_date="2026-04-01",
        actual_qty=-3, stock_value_difference=-60, voucher_type="Delivery Note", voucher_no="DN-1")  # fmt: skip
    put(ctx, "Sales Invoice", name="SI-C", customer="Acme", posting_date="2026-04-20", is_return=1,
        **common, children={"items": [
            {"item_code": "WIDGET", "qty": -1, "rate": 12, "amount": -12, "warehouse": "Stores - ST"}]})  # fmt: skip
    put(ctx, "Sales Invoice", name="SI-D", customer="Acme", posting_date="2026-04-20", company=CO,
        children={"items": [{"item_code": "WIDGET", "qty": 100, "rate": 1, "amount": 100}]})  # fmt: skip
    base = {"company": CO, "from_date": "2026-01-01", "to_date": "2026-12-31"}

    by_item = run(ctx, "Gross Profit", {**base, "group_by": "Item Code"})
    rows = {r["item_code"]: r for r in by_item["result"] if isinstance(r, dict)}
    assert (rows["WIDGET"]["base_amount"], rows["WIDGET"]["buying_amount"]) == (123.0, 75.5)
    assert (rows["GADGET"]["base_amount"], rows["GADGET"]["buying_amount"]) == (140.0, 104.0)
    assert rows["GADGET"]["gross_profit"] == 36.0
    assert rows["GADGET"]["qty"] == 5
    assert rows["GADGET"]["gross_profit_percent"] == round(36 / 140 * 100, 2)
    assert rows["GADGET"]["buying_rate"] == 20.8
    assert rows["GADGET"]["base_rate"] == 28.0
    total = by_item["result"][-1]
    names = [c["fieldname"] for c in by_item["columns"]]
    assert isinstance(total, list)
    assert total[names.index("gross_profit")] == 83.5

    by_invoice = run(ctx, "Gross Profit", base)
    result = by_invoice["result"]
    assert [r["invoice_or_item"] for r in result if r["indent"] == 0] == ["SI-C", "SI-B", "SI-A"]
    header = next(r for r in result if r["invoice_or_item"] == "SI-A")
    assert (header["base_amount"], header["buying_amount"], header["gross_profit"]) == (
        170.0,
        119.0,
        51.0,
    )
    assert header["gross_profit_percent"] == 30.0
    assert not isinstance(result[-1], list)
    no_returns = run(
        ctx, "Gross Profit", {**base, "include_returned_invoices": 0, "group_by": "Customer"}
    )
    acme = next(r for r in no_returns["result"] if isinstance(r, dict) and r["customer"] == "Acme")
    assert acme["base_amount"] == 170.0
    monthly = run(ctx, "Gross Profit", {**base, "group_by": "Monthly"})
    assert [(r["monthly"], r["gross_profit"]) for r in monthly["result"] if isinstance(r, dict)] == [
        ("Mar 2026", 51.0), ("Apr 2026", 32.5)
    ]  # fmt: skip


def test_sales_analytics_order_type_and_project(
    sales: tuple[Settings, Ctx, list[dict[str, Any]]],
) -> None:
    _, ctx, _ = sales
    base = {"company": CO, "from_date": "2026-01-01", "to_date": "2026-06-30", "range": "Quarterly"}
    put(ctx, "Sales Order", name="SO-2", customer="Acme", transaction_date="2026-02-01", docstatus=1,
        company=CO, net_total=100, total_qty=1, order_type="Maintenance")  # fmt: skip
    ctx.conn.execute('update "tabSales Order" set order_type = ? where name = ?', ("Sales", "SO-1"))
    out = run(
        ctx, "Sales Analytics", {**base, "doc_type": "Sales Order", "tree_type": "Order Type"}
    )
    rows = {r["entity"]: r for r in out["result"]}
    assert rows["Order Types"]["total"] == 421.5
    assert rows["Order Types"]["indent"] == 0
    assert (rows["Sales"]["quarter_2_2026"], rows["Maintenance"]["quarter_1_2026"]) == (
        321.5,
        100.0,
    )
    ctx.conn.execute('update "tabSales Invoice" set project = ? where name = ?', ("P1", "SINV-1"))
    projects = run(ctx, "Sales Analytics", {**base, "tree_type": "Project"})
    assert [r["entity"] for r in projects["result"] if isinstance(r, dict)] == ["P1"]
    with pytest.raises(ValidationError, match="no Project field"):
        run(ctx, "Sales Analytics", {**base, "tree_type": "Project", "doc_type": "Sales Order"})
