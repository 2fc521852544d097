"""Selling: Quotation, Sales Order and Delivery Note."""

from __future__ import annotations

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers._orders import GoodsMovement, Order
from demo_erp.controllers.common import (
    prepare_transaction,
    set_status,
)


@register("Quotation")
class Quotation(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        is_customer = (doc.get("quotation_to") or "Customer") == "Customer"
        prepare_transaction(ctx, doc, "Customer" if is_customer else None, "party_name")
        set_status(doc, "Open")

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        set_status(doc, "Open")

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        set_status(doc, "Open")


@register("Sales Order")
class SalesOrder(Order):
    party, row_date = "Customer", "delivery_date"
    progress, submitted_status = "per_delivered", "To Deliver and Bill"


@register("Delivery Note")
class DeliveryNote(GoodsMovement):
    party, direction, counter_account = "Customer", -1, "default_expense_account"
