"""ERPNext's whitelisted helpers a form calls to fill a new transaction before it is saved.

``get_party_details`` (the party's price list, currency and taxes template),
``get_item_details`` (a line's name, UOM and price from Item Price for that price list and
currency), ``get_taxes_and_charges`` and ``get_default_taxes_and_charges`` (a template's rows).
They read; nothing is written. Pricing rules and UOM conversion are not imitated: the demo has
neither, so the rate is the price list rate.
"""

from __future__ import annotations

from typing import Any

from demo_erp import documents, permissions
from demo_erp.api.methods import Args, _required, whitelist
from demo_erp.context import Ctx
from demo_erp.controllers.common import SALES_DOCTYPES, flt, get_company
from demo_erp.exceptions import PermissionError, ValidationError
from demo_erp.filters import decode

_TEMPLATES = {
    "selling": "Sales Taxes and Charges Template",
    "buying": "Purchase Taxes and Charges Template",
}


def _side(doctype: str | None, party_type: str | None = None) -> str:
    if doctype:
        return "selling" if doctype in SALES_DOCTYPES else "buying"
    return "buying" if party_type == "Supplier" else "selling"


def _enabled_price_list(ctx: Ctx, name: str | None) -> dict[str, Any] | None:
    if not name:
        return None
    row = ctx.conn.execute(
        'select name, currency, enabled from "tabPrice List" where name = ?', (name,)
    ).fetchone()
    return dict(row) if row is not None and row["enabled"] else None


def _default_template(ctx: Ctx, side: str, company: str | None) -> str | None:
    row = ctx.conn.execute(
        f'select name from "tab{_TEMPLATES[side]}" where company = ? and is_default = 1 '
        "and coalesce(disabled, 0) = 0 order by name limit 1",
        (company,),
    ).fetchone()
    return str(row["name"]) if row is not None else None


@whitelist("erpnext.accounts.party.get_party_details")
def get_party_details(ctx: Ctx, args: Args) -> dict[str, Any]:
    party = args.get("party")
    if not party:
        return {}
    party_type = str(args.get("party_type") or "Customer")
    doctype = args.get("doctype")
    company = args.get("company")
    side = _side(str(doctype) if doctype else None, party_type)
    out: dict[str, Any] = {}
    if party_type in ("Customer", "Supplier"):
        row = documents.load(ctx, party_type, str(party))
        if not permissions.has_permission(ctx, party_type, "read", row):
            raise PermissionError(f"Not permitted for {party_type} {party}")
        key = party_type.lower()
        out[key] = row["name"]
        out[f"{key}_name"] = row.get(f"{key}_name")
        for field in ("territory", "customer_group", "supplier_group"):
            if row.get(field):
                out[field] = row[field]
        currency = row.get("default_currency")
        default_list = row.get("default_price_list")
    elif party_type == "Lead":
        row = documents.get(ctx, "Lead", str(party))
        out["party_name"] = row["name"]
        currency, default_list = None, None
    else:
        raise ValidationError(f"Party Type {party_type} is not supported here")
    company_row = get_company(ctx, str(company)) if company else {}
    currency = args.get("currency") or currency or company_row.get("default_currency")
    out["currency"] = currency
    price_list_field = f"{side}_price_list"
    standard = f"Standard {side.capitalize()} {currency}"
    chosen = _enabled_price_list(ctx, str(args.get("price_list") or default_list or standard))
    if chosen is not None:
        out[price_list_field] = chosen["name"]
        out["price_list_currency"] = chosen["currency"]
    if company:
        out["taxes_and_charges"] = _default_template(ctx, side, str(company))
    return out


def _item_price(ctx: Ctx, item_code: str, price_list: str, currency: str, uom: str) -> Any:
    return ctx.conn.execute(
        'select price_list_rate from "tabItem Price" where item_code = ? and price_list = ? '
        "and coalesce(currency, ?) = ? and (coalesce(uom, '') in ('', ?)) "
        "order by uom is null, modified desc limit 1",
        (item_code, price_list, currency, currency, uom),
    ).fetchone()


@whitelist("erpnext.stock.get_item_details.get_item_details")
def get_item_details(ctx: Ctx, args: Args) -> dict[str, Any]:
    raw = decode(_required(args, "args"))
    if not isinstance(raw, dict):
        raise ValidationError("args must be a JSON object")
    item_code = raw.get("item_code")
    if not item_code:
        raise ValidationError("Item Code is mandatory")
    if not raw.get("company"):
        raise ValidationError("Please specify Company")
    item = documents.load(ctx, "Item", str(item_code))
    doctype = str(raw.get("doctype") or "")
    side = _side(doctype or None, "Supplier" if raw.get("supplier") else "Customer")
    if item.get("disabled"):
        raise ValidationError(f"Item {item_code} is disabled")
    if side == "selling" and not item.get("is_sales_item"):
        raise ValidationError(f"Item {item_code} must be a Sales Item")
    if side == "buying" and doctype != "Material Request" and not item.get("is_purchase_item"):
        raise ValidationError(f"Item {item_code} must be a Purchase Item")
    get_company(ctx, str(raw["company"]))  # ValidationError when there is no such company
    price_list = raw.get("price_list") or raw.get(f"{side}_price_list")
    plist = _enabled_price_list(ctx, str(price_list) if price_list else None)
    uom = str(raw.get("uom") or item.get("stock_uom"))
    qty = flt(raw.get("qty") or 1, 6)
    price_list_rate = 0.0
    if plist is not None:
        found = _item_price(ctx, str(item_code), plist["name"], plist["currency"], uom)
        if found is not None:
            # A price list in another currency converts through the two exchange rates.
            plc_rate = flt(raw.get("plc_conversion_rate") or 1, 9)
            conversion_rate = flt(raw.get("conversion_rate") or 1, 9)
            price_list_rate = flt(flt(found["price_list_rate"]) * plc_rate / conversion_rate)
    return {
        "item_code": item["name"],
        "item_name": item.get("item_name"),
        "description": item.get("description"),
        "item_group": item.get("item_group"),
        "stock_uom": item.get("stock_uom"),
        "uom": uom,
        "conversion_factor": 1.0,
        "qty": qty,
        "stock_qty": qty,
        "price_list_rate": price_list_rate,
        "base_price_list_rate": price_list_rate,
        "discount_percentage": 0.0,
        "discount_amount": 0.0,
        "rate": price_list_rate,
        "base_rate": price_list_rate,
        "amount": flt(price_list_rate * qty),
        "net_rate": price_list_rate,
        "net_amount": flt(price_list_rate * qty),
        "warehouse": raw.get("warehouse") or raw.get("set_warehouse"),
        "is_stock_item": item.get("is_stock_item"),
        "item_tax_template": None,
        "valuation_rate": item.get("valuation_rate"),
        "has_pricing_rule": 0,
        "pricing_rules": "",
    }


def _template_rows(ctx: Ctx, master_doctype: str, master_name: str) -> list[dict[str, Any]]:
    if master_doctype not in _TEMPLATES.values():
        raise ValidationError(f"{master_doctype} is not a taxes and charges template")
    template = documents.get(ctx, master_doctype, master_name)
    keep = ("charge_type", "account_head", "description", "rate", "tax_amount", "idx")
    return [{k: row.get(k) for k in keep} for row in template.get("taxes") or []]


@whitelist("erpnext.controllers.accounts_controller.get_taxes_and_charges")
def get_taxes_and_charges(ctx: Ctx, args: Args) -> list[dict[str, Any]] | None:
    master_name = args.get("master_name")
    if not master_name:
        return None
    return _template_rows(ctx, str(_required(args, "master_doctype")), str(master_name))


@whitelist("erpnext.controllers.accounts_controller.get_default_taxes_and_charges")
def get_default_taxes_and_charges(ctx: Ctx, args: Args) -> dict[str, Any]:
    master_doctype = str(_required(args, "master_doctype"))
    side = "selling" if master_doctype == _TEMPLATES["selling"] else "buying"
    name = args.get("tax_template") or _default_template(ctx, side, args.get("company"))
    if not name:
        return {}
    return {"taxes_and_charges": name, "taxes": _template_rows(ctx, master_doctype, str(name))}
