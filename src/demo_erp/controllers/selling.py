"""Selling: Quotation, Sales Order and Delivery Note."""

from __future__ import annotations

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers.common import (
    flt,
    get_company,
    prepare_transaction,
    set_status,
    update_order_progress,
    validate_accounting_period,
)
from demo_erp.controllers.gl import cancel_gl_entries, make_gl_entries
from demo_erp.controllers.stock import (
    Move,
    cancel_sl_entries,
    default_posting_time,
    make_sl_entries,
    stock_gl_rows,
    validate_warehouses,
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
class SalesOrder(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        prepare_transaction(ctx, doc, "Customer")
        for row in doc.get("items") or []:
            row["warehouse"] = row.get("warehouse") or doc.get("set_warehouse")
            row["delivery_date"] = row.get("delivery_date") or doc.get("delivery_date")
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        doc["per_delivered"] = 0.0
        doc["per_billed"] = 0.0
        doc["status"] = "To Deliver and Bill"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        doc["status"] = "Cancelled"


@register("Delivery Note")
class DeliveryNote(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        validate_accounting_period(ctx, doc)
        default_posting_time(doc)
        validate_warehouses(doc.get("items") or [], doc.get("set_warehouse"))
        prepare_transaction(ctx, doc, "Customer")
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        company = get_company(ctx, doc.get("company"))
        moves = [
            Move(r["item_code"], r["warehouse"], -flt(r.get("qty"), 6))
            for r in doc.get("items") or []
        ]
        entries = make_sl_entries(ctx, doc, moves)
        make_gl_entries(
            ctx, doc, stock_gl_rows(ctx, entries, company, company.get("default_expense_account"))
        )
        update_order_progress(ctx, doc)
        doc["per_billed"] = 0.0
        doc["status"] = "Return" if doc.get("is_return") else "To Bill"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_sl_entries(ctx, doc)
        cancel_gl_entries(ctx, doc)
        update_order_progress(ctx, doc, cancelling=True)
        doc["status"] = "Cancelled"
