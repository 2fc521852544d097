"""What selling and buying share, written once: orders, and stock documents that move goods.

Sales Order / Purchase Order and Delivery Note / Purchase Receipt are mirror images; each side
names its party, its fields and its direction in class attributes.
"""

from __future__ import annotations

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc
from demo_erp.controllers.common import (
    flt,
    get_company,
    prepare_transaction,
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


class Order(Controller):
    party = ""  # "Customer" or "Supplier"
    row_date = ""  # the row field defaulted from the order's field of the same name
    progress = ""  # per_delivered or per_received
    submitted_status = ""

    def validate(self, ctx: Ctx, doc: Doc) -> None:
        prepare_transaction(ctx, doc, self.party)
        for row in doc.get("items") or []:
            row["warehouse"] = row.get("warehouse") or doc.get("set_warehouse")
            row[self.row_date] = row.get(self.row_date) or doc.get(self.row_date)
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        doc[self.progress] = 0.0
        doc["per_billed"] = 0.0
        doc["status"] = self.submitted_status

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        doc["status"] = "Cancelled"


class GoodsMovement(Controller):
    party = ""
    direction = 0  # +1 goods come in (receipt), -1 goods go out (delivery)
    counter_account = ""  # the company field of the account the stock value posts against

    def validate(self, ctx: Ctx, doc: Doc) -> None:
        validate_accounting_period(ctx, doc)
        default_posting_time(doc)
        validate_warehouses(doc.get("items") or [], doc.get("set_warehouse"))
        prepare_transaction(ctx, doc, self.party)
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def move(self, row: Doc) -> Move:
        qty = self.direction * flt(row.get("qty"), 6)
        if self.direction > 0:  # goods in carry their purchase rate; goods out leave at valuation
            return Move(row["item_code"], row["warehouse"], qty, flt(row.get("rate")))
        return Move(row["item_code"], row["warehouse"], qty)

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        company = get_company(ctx, doc.get("company"))
        entries = make_sl_entries(ctx, doc, [self.move(r) for r in doc.get("items") or []])
        make_gl_entries(
            ctx, doc, stock_gl_rows(ctx, entries, company, company.get(self.counter_account))
        )
        update_order_progress(ctx, doc)
        doc["per_billed"] = 0.0
        doc["status"] = "Return" if doc.get("is_return") else "To Bill"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_sl_entries(ctx, doc)
        cancel_gl_entries(ctx, doc)
        update_order_progress(ctx, doc, cancelling=True)
        doc["status"] = "Cancelled"
