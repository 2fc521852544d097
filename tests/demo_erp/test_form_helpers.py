"""ERPNext's form helpers on the seeded demo ERP over HTTP (party and item details, tax
templates), the Dynamic Link check on a quotation's party, and the desk page of a document.

Expected values come from the database rows themselves (Item Price, Customer, the template's
tax rows), never from the code under test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conftest import DemoERP, raw

COMPANY = "Savanna Trading Ltd"


def signed_in(demo: DemoERP, user: str) -> httpx.Client:
    client = httpx.Client(base_url=demo.url, timeout=15)
    reply = client.post("/api/method/login", json={"usr": user, "pwd": "demo"})
    assert reply.status_code == 200, reply.text
    return client


def call(client: httpx.Client, method: str, **args: Any) -> httpx.Response:
    body = {k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in args.items()}
    return client.post(f"/api/method/{method}", data=body)


@pytest.fixture(scope="module")
def sales(demo_erp: DemoERP) -> Iterator[httpx.Client]:
    client = signed_in(demo_erp, "sales@demo.local")
    yield client
    client.close()


def _customer(demo: DemoERP) -> Any:
    return raw(
        demo,
        'select c.name, c.default_price_list, c.default_currency from "tabCustomer" c '
        "where c.default_currency = 'KES' order by c.name limit 1",
    )[0]


def _priced_item(demo: DemoERP, price_list: str) -> Any:
    return raw(
        demo,
        "select ip.item_code, ip.price_list_rate, i.standard_rate, i.stock_uom, i.item_name "
        'from "tabItem Price" ip join "tabItem" i on i.name = ip.item_code '
        "where ip.price_list = ? order by ip.item_code limit 1",
        price_list,
    )[0]


def test_party_details_name_the_customers_price_list_currency_and_taxes(
    demo_erp: DemoERP, sales: httpx.Client
) -> None:
    customer = _customer(demo_erp)
    template = raw(
        demo_erp,
        'select name from "tabSales Taxes and Charges Template" where company = ? and is_default = 1',
        COMPANY,
    )[0]["name"]
    reply = call(
        sales,
        "erpnext.accounts.party.get_party_details",
        party=customer["name"],
        party_type="Customer",
        company=COMPANY,
        doctype="Quotation",
    )
    assert reply.status_code == 200, reply.text
    out = reply.json()["message"]
    assert out["customer"] == customer["name"]
    assert out["selling_price_list"] == customer["default_price_list"]
    assert out["currency"] == customer["default_currency"]
    assert out["taxes_and_charges"] == template


def test_item_details_price_the_line_from_item_price_not_the_standard_rate(
    demo_erp: DemoERP, sales: httpx.Client
) -> None:
    customer = _customer(demo_erp)
    item = _priced_item(demo_erp, customer["default_price_list"])
    assert item["price_list_rate"] != item["standard_rate"]  # the two must differ to prove it
    args = {
        "item_code": item["item_code"],
        "company": COMPANY,
        "doctype": "Quotation",
        "customer": customer["name"],
        "selling_price_list": customer["default_price_list"],
        "currency": "KES",
        "qty": 3,
    }
    reply = call(sales, "erpnext.stock.get_item_details.get_item_details", args=args)
    assert reply.status_code == 200, reply.text
    out = reply.json()["message"]
    assert out["price_list_rate"] == item["price_list_rate"]
    assert out["rate"] == item["price_list_rate"]
    assert out["uom"] == item["stock_uom"]
    assert out["item_name"] == item["item_name"]


def test_item_without_a_price_in_the_list_gets_zero_and_unknown_item_is_refused(
    demo_erp: DemoERP, sales: httpx.Client
) -> None:
    service = raw(
        demo_erp,
        'select name from "tabItem" where name not in (select item_code from "tabItem Price" '
        "where price_list = 'Standard Buying KES') and is_stock_item = 0 limit 1",
    )[0]["name"]
    args = {"item_code": service, "company": COMPANY, "doctype": "Quotation",
            "selling_price_list": "Standard Buying KES"}  # fmt: skip
    out = call(sales, "erpnext.stock.get_item_details.get_item_details", args=args).json()
    assert out["message"]["price_list_rate"] == 0
    missing = call(
        sales,
        "erpnext.stock.get_item_details.get_item_details",
        args={"item_code": "NOPE-1", "company": COMPANY, "doctype": "Quotation"},
    )
    assert missing.status_code == 404
    assert missing.json()["exc_type"] == "DoesNotExistError"


def test_a_quotation_to_a_party_that_is_not_a_customer_fails_link_validation(
    demo_erp: DemoERP, sales: httpx.Client
) -> None:
    item = _priced_item(demo_erp, "Standard Selling KES")
    doc = {
        "doctype": "Quotation",
        "quotation_to": "Customer",
        "party_name": COMPANY,  # the company is not a customer
        "company": COMPANY,
        "transaction_date": "2026-11-30",
        "items": [{"item_code": item["item_code"], "qty": 1, "rate": 10}],
    }
    reply = call(sales, "frappe.client.insert", doc=doc)
    assert reply.status_code == 417, reply.text
    assert reply.json()["exc_type"] == "LinkValidationError"
    assert f"Could not find Party: {COMPANY}" in reply.text


def test_a_quotation_with_a_tax_template_takes_its_rows_and_totals(
    demo_erp: DemoERP, sales: httpx.Client
) -> None:
    customer = _customer(demo_erp)
    item = _priced_item(demo_erp, customer["default_price_list"])
    template = raw(
        demo_erp,
        'select t.name, r.rate from "tabSales Taxes and Charges Template" t join '
        '"tabSales Taxes and Charges" r on r.parent = t.name where t.company = ?',
        COMPANY,
    )[0]
    doc = {
        "doctype": "Quotation",
        "quotation_to": "Customer",
        "party_name": customer["name"],
        "company": COMPANY,
        "transaction_date": "2026-11-30",
        "taxes_and_charges": template["name"],
        "items": [{"item_code": item["item_code"], "qty": 3, "rate": item["price_list_rate"]}],
    }
    reply = call(sales, "frappe.client.insert", doc=doc)
    assert reply.status_code == 200, reply.text
    saved = reply.json()["message"]
    net = round(3 * item["price_list_rate"], 2)
    tax = round(net * template["rate"] / 100, 2)
    assert saved["selling_price_list"] == customer["default_price_list"]
    assert [r["rate"] for r in saved["taxes"]] == [template["rate"]]
    assert saved["net_total"] == net
    assert saved["total_taxes_and_charges"] == tax
    assert saved["grand_total"] == round(net + tax, 2)


def test_desk_page_signs_in_then_shows_the_document_as_the_api_would(
    demo_erp: DemoERP, sales: httpx.Client
) -> None:
    # One the API lists for this user (branch-restricted), read back from the database.
    listed = sales.get("/api/resource/Quotation", params={"limit_page_length": 1}).json()
    quotation = raw(
        demo_erp,
        'select q.name, q.party_name, i.item_code from "tabQuotation" q join '
        '"tabQuotation Item" i on i.parent = q.name where q.name = ?',
        listed["data"][0]["name"],
    )[0]
    hidden = raw(
        demo_erp,
        'select name from "tabQuotation" where branch not in (select branch from "tabQuotation" '
        "where name = ?) limit 1",
        quotation["name"],
    )
    path = f"/app/quotation/{quotation['name']}"
    guest = httpx.get(demo_erp.url + path, follow_redirects=False)
    assert guest.status_code == 302
    assert guest.headers["location"] == f"/login?redirect-to={path}"
    assert httpx.get(demo_erp.url + "/login").status_code == 200
    page = sales.get(path)
    assert page.status_code == 200
    assert quotation["name"] in page.text
    assert quotation["party_name"] in page.text
    assert quotation["item_code"] in page.text
    hr = signed_in(demo_erp, "hr@demo.local")
    refused = hr.get(path)
    hr.close()
    assert refused.status_code == 403
    assert "Quotation" in refused.text
    if hidden:  # another branch's quotation: refused by user permissions, as by the API
        api = sales.get(f"/api/resource/Quotation/{hidden[0]['name']}")
        desk = sales.get(f"/app/quotation/{hidden[0]['name']}")
        assert api.status_code == desk.status_code == 403
    assert sales.get("/app/quotation/SAL-QTN-0000-00000").status_code == 404
    assert sales.get("/app/no-such-doctype/X").status_code == 404


def test_the_payment_forms_helpers_name_the_party_and_bank_accounts(
    demo_erp: DemoERP, sales: httpx.Client
) -> None:
    company = raw(
        demo_erp,
        "select default_receivable_account, default_bank_account, default_cash_account "
        'from "tabCompany" where name = ?',
        COMPANY,
    )[0]
    customer = _customer(demo_erp)["name"]
    accounts = signed_in(demo_erp, "accounts@demo.local")
    try:
        reply = call(
            accounts,
            "erpnext.accounts.doctype.payment_entry.payment_entry.get_party_details",
            company=COMPANY, party_type="Customer", party=customer, date="2026-11-30",
        )  # fmt: skip
        assert reply.status_code == 200, reply.text
        assert reply.json()["message"]["party_account"] == company["default_receivable_account"]
        bank_method = (
            "erpnext.accounts.doctype.journal_entry.journal_entry.get_default_bank_cash_account"
        )
        for mode, account in (("Cash", "default_cash_account"), ("Wire Transfer", "default_bank_account")):  # fmt: skip
            reply = call(
                accounts, bank_method, company=COMPANY, account_type="Bank", mode_of_payment=mode
            )
            assert reply.status_code == 200, reply.text
            assert reply.json()["message"]["account"] == company[account], mode
        # An unknown party is the ERP's error, not an empty answer.
        reply = call(
            accounts,
            "erpnext.accounts.doctype.payment_entry.payment_entry.get_party_details",
            company=COMPANY, party_type="Customer", party="No Such Customer",
        )  # fmt: skip
        assert reply.status_code >= 400, reply.text
    finally:
        accounts.close()
