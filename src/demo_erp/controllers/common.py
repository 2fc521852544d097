"""Helpers shared by the ERPNext domain controllers: cached masters, rounding, periods, totals.

Masters (companies, fiscal years, accounting periods, items, parties, workflows) are cached on
the request context, because the data generator pushes tens of thousands of documents through
one context. Saving any of those masters clears the cache (see ``MasterController``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, cast

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.exceptions import ClosedAccountingPeriod, FiscalYearError, ValidationError
from demo_erp.meta import get_meta
from demo_erp.records import db_set

_CACHE_KEY = "_erp_controller_cache"

# ERPNext's ``period_closing_doctypes`` that exist in the demo.
PERIOD_CLOSING_DOCTYPES = frozenset(
    {
        "Sales Invoice",
        "Purchase Invoice",
        "Journal Entry",
        "Payment Entry",
        "Stock Entry",
        "Delivery Note",
        "Purchase Receipt",
    }
)


def flt(value: Any, precision: int = 2) -> float:
    """Frappe's ``flt``: a float rounded to ``precision`` (None and '' count as 0)."""
    try:
        number = float(value or 0)
    except (TypeError, ValueError):
        return 0.0
    return round(number, precision) + 0.0  # + 0.0 turns -0.0 into 0.0


def cache(ctx: Ctx) -> dict[str, Any]:
    """A dict that lives as long as ``ctx`` (one request, or one whole seeding run)."""
    return cast(dict[str, Any], vars(ctx).setdefault(_CACHE_KEY, {}))


def invalidate(ctx: Ctx) -> None:
    vars(ctx).pop(_CACHE_KEY, None)


def _cached_row(ctx: Ctx, doctype: str, name: str | None) -> dict[str, Any] | None:
    if not name:
        return None
    bucket: dict[str, dict[str, Any] | None] = cache(ctx).setdefault(doctype, {})
    if name not in bucket:
        row = ctx.conn.execute(f'select * from "tab{doctype}" where name = ?', (name,)).fetchone()
        bucket[name] = dict(row) if row is not None else None
    return bucket[name]


def get_company(ctx: Ctx, name: str | None) -> dict[str, Any]:
    row = _cached_row(ctx, "Company", name)
    if row is None:
        raise ValidationError(f"Company {name} not found")
    return row


def get_item(ctx: Ctx, item_code: str | None) -> dict[str, Any] | None:
    return _cached_row(ctx, "Item", item_code)


def get_party(ctx: Ctx, party_type: str, party: str | None) -> dict[str, Any] | None:
    if party_type not in ("Customer", "Supplier", "Employee"):
        return None
    return _cached_row(ctx, party_type, party)


def get_warehouse(ctx: Ctx, name: str | None) -> dict[str, Any] | None:
    return _cached_row(ctx, "Warehouse", name)


def party_name(ctx: Ctx, party_type: str, party: str | None) -> str | None:
    row = get_party(ctx, party_type, party)
    if row is None:
        return None
    key = {"Customer": "customer_name", "Supplier": "supplier_name"}.get(
        party_type, "employee_name"
    )
    return cast(str | None, row.get(key))


def getdate(value: Any) -> dt.date:
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


def get_fiscal_year(ctx: Ctx, date: Any) -> str:
    """The active Fiscal Year covering ``date``; FiscalYearError when none does."""
    years: list[tuple[str, str, str]] | None = cache(ctx).get("fiscal_years")
    if years is None:
        rows = ctx.conn.execute(
            'select name, year_start_date, year_end_date from "tabFiscal Year" '
            "where coalesce(disabled, 0) = 0 order by year_start_date desc"
        ).fetchall()
        years = [(r[0], str(r[1]), str(r[2])) for r in rows]
        cache(ctx)["fiscal_years"] = years
    day = str(date)[:10]
    for name, start, end in years:
        if start <= day <= end:
            return name
    raise FiscalYearError(f"{day} is not in any active Fiscal Year")


def closed_period(ctx: Ctx, company: str | None, doctype: str, date: Any) -> str | None:
    """The name of a closed Accounting Period for ``doctype`` covering ``date``, if any."""
    periods: list[tuple[str, str, str, str, str]] | None = cache(ctx).get("closed_periods")
    if periods is None:
        rows = ctx.conn.execute(
            "select ap.name, ap.company, ap.start_date, ap.end_date, cd.document_type "
            'from "tabAccounting Period" ap join "tabClosed Document" cd on cd.parent = ap.name '
            "and cd.parenttype = 'Accounting Period' where cd.closed = 1"
        ).fetchall()
        periods = [(r[0], r[1], str(r[2]), str(r[3]), r[4]) for r in rows]
        cache(ctx)["closed_periods"] = periods
    if not periods or not date:
        return None
    day = str(date)[:10]
    for name, period_company, start, end, document_type in periods:
        if period_company == company and document_type == doctype and start <= day <= end:
            return name
    return None


def validate_accounting_period(ctx: Ctx, doc: Doc) -> None:
    """ERPNext's ``validate_accounting_period_on_doc_save`` (doc_events validate)."""
    period = closed_period(ctx, doc.get("company"), doc["doctype"], doc.get("posting_date"))
    if period:
        raise ClosedAccountingPeriod(
            f"You cannot create a {doc['doctype']} within the closed Accounting Period "
            f"<strong>{period}</strong>"
        )


def has_field(doctype: str, fieldname: str) -> bool:
    meta = get_meta(doctype)
    return meta is not None and meta.get_field(fieldname) is not None


def set_if_field(doc: Doc, fieldname: str, value: Any) -> None:
    if has_field(doc["doctype"], fieldname):
        doc[fieldname] = value


def fetch_item_names(ctx: Ctx, rows: list[Doc]) -> None:
    for row in rows:
        item = get_item(ctx, row.get("item_code"))
        if item is not None:
            if not row.get("item_name"):
                row["item_name"] = item.get("item_name")
            if "uom" in row and not row.get("uom"):
                row["uom"] = item.get("stock_uom")


def calculate_totals(ctx: Ctx, doc: Doc, company: dict[str, Any]) -> None:
    """Item amounts and document totals (ERPNext's ``calculate_taxes_and_totals``, one tax row).

    Tax applies to doctypes with ``total_taxes_and_charges`` (quotations, orders and invoices);
    delivery notes and receipts carry net amounts only, consistently.
    """
    total_qty = 0.0
    net_total = 0.0
    for row in doc.get("items") or []:
        row["amount"] = flt(flt(row.get("qty"), 6) * flt(row.get("rate")))
        total_qty += flt(row.get("qty"), 6)
        net_total += row["amount"]
    net_total = flt(net_total)
    set_if_field(doc, "total_qty", flt(total_qty, 6))
    set_if_field(doc, "net_total", net_total)
    tax = 0.0
    if doc.get("taxes"):
        tax = calculate_tax_rows(doc["taxes"], net_total)
        doc["total_taxes_and_charges"] = tax
    elif has_field(doc["doctype"], "total_taxes_and_charges"):
        # No taxes table: the company's one VAT rate, as the seeded history was written.
        tax = flt(net_total * flt(company.get("tax_rate"), 6) / 100)
        doc["total_taxes_and_charges"] = tax
    grand_total = flt(net_total + tax)
    set_if_field(doc, "grand_total", grand_total)
    conversion_rate = flt(doc.get("conversion_rate"), 9) or 1.0
    if has_field(doc["doctype"], "conversion_rate"):
        doc["conversion_rate"] = conversion_rate
    set_if_field(doc, "base_net_total", flt(net_total * conversion_rate))
    set_if_field(doc, "base_grand_total", flt(grand_total * conversion_rate))
    # ERPNext rounds to the currency's whole unit unless rounding is disabled.
    set_if_field(doc, "rounded_total", float(round(grand_total)))


def calculate_tax_rows(rows: list[Doc], net_total: float) -> float:
    """Each tax row's amount and running total by its charge type; returns the taxes' sum."""
    running, previous_amount, previous_total = net_total, 0.0, net_total
    for row in rows:
        kind = row.get("charge_type") or "On Net Total"
        rate = flt(row.get("rate"), 6)
        if kind == "Actual":
            amount = flt(row.get("tax_amount"))
        elif kind == "On Previous Row Amount":
            amount = flt(previous_amount * rate / 100)
        elif kind == "On Previous Row Total":
            amount = flt(previous_total * rate / 100)
        else:
            amount = flt(net_total * rate / 100)
        running = flt(running + amount)
        row["tax_amount"], row["total"] = amount, running
        previous_amount, previous_total = amount, running
    return flt(running - net_total)


def set_taxes_from_template(ctx: Ctx, doc: Doc) -> None:
    """ERPNext's set_missing_values: a named template with no taxes rows fills them."""
    template = doc.get("taxes_and_charges")
    if not template or doc.get("taxes"):
        return
    child = (
        "Sales Taxes and Charges"
        if doc["doctype"] in SALES_DOCTYPES
        else "Purchase Taxes and Charges"
    )
    rows = ctx.conn.execute(
        f'select charge_type, account_head, description, rate, tax_amount from "tab{child}" '
        "where parent = ? and parentfield = 'taxes' order by idx",
        (template,),
    ).fetchall()
    doc["taxes"] = [{**dict(r), "idx": i + 1} for i, r in enumerate(rows)]


def set_price_list(ctx: Ctx, doc: Doc, party_type: str, party: dict[str, Any]) -> None:
    """The party's default price list when the document names none (ERPNext's party details)."""
    field = "selling_price_list" if party_type == "Customer" else "buying_price_list"
    if has_field(doc["doctype"], field) and not doc.get(field) and party.get("default_price_list"):
        doc[field] = party["default_price_list"]


SALES_DOCTYPES = frozenset({"Quotation", "Sales Order", "Delivery Note", "Sales Invoice"})


def set_currency(doc: Doc, company: dict[str, Any]) -> None:
    if has_field(doc["doctype"], "currency") and not doc.get("currency"):
        doc["currency"] = company.get("default_currency")


def add_days(date: Any, days: int) -> str:
    return (getdate(date) + dt.timedelta(days=days)).isoformat()


def prepare_transaction(
    ctx: Ctx, doc: Doc, party_type: str | None = None, party_field: str | None = None
) -> dict[str, Any]:
    """Defaults and totals every selling/buying transaction shares; returns the Company row."""
    company = get_company(ctx, doc.get("company"))
    set_currency(doc, company)
    if party_type:
        party = get_party(ctx, party_type, doc.get(party_field or party_type.lower()))
        if party is not None:
            name_field = "customer_name" if party_type == "Customer" else "supplier_name"
            set_if_field(doc, name_field, party.get(name_field))
            for fieldname in ("territory", "customer_group"):
                if has_field(doc["doctype"], fieldname) and not doc.get(fieldname):
                    doc[fieldname] = party.get(fieldname)
            set_price_list(ctx, doc, party_type, party)
    set_taxes_from_template(ctx, doc)
    fetch_item_names(ctx, doc.get("items") or [])
    calculate_totals(ctx, doc, company)
    return company


def set_due_date(ctx: Ctx, doc: Doc, party_type: str, party_field: str) -> None:
    """Due date = posting date + the party's credit days, and one Payment Schedule row."""
    if not doc.get("due_date") and doc.get("posting_date"):
        party = get_party(ctx, party_type, doc.get(party_field)) or {}
        doc["due_date"] = add_days(doc["posting_date"], int(party.get("payment_terms_days") or 0))
    if doc.get("due_date") and doc.get("posting_date") and doc["due_date"] < doc["posting_date"]:
        raise ValidationError("Due Date cannot be before Posting Date")
    if "payment_schedule" not in doc:
        return
    if doc.get("is_return"):
        doc["payment_schedule"] = []
        return
    grand_total = flt(doc.get("grand_total"))
    old = (doc.get("payment_schedule") or [{}])[0]
    doc["payment_schedule"] = [
        {
            **({"name": old["name"]} if old.get("name") else {}),
            "idx": 1,
            "due_date": doc.get("due_date"),
            "invoice_portion": 100.0,
            "payment_amount": grand_total,
            "outstanding": grand_total,
            "paid_amount": 0.0,
        }
    ]


def set_status(
    doc: Doc, submitted: str, cancelled: str = "Cancelled", draft: str = "Draft"
) -> None:
    """The plain docstatus-driven status (orders, receipts, requests, quotations)."""
    docstatus = int(doc.get("docstatus") or 0)
    doc["status"] = {0: draft, 1: submitted, 2: cancelled}[docstatus]


# How orders progress: for fulfilment and billing, (voucher doctype, its item table, the item
# field linking the order, the summed column, the order item column it fills).
_ORDER_FLOWS: dict[str, dict[str, Any]] = {
    "Sales Order": {
        "item_table": "Sales Order Item",
        "fulfil": (
            "Delivery Note",
            "Delivery Note Item",
            "against_sales_order",
            "qty",
            "delivered_qty",
        ),
        "bill": ("Sales Invoice", "Sales Invoice Item", "sales_order", "amount", "billed_amt"),
        "percents": ("per_delivered", "per_billed"),
        "statuses": ("To Deliver and Bill", "To Bill", "To Deliver", "Completed"),
    },
    "Purchase Order": {
        "item_table": "Purchase Order Item",
        "fulfil": (
            "Purchase Receipt",
            "Purchase Receipt Item",
            "purchase_order",
            "qty",
            "received_qty",
        ),
        "bill": (
            "Purchase Invoice",
            "Purchase Invoice Item",
            "purchase_order",
            "amount",
            "billed_amt",
        ),
        "percents": ("per_received", "per_billed"),
        "statuses": ("To Receive and Bill", "To Bill", "To Receive", "Completed"),
    },
}


def order_status(order_doctype: str, per_fulfilled: float, per_billed: float) -> str:
    """ERPNext's Sales/Purchase Order status from the delivered/received and billed percents."""
    both, to_bill, to_fulfil, completed = _ORDER_FLOWS[order_doctype]["statuses"]
    if per_fulfilled >= 100 and per_billed >= 100:
        return str(completed)
    if per_fulfilled >= 100:
        return str(to_bill)
    if per_billed >= 100:
        return str(to_fulfil)
    return str(both)


def update_order_progress(ctx: Ctx, doc: Doc, cancelling: bool = False) -> None:
    """Refresh delivered/received qty and billed amount of the orders ``doc``'s items point at.

    Runs from on_submit/on_cancel, when the voucher's own docstatus is not yet stored: the
    query leaves it out and its rows are added unless it is being cancelled.
    """
    for order_doctype, flow in _ORDER_FLOWS.items():
        for kind in ("fulfil", "bill"):
            parent_dt, child_dt, link, value_col, target_col = flow[kind]
            if parent_dt != doc["doctype"]:
                continue
            orders = {r.get(link) for r in doc.get("items") or [] if r.get(link)}
            for order in sorted(orders):
                totals: dict[str, float] = {}
                rows = ctx.conn.execute(
                    f'select c.item_code, sum(c."{value_col}") from "tab{child_dt}" c '
                    f'join "tab{parent_dt}" p on p.name = c.parent '
                    f'where c."{link}" = ? and p.docstatus = 1 and p.name != ? group by c.item_code',
                    (order, doc["name"]),
                ).fetchall()
                for item_code, value in rows:
                    totals[item_code] = flt(value, 6)
                if not cancelling:
                    for r in doc.get("items") or []:
                        if r.get(link) == order:
                            totals[r["item_code"]] = flt(
                                totals.get(r["item_code"], 0) + flt(r.get(value_col), 6), 6
                            )
                _apply_progress(ctx, order_doctype, order, flow, target_col, totals)


def _apply_progress(
    ctx: Ctx,
    order_doctype: str,
    order: str,
    flow: dict[str, Any],
    target_col: str,
    totals: dict[str, float],
) -> None:
    head = ctx.conn.execute(
        f'select docstatus, status from "tab{order_doctype}" where name = ?', (order,)
    ).fetchone()
    if head is None or head["docstatus"] != 1:
        return
    item_table = flow["item_table"]
    fulfil_col = flow["fulfil"][4]
    items = ctx.conn.execute(
        f'select name, item_code, qty, amount, "{fulfil_col}" as fulfilled, billed_amt '
        f'from "tab{item_table}" where parent = ? and parenttype = ? order by idx',
        (order, order_doctype),
    ).fetchall()
    remaining = dict(totals)
    last_row_of: dict[str, str] = {r["item_code"]: r["name"] for r in items}
    fulfilled_total = billed_total = qty_total = amount_total = 0.0
    for r in items:
        qty, amount = flt(r["qty"], 6), flt(r["amount"])
        left = remaining.get(r["item_code"], 0.0)
        cap = qty if target_col == fulfil_col else amount
        # Fill rows of the same item in order; the last row takes any excess.
        value = left if last_row_of[r["item_code"]] == r["name"] else min(left, cap)
        remaining[r["item_code"]] = flt(left - value, 6)
        ctx.conn.execute(
            f'update "tab{item_table}" set "{target_col}" = ? where name = ?',
            (flt(value, 6), r["name"]),
        )
        fulfilled = value if target_col == fulfil_col else flt(r["fulfilled"], 6)
        billed = value if target_col == "billed_amt" else flt(r["billed_amt"])
        qty_total += qty
        amount_total += amount
        fulfilled_total += min(fulfilled, qty)
        billed_total += min(billed, amount)
    per_fulfilled = flt(fulfilled_total * 100 / qty_total) if qty_total else 0.0
    per_billed = flt(billed_total * 100 / amount_total) if amount_total else 0.0
    values: dict[str, Any] = {flow["percents"][0]: per_fulfilled, flow["percents"][1]: per_billed}
    if head["status"] not in ("On Hold", "Closed"):
        values["status"] = order_status(order_doctype, per_fulfilled, per_billed)
    db_set(ctx, order_doctype, order, values)


# Invoice doctype -> (its item table, the item field naming the stock voucher, that voucher).
_BILLED_VOUCHERS = {
    "Sales Invoice": ("Sales Invoice Item", "delivery_note", "Delivery Note"),
    "Purchase Invoice": ("Purchase Invoice Item", "purchase_receipt", "Purchase Receipt"),
}


def update_billed_vouchers(ctx: Ctx, doc: Doc, cancelling: bool = False) -> None:
    """per_billed and status of the delivery notes / receipts an invoice's items bill."""
    if doc["doctype"] not in _BILLED_VOUCHERS:
        return
    child_dt, link, voucher_dt = _BILLED_VOUCHERS[doc["doctype"]]
    vouchers = {r.get(link) for r in doc.get("items") or [] if r.get(link)}
    for voucher in sorted(vouchers):
        head = ctx.conn.execute(
            f'select docstatus, status, net_total from "tab{voucher_dt}" where name = ?',
            (voucher,),
        ).fetchone()
        if head is None or head["docstatus"] != 1:
            continue
        billed = flt(
            ctx.conn.execute(
                f'select coalesce(sum(c.amount), 0) from "tab{child_dt}" c '
                f'join "tab{doc["doctype"]}" p on p.name = c.parent '
                f'where c."{link}" = ? and p.docstatus = 1 and p.name != ?',
                (voucher, doc["name"]),
            ).fetchone()[0]
        )
        if not cancelling:
            billed += sum(
                flt(r.get("amount")) for r in doc.get("items") or [] if r.get(link) == voucher
            )
        total = flt(head["net_total"])
        per_billed = flt(min(billed, total) * 100 / total) if total > 0 else 0.0
        values: dict[str, Any] = {"per_billed": per_billed}
        if head["status"] in ("To Bill", "Completed"):
            values["status"] = "Completed" if per_billed >= 100 else "To Bill"
        db_set(ctx, voucher_dt, voucher, values)


def reserve_series(ctx: Ctx, prefix: str, count: int, digits: int = 5) -> list[str]:
    """``count`` consecutive names of a naming series in one round trip (ledger rows)."""
    row = ctx.conn.execute("select current from __Series where name = ?", (prefix,)).fetchone()
    first = (row["current"] if row else 0) + 1
    ctx.conn.execute(
        "insert into __Series (name, current) values (?, ?) "
        "on conflict(name) do update set current = excluded.current",
        (prefix, first + count - 1),
    )
    return [f"{prefix}{n:0{digits}d}" for n in range(first, first + count)]


class MasterController(Controller):
    """Masters the controllers cache: any save clears the context's cache."""

    def validate(self, ctx: Ctx, doc: Doc) -> None:
        invalidate(ctx)

    def after_insert(self, ctx: Ctx, doc: Doc) -> None:
        invalidate(ctx)

    def on_update_after_submit(self, ctx: Ctx, old: Doc, new: Doc) -> None:
        invalidate(ctx)


register(
    "Company",
    "Fiscal Year",
    "Accounting Period",
    "Item",
    "Customer",
    "Supplier",
    "Warehouse",
    "Workflow",
)(MasterController)


def ledger_columns(ctx: Ctx, name: str, now: str) -> dict[str, Any]:
    """The standard columns of a ledger row the system writes (GL and stock ledger entries)."""
    return {
        "name": name,
        "owner": ctx.user,
        "creation": now,
        "modified": now,
        "modified_by": ctx.user,
        "docstatus": 1,
        "idx": 0,
    }
