"""Buying: Material Request, Purchase Order and Purchase Receipt."""

from __future__ import annotations

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers.common import (
    fetch_item_names,
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
class PurchaseOrder(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        prepare_transaction(ctx, doc, "Supplier")
        for row in doc.get("items") or []:
            row["warehouse"] = row.get("warehouse") or doc.get("set_warehouse")
            row["schedule_date"] = row.get("schedule_date") or doc.get("schedule_date")
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        doc["per_received"] = 0.0
        doc["per_billed"] = 0.0
        doc["status"] = "To Receive and Bill"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        doc["status"] = "Cancelled"


@register("Purchase Receipt")
class PurchaseReceipt(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        validate_accounting_period(ctx, doc)
        default_posting_time(doc)
        validate_warehouses(doc.get("items") or [], doc.get("set_warehouse"))
        prepare_transaction(ctx, doc, "Supplier")
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        company = get_company(ctx, doc.get("company"))
        moves = [
            Move(r["item_code"], r["warehouse"], flt(r.get("qty"), 6), flt(r.get("rate")))
            for r in doc.get("items") or []
        ]
        entries = make_sl_entries(ctx, doc, moves)
        make_gl_entries(
            ctx,
            doc,
            stock_gl_rows(ctx, entries, company, company.get("stock_received_but_not_billed")),
        )
        update_order_progress(ctx, doc)
        doc["per_billed"] = 0.0
        doc["status"] = "Return" if doc.get("is_return") else "To Bill"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_sl_entries(ctx, doc)
        cancel_gl_entries(ctx, doc)
        update_order_progress(ctx, doc, cancelling=True)
        doc["status"] = "Cancelled"
