"""Stock ledger, bins, valuation, negative stock, perpetual inventory and order progress."""

from __future__ import annotations

import pytest
from builders import World, acc, assert_balanced, make_world

from demo_erp import documents
from demo_erp.exceptions import NegativeStockError


@pytest.fixture
def world(empty_db) -> World:  # type: ignore[no-untyped-def]
    return make_world(empty_db[1])


def _sle(world: World, voucher_no: str) -> list[dict]:  # type: ignore[type-arg]
    rows = world.ctx.conn.execute(
        'select * from "tabStock Ledger Entry" where voucher_no = ? order by name', (voucher_no,)
    )
    return [dict(r) for r in rows]


def test_receipt_moving_average_and_gl(world: World) -> None:
    first = world.receive_stock(10, 40)
    assert first["status"] == "To Bill"
    assert first["supplier_name"] == "Parts Ltd"
    world.receive_stock(10, 60)
    b = world.bin(world.item, world.store)
    assert b is not None
    assert b["actual_qty"] == 20
    assert b["valuation_rate"] == 50
    assert b["stock_value"] == 1000
    assert b["projected_qty"] == 20
    [sle] = _sle(world, first["name"])
    assert sle["actual_qty"] == 10
    assert sle["qty_after_transaction"] == 10
    assert sle["incoming_rate"] == 40
    assert sle["stock_value_difference"] == 400
    assert sle["company"] == world.company
    assert sle["voucher_type"] == "Purchase Receipt"
    gl = {r["account"]: r for r in world.gl(first["name"])}
    assert gl[acc("Stock In Hand")]["debit"] == 400
    assert gl[acc("Stock Received But Not Billed")]["credit"] == 400
    assert_balanced(world, first["name"])


def test_delivery_note_negative_stock(world: World) -> None:
    world.receive_stock(3, 50)
    with pytest.raises(NegativeStockError) as err:
        world.insert(
            "Delivery Note",
            {
                "customer": world.customer,
                "posting_date": "2026-11-05",
                "items": [
                    {"item_code": world.item, "qty": 5, "rate": 80, "warehouse": world.store}
                ],
            },
            submit=True,
        )
    assert err.value.exc_type == "NegativeStockError"
    assert err.value.title == "Insufficient Stock"
    assert err.value.message == (
        '2.0 units of <a href="/app/item/WIDGET">Item WIDGET: Widget</a> needed in '
        '<a href="/app/warehouse/Stores - DC">Warehouse Stores - DC</a> to complete this '
        "transaction."
    )
    b = world.bin(world.item, world.store)
    assert b is not None
    assert b["actual_qty"] == 3  # nothing moved


def test_delivery_note_cogs_and_cancel(world: World) -> None:
    world.receive_stock(10, 50)
    dn = world.insert(
        "Delivery Note",
        {
            "customer": world.customer,
            "posting_date": "2026-11-05",
            "set_warehouse": world.store,
            "items": [{"item_code": world.item, "qty": 4, "rate": 80}],
        },
        submit=True,
    )
    assert dn["status"] == "To Bill"
    assert dn["items"][0]["warehouse"] == world.store
    assert dn["grand_total"] == 320  # no tax on delivery notes
    [sle] = _sle(world, dn["name"])
    assert (sle["actual_qty"], sle["qty_after_transaction"], sle["stock_value_difference"]) == (
        -4,
        6,
        -200,
    )
    gl = {r["account"]: r for r in world.gl(dn["name"])}
    assert gl[acc("Cost of Goods Sold")]["debit"] == 200
    assert gl[acc("Stock In Hand")]["credit"] == 200
    assert_balanced(world, dn["name"])

    documents.cancel(world.ctx, "Delivery Note", dn["name"])
    b = world.bin(world.item, world.store)
    assert b is not None
    assert (b["actual_qty"], b["stock_value"]) == (10, 500)
    rows = _sle(world, dn["name"])
    assert len(rows) == 2
    assert all(r["is_cancelled"] == 1 for r in rows)
    assert rows[1]["actual_qty"] == 4
    assert_balanced(world, dn["name"])


def test_allow_negative_stock_item(world: World) -> None:
    documents.save(
        world.ctx, "Item", world.item, {"allow_negative_stock": 1}, ignore_permissions=True
    )
    world.insert(
        "Stock Entry",
        {
            "stock_entry_type": "Material Issue",
            "posting_date": "2026-11-05",
            "from_warehouse": world.store,
            "items": [{"item_code": world.item, "qty": 2}],
        },
        submit=True,
    )
    b = world.bin(world.item, world.store)
    assert b is not None
    assert b["actual_qty"] == -2


def test_stock_entry_purposes(world: World) -> None:
    receipt = world.insert(
        "Stock Entry",
        {
            "stock_entry_type": "Material Receipt",
            "posting_date": "2026-11-03",
            "to_warehouse": world.store,
            "items": [{"item_code": world.item, "qty": 10, "basic_rate": 30}],
        },
        submit=True,
    )
    assert receipt["purpose"] == "Material Receipt"
    assert receipt["total_amount"] == 300
    assert receipt["items"][0]["t_warehouse"] == world.store
    gl = {r["account"]: r for r in world.gl(receipt["name"])}
    assert gl[acc("Stock In Hand")]["debit"] == 300
    assert gl[acc("Stock Adjustment")]["credit"] == 300

    transfer = world.insert(
        "Stock Entry",
        {
            "stock_entry_type": "Material Transfer",
            "posting_date": "2026-11-04",
            "from_warehouse": world.store,
            "to_warehouse": world.shop,
            "items": [{"item_code": world.item, "qty": 4}],
        },
        submit=True,
    )
    assert [r["actual_qty"] for r in _sle(world, transfer["name"])] == [-4, 4]
    shop = world.bin(world.item, world.shop)
    assert shop is not None
    assert (shop["actual_qty"], shop["valuation_rate"], shop["stock_value"]) == (4, 30, 120)
    assert world.gl(transfer["name"]) == []  # both warehouses share the stock account

    issue = world.insert(
        "Stock Entry",
        {
            "stock_entry_type": "Material Issue",
            "posting_date": "2026-11-05",
            "items": [{"item_code": world.item, "qty": 1, "s_warehouse": world.shop}],
        },
        submit=True,
    )
    gl = {r["account"]: r for r in world.gl(issue["name"])}
    assert gl[acc("Stock Adjustment")]["debit"] == 30
    assert gl[acc("Stock In Hand")]["credit"] == 30


def test_order_progress_and_statuses(world: World) -> None:
    world.receive_stock(10, 50)
    so = world.insert(
        "Sales Order",
        {
            "customer": world.customer,
            "transaction_date": "2026-11-01",
            "delivery_date": "2026-11-20",
            "items": [{"item_code": world.item, "qty": 4, "rate": 100}],
        },
        submit=True,
    )
    assert so["status"] == "To Deliver and Bill"
    assert so["grand_total"] == 440
    dn = world.insert(
        "Delivery Note",
        {
            "customer": world.customer,
            "posting_date": "2026-11-05",
            "items": [
                {
                    "item_code": world.item,
                    "qty": 4,
                    "rate": 100,
                    "warehouse": world.store,
                    "against_sales_order": so["name"],
                }
            ],
        },
        submit=True,
    )
    so = world.load("Sales Order", so["name"])
    assert so["per_delivered"] == 100
    assert so["items"][0]["delivered_qty"] == 4
    assert so["status"] == "To Bill"
    inv = world.sales_invoice(
        items=[
            {
                "item_code": world.item,
                "qty": 4,
                "rate": 100,
                "sales_order": so["name"],
                "delivery_note": dn["name"],
            }
        ]
    )
    so = world.load("Sales Order", so["name"])
    assert so["per_billed"] == 100
    assert so["status"] == "Completed"
    billed_dn = world.load("Delivery Note", dn["name"])
    assert (billed_dn["per_billed"], billed_dn["status"]) == (100, "Completed")
    documents.cancel(world.ctx, "Sales Invoice", inv["name"])
    billed_dn = world.load("Delivery Note", dn["name"])
    assert (billed_dn["per_billed"], billed_dn["status"]) == (0, "To Bill")
    assert world.load("Sales Order", so["name"])["status"] == "To Bill"
    documents.cancel(world.ctx, "Delivery Note", dn["name"])
    so = world.load("Sales Order", so["name"])
    assert so["per_delivered"] == 0
    assert so["status"] == "To Deliver and Bill"


def test_simple_statuses(world: World) -> None:
    qtn = world.insert(
        "Quotation",
        {
            "party_name": world.customer,
            "transaction_date": "2026-11-01",
            "items": [{"item_code": world.service, "qty": 1, "rate": 10}],
        },
        submit=True,
    )
    assert qtn["status"] == "Open"
    assert qtn["customer_name"] == "Acme Corp"
    assert qtn["total_taxes_and_charges"] == 1
    mr = world.insert(
        "Material Request",
        {"transaction_date": "2026-11-01", "items": [{"item_code": world.item, "qty": 2}]},
        submit=True,
    )
    assert mr["status"] == "Pending"
    assert mr["items"][0]["item_name"] == "Widget"
    po = world.insert(
        "Purchase Order",
        {
            "supplier": world.supplier,
            "transaction_date": "2026-11-01",
            "items": [{"item_code": world.item, "qty": 2, "rate": 10}],
        },
        submit=True,
    )
    assert po["status"] == "To Receive and Bill"
    assert documents.cancel(world.ctx, "Purchase Order", po["name"])["status"] == "Cancelled"
    assert documents.cancel(world.ctx, "Quotation", qtn["name"])["status"] == "Cancelled"
    assert documents.cancel(world.ctx, "Material Request", mr["name"])["status"] == "Cancelled"


def test_purchase_order_progress(world: World) -> None:
    po = world.insert(
        "Purchase Order",
        {
            "supplier": world.supplier,
            "transaction_date": "2026-11-01",
            "set_warehouse": world.store,
            "items": [{"item_code": world.item, "qty": 10, "rate": 20}],
        },
        submit=True,
    )
    assert po["items"][0]["warehouse"] == world.store
    pr = world.insert(
        "Purchase Receipt",
        {
            "supplier": world.supplier,
            "posting_date": "2026-11-03",
            "set_warehouse": world.store,
            "items": [
                {"item_code": world.item, "qty": 4, "rate": 20, "purchase_order": po["name"]}
            ],
        },
        submit=True,
    )
    po = world.load("Purchase Order", po["name"])
    assert (po["per_received"], po["status"]) == (40, "To Receive and Bill")
    assert po["items"][0]["received_qty"] == 4
    world.insert(
        "Purchase Invoice",
        {
            "supplier": world.supplier,
            "posting_date": "2026-11-04",
            "items": [
                {"item_code": world.item, "qty": 10, "rate": 20, "purchase_order": po["name"]}
            ],
        },
        submit=True,
    )
    po = world.load("Purchase Order", po["name"])
    assert (po["per_billed"], po["status"]) == (100, "To Receive")
    documents.cancel(world.ctx, "Purchase Receipt", pr["name"])
    b = world.bin(world.item, world.store)
    assert b is not None
    assert (b["actual_qty"], b["stock_value"]) == (0, 0)
    assert world.load("Purchase Order", po["name"])["per_received"] == 0


def test_cancel_receipt_refused_when_stock_consumed(world: World) -> None:
    pr = world.receive_stock(5, 10)
    world.insert(
        "Stock Entry",
        {
            "stock_entry_type": "Material Issue",
            "posting_date": "2026-11-05",
            "from_warehouse": world.store,
            "items": [{"item_code": world.item, "qty": 3}],
        },
        submit=True,
    )
    with pytest.raises(NegativeStockError, match=r"3\.0 units of"):
        documents.cancel(world.ctx, "Purchase Receipt", pr["name"])
