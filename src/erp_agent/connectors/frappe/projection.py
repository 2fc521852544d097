"""What a submit or a cancel will do, computed by ERPNext itself, as the user.

A submit: the draft's own "Accounting Ledger" and "Stock Ledger" previews (ERPNext v15+,
``erpnext.controllers.stock_controller.show_accounting_ledger_preview`` and
``show_stock_ledger_preview``, which run the submit's posting and roll it back) and the payment
schedule the draft carries (ERPNext computes it when the draft is saved; the submit keeps it).
A cancel: the ledger entries the document posted, each reversed (a cancel posts their mirror
image), and the submitted documents linked to it that the desk offers to cancel first
(``frappe.desk.form.linked_with.get_submitted_linked_docs``), with Frappe's own refusal.

The previews answer a data table: columns labelled as the General Ledger and Stock Ledger
reports label them, and rows as lists in the preview's field order (read here by that order).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from erp_agent.connectors.base import Projection, Record
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient
from erp_agent.errors import ErpRefusal

ACCOUNTING = "erpnext.controllers.stock_controller.show_accounting_ledger_preview"
STOCK = "erpnext.controllers.stock_controller.show_stock_ledger_preview"
LINKED = "frappe.desk.form.linked_with.get_submitted_linked_docs"
# The preview's field order (ERPNext's get_accounting_ledger_preview / get_stock_ledger_preview).
GL_FIELDS = ("posting_date", "account", "debit", "credit", "against", "party_type", "party",
             "cost_center", "against_voucher_type", "against_voucher")  # fmt: skip
SL_FIELDS = ("item", "uom", "in_qty", "out_qty", "balance_qty", "warehouse", "incoming_rate",
             "valuation_rate", "balance_value", "value_change")  # fmt: skip
_NUMBERS = frozenset({"debit", "credit", "in_qty", "out_qty", "balance_qty", "incoming_rate",
                      "valuation_rate", "balance_value", "value_change"})  # fmt: skip
_CURRENCY = re.compile(r"\(([A-Z]{3})\)")
# A refusal that says the preview itself is out of reach (not permitted, not offered), rather
# than what the submit would meet: no projection is shown then, never a guessed one.
_UNREACHABLE = frozenset({401, 403, 404})
_MISSING = "Failed to get method"  # Frappe's words for a method this version does not have


def _value(field: str, raw: Any) -> Any:
    if raw in ("", None):
        return 0.0 if field in _NUMBERS else None
    if field in _NUMBERS:
        try:
            return float(raw)
        except (TypeError, ValueError):
            return raw
    return raw


def _rows(data: Any, fields: Sequence[str]) -> list[Record]:
    return [
        {f: _value(f, v) for f, v in zip(fields, row, strict=False)}
        for row in (data or [])
        if isinstance(row, list)
    ]


def _currency(columns: Any) -> str | None:
    for column in columns or []:
        found = _CURRENCY.search(str(column.get("name") if isinstance(column, Mapping) else ""))
        if found:
            return found[1]
    return None


async def project(
    client: FrappeClient, cred: Credential, doctype: str, name: str, action: str
) -> Projection | None:
    doc = await client.get_doc(cred, doctype, name)
    modified = str(doc.get("modified")) if doc.get("modified") else None
    projection = Projection(action, modified)
    try:
        if action == "submit":
            await _submit(client, cred, doctype, name, doc, projection)
        elif action == "cancel":
            await _cancel(client, cred, doctype, name, projection)
        else:
            return None
    except ErpRefusal as exc:
        if exc.refusal.status in _UNREACHABLE or _MISSING in exc.refusal.message:
            return None  # not permitted, or an ERP without the previews (before v15)
        # The ERP would not compute it: what it said instead is what the user needs to know.
        projection.refusal = exc.refusal.message
    return projection


async def _submit(
    client: FrappeClient,
    cred: Credential,
    doctype: str,
    name: str,
    doc: Mapping[str, Any],
    projection: Projection,
) -> None:
    company = doc.get("company")
    accounting = await client.method(
        cred, ACCOUNTING, company=company, doctype=doctype, docname=name
    ) or {}  # fmt: skip
    stock = await client.method(cred, STOCK, company=company, doctype=doctype, docname=name) or {}
    projection.source = "the ERP's Accounting Ledger and Stock Ledger previews of the draft"
    projection.currency = _currency(accounting.get("gl_columns"))
    projection.ledger = _rows(accounting.get("gl_data"), GL_FIELDS)
    projection.stock = _rows(stock.get("sl_data"), SL_FIELDS)
    projection.payment_schedule = [
        {
            "due_date": row.get("due_date"),
            "portion": row.get("invoice_portion"),
            "amount": row.get("payment_amount"),
        }
        for row in doc.get("payment_schedule") or []
        if isinstance(row, Mapping)
    ]


async def _cancel(
    client: FrappeClient, cred: Credential, doctype: str, name: str, projection: Projection
) -> None:
    voucher = [["voucher_type", "=", doctype], ["voucher_no", "=", name], ["is_cancelled", "=", 0]]
    projection.source = (
        "the ledger entries the ERP posted for it, reversed as a cancel reverses them, and the "
        "submitted documents linked to it"
    )
    try:
        posted = await client.get_list(
            cred, "GL Entry", filters=voucher, page_length=0, order_by="creation asc",
            fields=["posting_date", "account", "debit", "credit", "against", "party_type",
                    "party", "cost_center", "against_voucher_type", "against_voucher",
                    "account_currency"],
        )  # fmt: skip
    except ErpRefusal as exc:
        if exc.refusal.status not in _UNREACHABLE:
            raise
        posted = []
        projection.notes.append(f"The ledger entries are not shown: {exc.refusal.message}")
    projection.currency = next((str(r["account_currency"]) for r in posted
                                if r.get("account_currency")), None)  # fmt: skip
    # A cancel posts each entry again with debit and credit swapped.
    projection.ledger = [
        {**{f: _value(f, r.get(f)) for f in GL_FIELDS},
         "debit": _value("debit", r.get("credit")), "credit": _value("credit", r.get("debit"))}
        for r in posted
    ]  # fmt: skip
    try:
        moved = await client.get_list(
            cred, "Stock Ledger Entry", filters=voucher, page_length=0, order_by="creation asc",
            fields=["item_code", "warehouse", "actual_qty", "valuation_rate",
                    "stock_value_difference"],
        )  # fmt: skip
    except ErpRefusal as exc:
        if exc.refusal.status not in _UNREACHABLE:
            raise
        moved = []
    for row in moved:
        qty = -float(row.get("actual_qty") or 0)
        projection.stock.append({
            "item": row.get("item_code"), "warehouse": row.get("warehouse"),
            "in_qty": qty if qty > 0 else 0.0, "out_qty": -qty if qty < 0 else 0.0,
            "valuation_rate": _value("valuation_rate", row.get("valuation_rate")),
            "value_change": -float(row.get("stock_value_difference") or 0),
        })  # fmt: skip
    linked = await client.method(cred, LINKED, doctype=doctype, name=name) or {}
    docs = linked.get("docs") if isinstance(linked, Mapping) else None
    projection.blocked_by = [
        {"doctype": d.get("doctype"), "id": d.get("name")}
        for d in docs or []
        if isinstance(d, Mapping) and d.get("name")
    ]
    if projection.blocked_by:
        first = projection.blocked_by[0]
        # Frappe's words when a cancel meets a submitted document that links to it.
        projection.refusal = (
            f"Cannot delete or cancel because {doctype} {name} is linked with "
            f"{first['doctype']} {first['id']}"
        )
