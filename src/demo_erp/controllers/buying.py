"""Buying: Material Request, Purchase Order and Purchase Receipt."""

from __future__ import annotations

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers._orders import GoodsMovement, Order
from demo_erp.controllers.common import (
    fetch_item_names,
    set_status,
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


@register("Purchase Receipt")
class PurchaseReceipt(GoodsMovement):
    party, direction, counter_account = "Supplier", 1, "stock_received_but_not_billed"
