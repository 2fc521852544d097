"""ERPNext's whitelisted helpers a form calls to fill a new transaction before it is saved.

``get_party_details`` (the party's price list, currency and taxes template),
``get_item_details`` (a line's name, UOM and price from Item Price for that price list and
currency), ``get_taxes_and_charges`` and ``get_default_taxes_and_charges`` (a template's rows),
and ``get_balance_on`` (an account's or a party's balance from the general ledger).
They read; nothing is written. Pricing rules and UOM conversion are not imitated: the demo has
neither, so the rate is the price list rate.
"""

from __future__ import annotations

from typing import Any

from demo_erp import documents, permissions, records
from demo_erp.api.methods import Args, _required, _truthy, whitelist
from demo_erp.context import Ctx
from demo_erp.controllers.common import (
    SALES_DOCTYPES,
    flt,
    get_company,
    get_fiscal_year,
    getdate,
)
from demo_erp.exceptions import FiscalYearError, PermissionError, ValidationError
from demo_erp.filters import decode
from demo_erp.meta import get_meta

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
        row = records.load(ctx, party_type, str(party))
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
    item = records.load(ctx, "Item", str(item_code))
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


def _tree_members(ctx: Ctx, doctype: str, node: dict[str, Any]) -> tuple[str, list[Any]]:
    """``exists (select … where lft >= node.lft and rgt <= node.rgt)``: a group and all below."""
    return (
        f'in (select name from "tab{doctype}" where lft >= ? and rgt <= ?)',
        [node.get("lft") or 0, node.get("rgt") or 0],
    )


@whitelist("erpnext.accounts.utils.get_balance_on")
def get_balance_on(ctx: Ctx, args: Args) -> float | None:
    """ERPNext's ``get_balance_on``: debit minus credit of the submitted GL entries of an
    account (a group: all its accounts), a party, or every account of an ``account_type``, up
    to ``date`` (today when absent), from ``start_date``. No fiscal year at that date: 0.
    Reads as the user: the account must be readable, and so must the party."""
    account, party_type, party = args.get("account"), args.get("party_type"), args.get("party")
    company, account_type = args.get("company"), args.get("account_type")
    in_account_currency = args.get("in_account_currency") in (None, "") or _truthy(
        args.get("in_account_currency")
    )
    conds, params = ["gle.is_cancelled = 0"], []
    if args.get("start_date"):
        conds.append("gle.posting_date >= ?")
        params.append(str(getdate(args["start_date"])))
    date = getdate(args["date"]) if args.get("date") else None
    if date:
        conds.append("gle.posting_date <= ?")
        params.append(str(date))
    acc = documents.get(ctx, "Account", str(account)) if account else None
    try:
        get_fiscal_year(ctx, date or ctx.today)
    except FiscalYearError:
        if (date or ctx.today) > ctx.today:
            get_fiscal_year(ctx, ctx.today)  # no year today either: the error stands
        else:
            return 0.0  # older than any fiscal year
    cost_center = args.get("cost_center")
    if cost_center and acc and acc.get("report_type") == "Profit and Loss":
        cc = records.load(ctx, "Cost Center", str(cost_center))
        if cc.get("is_group"):
            sql, values = _tree_members(ctx, "Cost Center", cc)
            conds.append(f"gle.cost_center {sql}")
            params += values
        else:
            conds.append("gle.cost_center = ?")
            params.append(cost_center)
    if acc:
        if acc.get("is_group"):
            sql, values = _tree_members(ctx, "Account", acc)
            conds.append(f"gle.account {sql}")
            params += values
            # A group in the company's currency is summed in company currency.
            currency = get_company(ctx, acc.get("company")).get("default_currency")
            if acc.get("account_currency") == currency:
                in_account_currency = False
        else:
            conds.append("gle.account = ?")
            params.append(acc["name"])
    if account_type:
        names = [
            r[0]
            for r in ctx.conn.execute(
                'select name from "tabAccount" where company = ? and account_type = ? '
                "and coalesce(is_group, 0) = 0 order by lft",
                (company, account_type),
            )
        ]
        conds.append(f"gle.account in ({', '.join('?' for _ in names)})" if names else "0")
        params += names
    if party_type and party:
        if get_meta(str(party_type)) is not None:
            permissions.check_doctype(ctx, str(party_type), "read")
            if records.exists(ctx, str(party_type), str(party)):
                permissions.check_doc(
                    ctx, str(party_type), "read", records.load(ctx, str(party_type), str(party))
                )
        conds.append("gle.party_type = ? and gle.party = ?")
        params += [party_type, party]
    if company:
        conds.append("gle.company = ?")
        params.append(company)
    if not (acc or (party_type and party) or account_type):
        return None
    # Rows of companies and branches the user may not see are not counted.
    scope, scope_params = permissions.list_conditions(ctx, records.require_meta("GL Entry"), "gle")
    conds += scope
    params += scope_params
    debit, credit = (
        ("debit_in_account_currency", "credit_in_account_currency")
        if in_account_currency
        else ("debit", "credit")
    )
    row = ctx.conn.execute(
        f"select sum(cast(round(ifnull(gle.{debit}, 0) * 100) as integer)) "
        f"- sum(cast(round(ifnull(gle.{credit}, 0) * 100) as integer)) "
        f'from "tabGL Entry" gle where {" and ".join(conds)}',
        params,
    ).fetchone()
    return flt((row[0] or 0) / 100)
