"""Buying: Material Request, Purchase Order and Purchase Receipt.

Submitting or cancelling a Purchase Order or Purchase Receipt keeps each item's
``last_purchase_rate`` as ERPNext's ``update_last_purchase_rate`` does: the rate of the latest
submitted Purchase Order (by transaction date) or Purchase Receipt (by posting date), the order
winning a tie. (ERPNext takes ``base_net_rate / conversion_factor``; the demo's buying documents
are in the company currency, in the stock unit and without discounts, so that is the rate.)
"""

from __future__ import annotations

from typing import Any

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers._orders import GoodsMovement, Order
from demo_erp.controllers.common import (
    fetch_item_names,
    flt,
    getdate,
    set_status,
)

_LATEST_ORDER = """
    select po.transaction_date as day, r.rate from "tabPurchase Order" po
    join "tabPurchase Order Item" r on r.parent = po.name and r.parenttype = 'Purchase Order'
    where po.docstatus = 1 and r.item_code = ? and po.name != ?
    order by po.transaction_date desc, po.name desc limit 1"""
_LATEST_RECEIPT = """
    select pr.posting_date as day, r.rate from "tabPurchase Receipt" pr
    join "tabPurchase Receipt Item" r on r.parent = pr.name and r.parenttype = 'Purchase Receipt'
    where pr.docstatus = 1 and r.item_code = ? and pr.name != ?
    order by pr.posting_date desc, pr.posting_time desc, pr.name desc limit 1"""


def _last_purchase(ctx: Ctx, item: str, exclude: str) -> tuple[Any, float] | None:
    """(date, rate) of the item's latest purchase other than ``exclude`` (ERPNext's
    ``get_last_purchase_details``): the later of the last order and the last receipt."""
    order = ctx.conn.execute(_LATEST_ORDER, (item, exclude)).fetchone()
    receipt = ctx.conn.execute(_LATEST_RECEIPT, (item, exclude)).fetchone()
    found = [
        (getdate(r["day"]), -rank, flt(r["rate"], 9))
        for rank, r in enumerate((order, receipt))
        if r is not None
    ]
    if not found:
        return None
    day, _, rate = max(found)  # the later date; on the same date the order
    return day, rate


def update_last_purchase_rate(ctx: Ctx, doc: Doc, is_submit: bool) -> None:
    this_date = getdate(doc.get("posting_date") or doc.get("transaction_date"))
    for row in doc.get("items") or []:
        item = row.get("item_code")
        if not item:
            continue
        last = _last_purchase(ctx, item, doc["name"])
        rate: float | None = None
        if last and (not is_submit or last[0] > this_date):
            rate = last[1]
        elif is_submit:
            rate = flt(row.get("rate"), 9)
        ctx.conn.execute(
            'update "tabItem" set last_purchase_rate = ? where name = ?', (flt(rate, 9), item)
        )


@register("Material Request")
class MaterialRequest(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        fetch_item_names(ctx, doc.get("items") or [])
        for row in doc.get("items") or []:
            row["schedule_date"] = row.get("schedule_date") or doc.get("schedule_date")
        set_status(doc, "Pending")

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        doc["per_ordered"] = 0.0
        set_status(doc, "Pending")

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        set_status(doc, "Pending")


@register("Purchase Order")
class PurchaseOrder(Order):
    party, row_date = "Supplier", "schedule_date"
    progress, submitted_status = "per_received", "To Receive and Bill"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        super().on_submit(ctx, doc)
        update_last_purchase_rate(ctx, doc, is_submit=True)

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        super().on_cancel(ctx, doc)
        update_last_purchase_rate(ctx, doc, is_submit=False)


@register("Purchase Receipt")
class PurchaseReceipt(GoodsMovement):
    party, direction, counter_account = "Supplier", 1, "stock_received_but_not_billed"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        super().on_submit(ctx, doc)
        if not doc.get("is_return"):
            update_last_purchase_rate(ctx, doc, is_submit=True)

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        super().on_cancel(ctx, doc)
        if not doc.get("is_return"):
            update_last_purchase_rate(ctx, doc, is_submit=False)
