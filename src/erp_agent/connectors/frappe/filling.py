"""Fill a new selling or buying document the way ERPNext's form does, before it is proposed.

The form asks the ERP, as the user: ``get_party_details`` (the party's price list, currency,
taxes template), ``get_item_details`` per line (item name, UOM, the rate from Item Price for that
price list and currency) and ``get_taxes_and_charges`` (the template's rows). Line amounts, tax
amounts and totals are then computed here from those values, as the form's own script does;
after insert the ERP recomputes them, and those are the figures the saved document carries.
A rate the user gave is kept (as the form keeps a typed rate); a line the ERP has no price for is
reported, never priced by us.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from erp_agent.catalog import EntityMap
from erp_agent.connectors.base import FilledDocument
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient

SALES = frozenset({"Quotation", "Sales Order", "Delivery Note", "Sales Invoice"})
# doctype -> (native party field, party type; None: the type is in quotation_to)
_PARTY = {
    "Quotation": ("party_name", None),
    "Sales Order": ("customer", "Customer"),
    "Sales Invoice": ("customer", "Customer"),
    "Delivery Note": ("customer", "Customer"),
    "Purchase Order": ("supplier", "Supplier"),
    "Purchase Invoice": ("supplier", "Supplier"),
    "Purchase Receipt": ("supplier", "Supplier"),
}
_TEMPLATES = {
    True: "Sales Taxes and Charges Template",
    False: "Purchase Taxes and Charges Template",
}


def fillable(doctype: str) -> bool:
    return doctype in _PARTY


def money(value: Any) -> float:
    """Rounded to cents half-up, as Frappe's ``flt(value, 2)`` does for currency."""
    return float(Decimal(str(value or 0)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _tax_rows(rows: list[dict[str, Any]], net_total: float) -> list[dict[str, Any]]:
    """Each row's amount by its charge type, and the running total after it."""
    out, running, previous = [], net_total, 0.0
    for row in rows:
        kind = row.get("charge_type") or "On Net Total"
        rate = float(row.get("rate") or 0)
        if kind == "Actual":
            amount = money(row.get("tax_amount"))
        elif kind == "On Previous Row Amount":
            amount = money(previous * rate / 100)
        elif kind == "On Previous Row Total":
            amount = money(running * rate / 100)
        else:
            amount = money(net_total * rate / 100)
        running = money(running + amount)
        previous = amount
        out.append({**row, "tax_amount": amount, "total": running})
    return out


async def fill(
    client: FrappeClient, cred: Credential, emap: EntityMap, values: Mapping[str, Any]
) -> FilledDocument:
    """The document completed by the ERP's own helpers, in canonical names."""
    doctype = emap.doctype
    selling = doctype in SALES
    native: dict[str, Any] = dict(emap.to_native(values))
    party_field, party_type = _PARTY[doctype]
    party_type = party_type or str(native.get("quotation_to") or "Customer")
    price_field = "selling_price_list" if selling else "buying_price_list"
    date = native.get("transaction_date") or native.get("posting_date")
    company = native.get("company")
    details: dict[str, Any] = dict(
        await client.method(
            cred,
            "erpnext.accounts.party.get_party_details",
            party=native.get(party_field),
            party_type=party_type,
            company=company,
            doctype=doctype,
            posting_date=date,
            price_list=native.get(price_field),
            currency=native.get("currency"),
        )
        or {}
    )
    name_field = f"{party_type.lower()}_name"
    if details.get(name_field):
        native[name_field] = details[name_field]
    native["currency"] = native.get("currency") or details.get("currency")
    price_list = native.get(price_field) or details.get(price_field)
    if price_list:
        native[price_field] = price_list
    template = native.get("taxes_and_charges") or details.get("taxes_and_charges")
    if template:
        native["taxes_and_charges"] = template
    notes: list[str] = []
    unpriced: list[int] = []
    lines: list[dict[str, Any]] = []
    for index, row in enumerate(native.get("items") or []):
        args = {
            "item_code": row.get("item_code"),
            "company": company,
            "doctype": doctype,
            party_type.lower(): native.get(party_field),
            price_field: price_list,
            "price_list": price_list,
            "currency": native.get("currency"),
            "conversion_rate": 1,
            "plc_conversion_rate": 1,
            "transaction_date": date,
            "qty": row.get("qty"),
            "uom": row.get("uom"),
            "warehouse": row.get("warehouse") or native.get("set_warehouse"),
        }
        item = dict(
            await client.method(cred, "erpnext.stock.get_item_details.get_item_details", args=args)
            or {}
        )
        line = dict(row)
        line["item_name"] = line.get("item_name") or item.get("item_name")
        line["uom"] = line.get("uom") or item.get("uom")
        if item.get("warehouse") and "warehouse" in row:
            line["warehouse"] = row.get("warehouse") or item.get("warehouse")
        erp_rate = float(item.get("rate") or item.get("price_list_rate") or 0)
        if line.get("rate") is None:
            if erp_rate:
                line["rate"] = erp_rate
            else:
                unpriced.append(index)
                where = f"in {price_list}" if price_list else "(no price list applies)"
                notes.append(f"no price {where} for {row.get('item_code')}")
        line["amount"] = money(float(line.get("qty") or 0) * float(line.get("rate") or 0))
        lines.append(line)
    native["items"] = lines
    net_total = money(sum(line["amount"] for line in lines))
    taxes = list(native.get("taxes") or [])
    if not taxes and template:
        rows = await client.method(
            cred,
            "erpnext.controllers.accounts_controller.get_taxes_and_charges",
            master_doctype=_TEMPLATES[selling],
            master_name=template,
        )
        keep = ("charge_type", "account_head", "description", "rate", "tax_amount")
        taxes = [{k: r.get(k) for k in keep if r.get(k) is not None} for r in rows or []]
    computed = _tax_rows(taxes, net_total)
    native["taxes"] = [{k: v for k, v in r.items() if k != "total"} for r in computed]
    tax_total = money(computed[-1]["total"] - net_total) if computed else 0.0
    native["net_total"] = net_total
    native["total_taxes_and_charges"] = tax_total
    native["grand_total"] = money(net_total + tax_total)
    native["total_qty"] = sum(float(line.get("qty") or 0) for line in lines)
    document: dict[str, Any] = dict(emap.to_canonical(native))
    payload = {k: v for k, v in document.items() if k in values or k in _FILLED}
    canonical_lines: list[dict[str, Any]] = list(document.get("items") or [])
    payload["items"] = [
        {k: v for k, v in line.items() if k in _LINE_KEYS or k in _row_keys(values, index)}
        for index, line in enumerate(canonical_lines)
    ]
    tax_rows: list[dict[str, Any]] = list(document.get("taxes") or [])
    if tax_rows:
        # The ERP computes tax amounts on insert; only an Actual charge carries its own.
        payload["taxes"] = [
            {k: v for k, v in r.items() if k != "amount" or r.get("charge_type") == "Actual"}
            for r in tax_rows
        ]
    return FilledDocument(
        payload=payload,
        document=document,
        notes=notes,
        unpriced=unpriced,
        price_list=str(price_list) if price_list else None,
        currency=str(native["currency"]) if native.get("currency") else None,
    )


# Fields the ERP filled that are sent on insert, so what is confirmed is what is written.
_FILLED = frozenset({"currency", "price_list", "taxes_template"})
_LINE_KEYS = frozenset({"item", "qty", "uom", "rate", "warehouse"})


def _row_keys(values: Mapping[str, Any], index: int) -> set[str]:
    rows = values.get("items") or []
    if index < len(rows) and isinstance(rows[index], Mapping):
        return set(rows[index])
    return set()
