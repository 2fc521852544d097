"""What a submit or a cancel will do, as ERPNext's desk shows it before you act.

``erpnext.controllers.stock_controller.show_accounting_ledger_preview`` and
``show_stock_ledger_preview`` (company, doctype, docname): the GL and stock ledger entries the
draft's submit would post. As in ERPNext, the submit's own posting runs and is rolled back
(here inside a savepoint): the entries are computed by the same code that will write them, and
nothing is written. The reply is ERPNext's: a data table's columns (``{"name", "editable",
"width"}``) and rows as lists, in the preview's field order, empty values as "".

``frappe.desk.form.linked_with.get_submitted_linked_docs`` (doctype, name): the submitted
documents linked to this one, and to those in turn, that the desk offers to cancel first
(``{"docs": [{"doctype", "name", "docstatus"}], "count"}``); ERPNext exempts payments.

Unlike ERPNext, the document must be readable by the user (ERPNext's previews check nothing).
"""

from __future__ import annotations

from typing import Any

from demo_erp import documents, records
from demo_erp.api.methods import Args, _required, whitelist
from demo_erp.context import Ctx
from demo_erp.controllers.common import get_company, get_item

# (fieldname, label) in the order ERPNext's preview reads them and the report lists them.
_GL = (
    ("posting_date", "Posting Date"),
    ("account", "Account"),
    ("debit", "Debit ({})"),
    ("credit", "Credit ({})"),
    ("against", "Against Account"),
    ("party_type", "Party Type"),
    ("party", "Party"),
    ("cost_center", "Cost Center"),
    ("against_voucher_type", "Against Voucher Type"),
    ("against_voucher", "Against Voucher"),
)
_SL = (
    ("item_code", "Item"),
    ("stock_uom", "Stock UOM"),
    ("in_qty", "In Qty"),
    ("out_qty", "Out Qty"),
    ("qty_after_transaction", "Balance Qty"),
    ("warehouse", "Warehouse"),
    ("incoming_rate", "Incoming Rate"),
    ("in_out_rate", "Valuation Rate"),
    ("stock_value", "Balance Value"),
    ("stock_value_difference", "Value Change"),
)
# Documents whose submit moves stock (ERPNext: update_stock, or these doctypes).
_STOCK_DOCTYPES = ("Purchase Receipt", "Delivery Note", "Stock Entry")
# ERPNext's auto_cancel_exempted_doctypes hook: never offered for cancelling with the rest.
_EXEMPT = frozenset({"Payment Entry"})


def _columns(spec: tuple[tuple[str, str], ...], currency: str) -> list[dict[str, Any]]:
    return [{"name": label.format(currency), "editable": False, "width": 110} for _, label in spec]


def _table(rows: list[dict[str, Any]], spec: tuple[tuple[str, str], ...]) -> list[list[Any]]:
    return [[row.get(field) or "" for field, _ in spec] for row in rows]


def _posted(ctx: Ctx, doctype: str, docname: str, table: str) -> list[dict[str, Any]]:
    """The rows of ``table`` the draft's submit posts, computed by the submit and rolled back."""
    documents.get(ctx, doctype, docname)  # the user may read it (refused in the ERP's words)
    meta = records.require_meta(doctype)
    doc = records.load(ctx, doctype, docname)
    said = len(ctx.messages)
    ctx.conn.execute("savepoint ledger_preview")
    try:
        if int(doc.get("docstatus") or 0) == 0:
            documents.post_submit(ctx, meta, doc)
        rows = ctx.conn.execute(
            f'select * from "{table}" where voucher_type = ? and voucher_no = ? '
            "and is_cancelled = 0 order by rowid",
            (doctype, docname),
        ).fetchall()
        return [dict(r) for r in rows]
    finally:
        ctx.conn.execute("rollback to ledger_preview")
        ctx.conn.execute("release ledger_preview")
        del ctx.messages[said:]  # what the rolled-back submit said is not the preview's


def _currency(ctx: Ctx, company: Any) -> str:
    return str(get_company(ctx, str(company)).get("default_currency") or "") if company else ""


@whitelist("erpnext.controllers.stock_controller.show_accounting_ledger_preview")
def show_accounting_ledger_preview(ctx: Ctx, args: Args) -> dict[str, Any]:
    company = _required(args, "company")
    doctype, docname = str(_required(args, "doctype")), str(_required(args, "docname"))
    rows = _posted(ctx, doctype, docname, "tabGL Entry")
    return {"gl_columns": _columns(_GL, _currency(ctx, company)), "gl_data": _table(rows, _GL)}


@whitelist("erpnext.controllers.stock_controller.show_stock_ledger_preview")
def show_stock_ledger_preview(ctx: Ctx, args: Args) -> dict[str, Any]:
    company = _required(args, "company")
    doctype, docname = str(_required(args, "doctype")), str(_required(args, "docname"))
    doc = documents.get(ctx, doctype, docname)
    if not (doc.get("update_stock") or doctype in _STOCK_DOCTYPES):
        return {"sl_columns": [], "sl_data": []}
    rows = _posted(ctx, doctype, docname, "tabStock Ledger Entry")
    for row in rows:
        qty = float(row.get("actual_qty") or 0)
        row["in_qty"], row["out_qty"] = (qty, 0) if qty > 0 else (0, abs(qty))
        row["in_out_rate"] = row.get("valuation_rate")
        row["stock_uom"] = (get_item(ctx, row.get("item_code")) or {}).get("stock_uom")
    return {"sl_columns": _columns(_SL, _currency(ctx, company)), "sl_data": _table(rows, _SL)}


@whitelist("frappe.desk.form.linked_with.get_submitted_linked_docs")
def get_submitted_linked_docs(ctx: Ctx, args: Args) -> dict[str, Any]:
    doctype, name = str(_required(args, "doctype")), str(_required(args, "name"))
    documents.get(ctx, doctype, name)
    seen: list[tuple[str, str]] = []
    todo = [(doctype, name)]
    while todo:  # breadth first: the documents linked directly come first
        current = todo.pop(0)
        for linked in documents.submitted_links(ctx, *current):
            if linked[0] in _EXEMPT or linked in seen or linked == (doctype, name):
                continue
            seen.append(linked)
            todo.append(linked)
    docs = [{"doctype": dt, "name": n, "docstatus": 1} for dt, n in seen]
    return {"docs": docs, "count": len(docs)}
