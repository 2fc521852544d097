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
    key = {"Customer": "customer_name", "Supplier": "supplier_name"}.get(party_type, "employee_name")
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
            'select ap.name, ap.company, ap.start_date, ap.end_date, cd.document_type '
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
    if has_field(doc["doctype"], "total_taxes_and_charges"):
        tax = flt(net_total * flt(company.get("tax_rate"), 6) / 100)
        doc["total_taxes_and_charges"] = tax
    grand_total = flt(net_total + tax)
    set_if_field(doc, "grand_total", grand_total)
    conversion_rate = flt(doc.get("conversion_rate"), 9) or 1.0
    if has_field(doc["doctype"], "conversion_rate"):
        doc["conversion_rate"] = conversion_rate
    set_if_field(doc, "base_grand_total", flt(grand_total * conversion_rate))
    # ERPNext rounds to the currency's whole unit unless rounding is disabled.
    set_if_field(doc, "rounded_total", float(round(grand_total)))


def set_currency(doc: Doc, company: dict[str, Any]) -> None:
    if has_field(doc["doctype"], "currency") and not doc.get("currency"):
        doc["currency"] = company.get("default_currency")


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
