"""Accounts: Sales/Purchase Invoice, Payment Entry, Journal Entry, and the daily status job."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers.common import (
    flt,
    get_company,
    get_item,
    getdate,
    party_name,
    prepare_transaction,
    set_due_date,
    update_billed_vouchers,
    update_order_progress,
    validate_accounting_period,
)
from demo_erp.controllers.gl import GLRow, cancel_gl_entries, gl_row, make_gl_entries
from demo_erp.exceptions import ValidationError
from demo_erp.records import db_set

INVOICE_PARTY = {"Sales Invoice": "Customer", "Purchase Invoice": "Supplier"}
_RETURN_ISSUED = {"Sales Invoice": "Credit Note Issued", "Purchase Invoice": "Debit Note Issued"}


def invoice_status(
    ctx: Ctx, doctype: str, doc: dict[str, Any], ignore_return: str | None = None
) -> str:
    """ERPNext's ``set_status`` for Sales and Purchase Invoices.

    ``ignore_return`` names a return being cancelled, which no longer counts as issued.
    """
    docstatus = int(doc.get("docstatus") or 0)
    if docstatus == 2:
        return "Cancelled"
    if docstatus == 0:
        return "Draft"
    outstanding = flt(doc.get("outstanding_amount"))
    total = flt(doc.get("grand_total"))
    due_date = getdate(doc["due_date"]) if doc.get("due_date") else None
    if outstanding > 0 and due_date is not None and due_date < ctx.today:
        return "Overdue"
    if 0 < outstanding < total:
        return "Partly Paid"
    if outstanding > 0:
        return "Unpaid"
    if not doc.get("is_return") and _has_return(ctx, doctype, doc["name"], ignore_return):
        return _RETURN_ISSUED[doctype]
    if doc.get("is_return"):
        return "Return"
    if outstanding <= 0:
        return "Paid"
    return "Submitted"


def _has_return(ctx: Ctx, doctype: str, name: str, ignore: str | None) -> bool:
    row = ctx.conn.execute(
        f'select 1 from "tab{doctype}" where is_return = 1 and return_against = ? '
        "and docstatus = 1 and name != ? limit 1",
        (name, ignore or ""),
    ).fetchone()
    return row is not None


def adjust_outstanding(
    ctx: Ctx, doctype: str, name: str, delta: float, ignore_return: str | None = None
) -> None:
    """Move an invoice's outstanding amount by ``delta`` and refresh its status (db_set)."""
    row = ctx.conn.execute(
        f"select name, docstatus, outstanding_amount, grand_total, due_date, is_return "
        f'from "tab{doctype}" where name = ?',
        (name,),
    ).fetchone()
    if row is None:
        return
    invoice = dict(row)
    invoice["outstanding_amount"] = flt(flt(row["outstanding_amount"]) + delta)
    db_set(
        ctx,
        doctype,
        name,
        {
            "outstanding_amount": invoice["outstanding_amount"],
            "status": invoice_status(ctx, doctype, invoice, ignore_return),
        },
    )


def refresh_statuses(ctx: Ctx, touch_modified: bool = False) -> int:
    """ERPNext's daily ``update_invoice_status``: Unpaid/Partly Paid → Overdue once past due.

    Like ERPNext's query update this leaves ``modified`` alone unless ``touch_modified``.
    Returns the number of invoices changed.
    """
    today = ctx.today.isoformat()
    changed = 0
    for doctype in INVOICE_PARTY:
        extra = ", modified = ?, modified_by = ?" if touch_modified else ""
        params: list[Any] = [ctx.now(), ctx.user] if touch_modified else []
        cursor = ctx.conn.execute(
            f"update \"tab{doctype}\" set status = 'Overdue'{extra} where docstatus = 1 "
            "and status in ('Unpaid', 'Partly Paid') and outstanding_amount > 0 "
            "and due_date < ?",
            [*params, today],
        )
        changed += cursor.rowcount
    return changed


class _Invoice(Controller, ABC):
    doctype = ""
    party_field = ""

    def validate(self, ctx: Ctx, doc: Doc) -> None:
        validate_accounting_period(ctx, doc)
        company = prepare_transaction(ctx, doc, INVOICE_PARTY[self.doctype])
        account_field = "debit_to" if self.doctype == "Sales Invoice" else "credit_to"
        if not doc.get(account_field):
            doc[account_field] = company.get(
                "default_receivable_account"
                if self.doctype == "Sales Invoice"
                else "default_payable_account"
            )
        if not doc.get("cost_center"):
            doc["cost_center"] = company.get("cost_center")
        set_due_date(ctx, doc, INVOICE_PARTY[self.doctype], self.party_field)
        if doc.get("return_against") and not doc.get("is_return"):
            raise ValidationError("Return Against is only allowed on a return (Is Return)")
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"
            doc["outstanding_amount"] = flt(doc.get("grand_total"))

    @abstractmethod
    def gl_rows(self, ctx: Ctx, doc: Doc, company: dict[str, Any]) -> list[GLRow]:
        """The GL rows this invoice posts (sales and purchase invoices differ)."""

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        company = get_company(ctx, doc.get("company"))
        make_gl_entries(ctx, doc, self.gl_rows(ctx, doc, company))
        # A return against an invoice settles that invoice, not itself.
        settles = doc.get("is_return") and doc.get("return_against")
        doc["outstanding_amount"] = 0.0 if settles else flt(doc.get("grand_total"))
        doc["status"] = invoice_status(ctx, self.doctype, doc)
        update_order_progress(ctx, doc)
        update_billed_vouchers(ctx, doc)

    def after_submit(self, ctx: Ctx, doc: Doc) -> None:
        # After the return is stored as submitted, so the original sees it as issued.
        if doc.get("is_return") and doc.get("return_against"):
            adjust_outstanding(
                ctx, self.doctype, doc["return_against"], flt(doc.get("grand_total"))
            )

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_gl_entries(ctx, doc)
        against = doc.get("return_against")
        if doc.get("is_return") and against:
            adjust_outstanding(
                ctx, self.doctype, against, -flt(doc.get("grand_total")), doc["name"]
            )
        update_order_progress(ctx, doc, cancelling=True)
        update_billed_vouchers(ctx, doc, cancelling=True)
        doc["status"] = "Cancelled"

    def party_row(self, doc: Doc, account: str | None, amount: float, debit: bool) -> GLRow:
        against = doc.get("return_against") if doc.get("is_return") else None
        return gl_row(
            account,
            debit=amount if debit else 0.0,
            credit=0.0 if debit else amount,
            party_type=INVOICE_PARTY[self.doctype],
            party=doc.get(self.party_field),
            against_voucher_type=self.doctype,
            against_voucher=against or doc["name"],
            cost_center=None,
        )


@register("Sales Invoice")
class SalesInvoice(_Invoice):
    doctype = "Sales Invoice"
    party_field = "customer"

    def validate(self, ctx: Ctx, doc: Doc) -> None:
        super().validate(ctx, doc)
        company = get_company(ctx, doc.get("company"))
        for row in doc.get("items") or []:
            row["income_account"] = row.get("income_account") or company.get(
                "default_income_account"
            )
            row["cost_center"] = row.get("cost_center") or doc.get("cost_center")

    def gl_rows(self, ctx: Ctx, doc: Doc, company: dict[str, Any]) -> list[GLRow]:
        rate = flt(doc.get("conversion_rate"), 9) or 1.0
        rows = [self.party_row(doc, doc.get("debit_to"), flt(doc["grand_total"] * rate), True)]
        for item in doc.get("items") or []:
            rows.append(
                gl_row(
                    item.get("income_account") or company.get("default_income_account"),
                    credit=flt(flt(item.get("amount")) * rate),
                    cost_center=item.get("cost_center"),
                )
            )
        tax = flt(flt(doc.get("total_taxes_and_charges")) * rate)
        if tax:
            rows.append(gl_row(company.get("default_tax_account"), credit=tax))
        _balance_rounding(rows)
        return rows


@register("Purchase Invoice")
class PurchaseInvoice(_Invoice):
    doctype = "Purchase Invoice"
    party_field = "supplier"

    def validate(self, ctx: Ctx, doc: Doc) -> None:
        super().validate(ctx, doc)
        company = get_company(ctx, doc.get("company"))
        for row in doc.get("items") or []:
            if not row.get("expense_account"):
                item = get_item(ctx, row.get("item_code")) or {}
                # Perpetual inventory: stock items clear Stock Received But Not Billed.
                row["expense_account"] = company.get(
                    "stock_received_but_not_billed"
                    if item.get("is_stock_item")
                    else "default_expense_account"
                )
            row["cost_center"] = row.get("cost_center") or doc.get("cost_center")

    def gl_rows(self, ctx: Ctx, doc: Doc, company: dict[str, Any]) -> list[GLRow]:
        rate = flt(doc.get("conversion_rate"), 9) or 1.0
        rows = [self.party_row(doc, doc.get("credit_to"), flt(doc["grand_total"] * rate), False)]
        for item in doc.get("items") or []:
            rows.append(
                gl_row(
                    item.get("expense_account") or company.get("default_expense_account"),
                    debit=flt(flt(item.get("amount")) * rate),
                    cost_center=item.get("cost_center"),
                )
            )
        tax = flt(flt(doc.get("total_taxes_and_charges")) * rate)
        if tax:
            rows.append(gl_row(company.get("default_tax_account"), debit=tax))
        _balance_rounding(rows)
        return rows


def _balance_rounding(rows: list[GLRow]) -> None:
    """Conversion to company currency can leave a cent; ERPNext books it to round off."""
    diff = flt(sum(r["debit"] - r["credit"] for r in rows))
    if diff and abs(diff) < 1 and len(rows) > 1:
        last = rows[-1]
        if last["credit"]:
            last["credit"] = flt(last["credit"] + diff)
        else:
            last["debit"] = flt(last["debit"] - diff)


# ---------------------------------------------------------------- Payment Entry

_REFERENCE_OUTSTANDING = ("Sales Invoice", "Purchase Invoice")


def _expense_claim_paid(ctx: Ctx, name: str, exclude: str) -> float:
    row = ctx.conn.execute(
        'select coalesce(sum(r.allocated_amount), 0) from "tabPayment Entry Reference" r '
        'join "tabPayment Entry" p on p.name = r.parent where r.reference_doctype = ? '
        "and r.reference_name = ? and p.docstatus = 1 and p.name != ?",
        ("Expense Claim", name, exclude),
    ).fetchone()
    return flt(row[0])


def _reference_outstanding(ctx: Ctx, doc: Doc, ref: Doc) -> dict[str, Any] | None:
    doctype, name = ref.get("reference_doctype"), ref.get("reference_name")
    if doctype in _REFERENCE_OUTSTANDING:
        row = ctx.conn.execute(
            f'select grand_total, outstanding_amount, due_date, docstatus from "tab{doctype}" '
            "where name = ?",
            (name,),
        ).fetchone()
        return None if row is None else dict(row)
    if doctype == "Expense Claim":
        row = ctx.conn.execute(
            'select total_sanctioned_amount, docstatus from "tabExpense Claim" where name = ?',
            (name,),
        ).fetchone()
        if row is None:
            return None
        total = flt(row["total_sanctioned_amount"])
        paid = _expense_claim_paid(ctx, str(name), doc.get("name") or "")
        return {
            "grand_total": total,
            "outstanding_amount": flt(total - paid),
            "due_date": None,
            "docstatus": row["docstatus"],
        }
    if doctype in ("Sales Order", "Purchase Order"):
        row = ctx.conn.execute(
            f'select grand_total, docstatus from "tab{doctype}" where name = ?', (name,)
        ).fetchone()
        if row is None:
            return None
        return {
            "grand_total": row["grand_total"],
            "outstanding_amount": row["grand_total"],
            "due_date": None,
            "docstatus": row["docstatus"],
        }
    return None


def _set_expense_claim_status(ctx: Ctx, name: str, paid: float) -> None:
    row = ctx.conn.execute(
        'select total_sanctioned_amount, approval_status from "tabExpense Claim" where name = ?',
        (name,),
    ).fetchone()
    if row is None:
        return
    total = flt(row["total_sanctioned_amount"])
    status = "Paid" if total > 0 and paid >= total else "Unpaid"
    db_set(ctx, "Expense Claim", name, {"status": status})


@register("Payment Entry")
class PaymentEntry(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        validate_accounting_period(ctx, doc)
        company = get_company(ctx, doc.get("company"))
        payment_type = doc.get("payment_type")
        if payment_type == "Receive":
            doc["party_type"] = doc.get("party_type") or "Customer"
        elif payment_type == "Pay":
            doc["party_type"] = doc.get("party_type") or "Supplier"
        party_type = doc.get("party_type") or ""
        if payment_type in ("Receive", "Pay") and not doc.get("party"):
            raise ValidationError(f"{party_type or 'Party'} is mandatory")
        doc["party_name"] = (
            party_name(ctx, party_type, doc.get("party")) if doc.get("party") else None
        )
        party_account = {
            "Customer": company.get("default_receivable_account"),
            "Supplier": company.get("default_payable_account"),
            "Employee": company.get("default_payroll_payable_account"),
        }.get(party_type)
        bank = company.get("default_bank_account")
        if payment_type == "Receive":
            doc["paid_from"] = doc.get("paid_from") or party_account
            doc["paid_to"] = doc.get("paid_to") or bank
        elif payment_type == "Pay":
            doc["paid_from"] = doc.get("paid_from") or bank
            doc["paid_to"] = doc.get("paid_to") or party_account
        currency = company.get("default_currency")
        doc["paid_from_account_currency"] = doc.get("paid_from_account_currency") or currency
        doc["paid_to_account_currency"] = doc.get("paid_to_account_currency") or currency
        if not doc.get("received_amount"):
            doc["received_amount"] = flt(doc.get("paid_amount"))
        total_allocated = 0.0
        for ref in doc.get("references") or []:
            info = _reference_outstanding(ctx, doc, ref)
            if info is None:
                raise ValidationError(
                    f"Row #{ref.get('idx')}: {ref.get('reference_doctype')} "
                    f"{ref.get('reference_name')} not found"
                )
            ref["total_amount"] = flt(info["grand_total"])
            ref["outstanding_amount"] = flt(info["outstanding_amount"])
            ref["due_date"] = ref.get("due_date") or info["due_date"]
            allocated = flt(ref.get("allocated_amount"))
            if allocated > 0 and allocated - ref["outstanding_amount"] >= 0.005:
                raise ValidationError(
                    f"Row #{ref.get('idx')}: Allocated Amount cannot be greater than "
                    "outstanding amount."
                )
            total_allocated += allocated
        doc["total_allocated_amount"] = flt(total_allocated)
        doc["unallocated_amount"] = (
            flt(flt(doc.get("paid_amount")) - total_allocated) if doc.get("party") else 0.0
        )
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        make_gl_entries(ctx, doc, self._gl_rows(doc))
        self._update_references(ctx, doc, sign=-1)
        doc["status"] = "Submitted"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_gl_entries(ctx, doc)
        self._update_references(ctx, doc, sign=1)
        doc["status"] = "Cancelled"

    def _update_references(self, ctx: Ctx, doc: Doc, sign: int) -> None:
        for ref in doc.get("references") or []:
            doctype, name = ref.get("reference_doctype"), str(ref.get("reference_name"))
            allocated = flt(ref.get("allocated_amount"))
            if doctype in _REFERENCE_OUTSTANDING:
                adjust_outstanding(ctx, str(doctype), name, sign * allocated)
            elif doctype == "Expense Claim":
                paid = _expense_claim_paid(ctx, name, doc["name"])
                _set_expense_claim_status(ctx, name, paid + (allocated if sign < 0 else 0.0))

    def _gl_rows(self, doc: Doc) -> list[GLRow]:
        payment_type = doc.get("payment_type")
        amount = flt(doc.get("paid_amount"))
        party_type, party = doc.get("party_type"), doc.get("party")
        if payment_type == "Internal Transfer" or not party:
            return [
                gl_row(doc.get("paid_to"), debit=flt(doc.get("received_amount")) or amount),
                gl_row(doc.get("paid_from"), credit=amount),
            ]
        receive = payment_type == "Receive"
        party_account = doc.get("paid_from") if receive else doc.get("paid_to")
        rows: list[GLRow] = []
        for ref in doc.get("references") or []:
            allocated = flt(ref.get("allocated_amount"))
            if not allocated:
                continue
            rows.append(
                gl_row(
                    party_account,
                    debit=0.0 if receive else allocated,
                    credit=allocated if receive else 0.0,
                    party_type=party_type,
                    party=party,
                    against_voucher_type=ref.get("reference_doctype"),
                    against_voucher=ref.get("reference_name"),
                )
            )
        unallocated = flt(doc.get("unallocated_amount"))
        if unallocated:
            rows.append(
                gl_row(
                    party_account,
                    debit=0.0 if receive else unallocated,
                    credit=unallocated if receive else 0.0,
                    party_type=party_type,
                    party=party,
                )
            )
        if receive:
            rows.append(gl_row(doc.get("paid_to"), debit=amount))
        else:
            rows.append(gl_row(doc.get("paid_from"), credit=amount))
        return rows


# ---------------------------------------------------------------- Journal Entry


@register("Journal Entry")
class JournalEntry(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        validate_accounting_period(ctx, doc)
        total_debit = total_credit = 0.0
        for row in doc.get("accounts") or []:
            row["debit"] = flt(row.get("debit")) or flt(row.get("debit_in_account_currency"))
            row["credit"] = flt(row.get("credit")) or flt(row.get("credit_in_account_currency"))
            row["debit_in_account_currency"] = (
                flt(row.get("debit_in_account_currency")) or row["debit"]
            )
            row["credit_in_account_currency"] = (
                flt(row.get("credit_in_account_currency")) or row["credit"]
            )
            total_debit += row["debit"]
            total_credit += row["credit"]
        doc["total_debit"] = flt(total_debit)
        doc["total_credit"] = flt(total_credit)
        doc["difference"] = flt(total_debit - total_credit)
        if doc["difference"]:
            raise ValidationError(
                f"Total Debit must be equal to Total Credit. The difference is {doc['difference']}"
            )
        if not doc.get("title"):
            first = (doc.get("accounts") or [{}])[0]
            doc["title"] = first.get("party") or first.get("account")

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        rows = []
        for row in doc.get("accounts") or []:
            reference = row.get("reference_type") if row.get("reference_name") else None
            rows.append(
                gl_row(
                    row.get("account"),
                    debit=flt(row.get("debit")),
                    credit=flt(row.get("credit")),
                    party_type=row.get("party_type"),
                    party=row.get("party"),
                    against_voucher_type=reference,
                    against_voucher=row.get("reference_name") if reference else None,
                    cost_center=row.get("cost_center"),
                )
            )
        make_gl_entries(ctx, doc, rows)
        self._update_invoices(ctx, doc, sign=1)

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_gl_entries(ctx, doc)
        self._update_invoices(ctx, doc, sign=-1)

    def _update_invoices(self, ctx: Ctx, doc: Doc, sign: int) -> None:
        for row in doc.get("accounts") or []:
            doctype = row.get("reference_type")
            if doctype not in _REFERENCE_OUTSTANDING or not row.get("reference_name"):
                continue
            # A credit on the receivable settles a sales invoice; a debit, a purchase invoice.
            paid = flt(row.get("credit")) - flt(row.get("debit"))
            if doctype == "Purchase Invoice":
                paid = -paid
            adjust_outstanding(ctx, str(doctype), str(row["reference_name"]), -sign * paid)
