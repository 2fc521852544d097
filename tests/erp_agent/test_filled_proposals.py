"""A create proposal is filled by the ERP (rates from the customer's price list, UOM, taxes),
names are resolved as the user means them, and nothing is priced or created by guesswork.

Expected figures come from the demo ERP's own rows (Item Price, the tax template's rows), read
straight from its database, never through the connector or the tools under test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from agent_helpers import signed_in_context

from conftest import DemoERP, raw
from erp_agent.catalog import load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import NeedsChoice, ToolInputError
from erp_agent.tools.base import Tool, ToolContext
from erp_agent.tools.factories import catalog_tools
from erp_agent.tools.factories._creating import prepare_create

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
TOOLS = {t.name: t for t in catalog_tools(CATALOG)}
COMPANY = "Savanna Trading Ltd"


@pytest.fixture
async def sales(demo_erp: DemoERP) -> AsyncIterator[ToolContext]:
    connector = ERPNextConnector(demo_erp.url, catalog=CATALOG)
    yield await signed_in_context(connector, "sales@demo.local", TOOLS, CATALOG)
    await connector.aclose()


def _customer_and_item(demo: DemoERP, user_branch_of: str = "sales@demo.local") -> Any:
    """A customer the sales user may see (Nairobi), and a stock item priced in its list."""
    customer = raw(
        demo,
        'select name, default_price_list from "tabCustomer" where territory = ? '
        "and default_currency = 'KES' order by name limit 1",
        "Nairobi",
    )[0]
    item = raw(
        demo,
        "select ip.item_code, ip.price_list_rate, i.standard_rate, i.stock_uom, i.item_name "
        'from "tabItem Price" ip join "tabItem" i on i.name = ip.item_code '
        "where ip.price_list = ? and i.is_stock_item = 1 order by ip.item_code limit 1",
        customer["default_price_list"],
    )[0]
    return customer, item


def _vat_rate(demo: DemoERP) -> float:
    return float(
        raw(
            demo,
            'select r.rate from "tabSales Taxes and Charges Template" t join '
            '"tabSales Taxes and Charges" r on r.parent = t.name '
            "where t.company = ? and t.is_default = 1",
            COMPANY,
        )[0]["rate"]
    )


def _quotation(party: str, item: str, qty: float = 3, **line: Any) -> dict[str, Any]:
    return {
        "quotation_to": "customer",
        "party": party,
        "company": COMPANY,
        "date": "2026-11-30",
        "items": [{"item": item, "qty": qty, **line}],
    }


async def test_the_erp_prices_the_line_from_the_customers_price_list(
    demo_erp: DemoERP, sales: ToolContext
) -> None:
    customer, item = _customer_and_item(demo_erp)
    change = await prepare_create(
        sales, CATALOG.entity("quotation"), _quotation(customer["name"], item["item_code"])
    )
    line = change.payload["items"][0]
    assert line["rate"] == item["price_list_rate"] != item["standard_rate"]
    assert line["uom"] == item["stock_uom"]
    assert change.payload["price_list"] == customer["default_price_list"]
    net = round(3 * item["price_list_rate"], 2)
    tax = round(net * _vat_rate(demo_erp) / 100, 2)
    doc = change.document
    assert doc is not None
    assert doc["items"][0]["item_name"] == item["item_name"]
    assert (doc["net_total"], doc["tax_total"], doc["total"]) == (net, tax, round(net + tax, 2))
    assert item["item_name"] in change.summary
    assert "KES" in change.summary


async def test_what_was_proposed_is_what_the_erp_writes(
    demo_erp: DemoERP, sales: ToolContext
) -> None:
    customer, item = _customer_and_item(demo_erp)
    tool: Tool = TOOLS["quotation.create"]
    assert tool.execute is not None
    change = await prepare_create(
        sales, CATALOG.entity("quotation"), _quotation(customer["name"], item["item_code"], 2)
    )
    created = await tool.execute(sales, change.payload)
    row = raw(
        demo_erp,
        'select q.party_name, q.quotation_to, q.grand_total, i.rate from "tabQuotation" q '
        'join "tabQuotation Item" i on i.parent = q.name where q.name = ?',
        created["id"],
    )[0]
    assert (row["party_name"], row["quotation_to"]) == (customer["name"], "Customer")
    assert row["rate"] == item["price_list_rate"]
    assert change.document is not None
    assert row["grand_total"] == change.document["total"]


async def test_a_customer_named_loosely_resolves_to_the_one_record(
    demo_erp: DemoERP, sales: ToolContext
) -> None:
    customer, item = _customer_and_item(demo_erp)
    loose = customer["name"].split()[0].lower()  # "acme" for "Acme Ltd"
    others = raw(
        demo_erp, 'select count(*) n from "tabCustomer" where customer_name like ?', f"%{loose}%"
    )[0]["n"]
    entity = CATALOG.entity("quotation")
    if others == 1:
        change = await prepare_create(sales, entity, _quotation(loose, item["item_code"]))
        assert change.payload["party"] == customer["name"]
    typo = customer["name"][:-1] + "x" + customer["name"][-1]  # one wrong letter
    change = await prepare_create(sales, entity, _quotation(typo, item["item_code"]))
    assert change.payload["party"] == customer["name"]


async def test_a_name_shared_by_several_customers_asks_which(
    demo_erp: DemoERP, sales: ToolContext
) -> None:
    _, item = _customer_and_item(demo_erp)
    branch = raw(demo_erp, "select branch from \"tabCustomer\" where territory = 'Nairobi'")[0]
    # Two customers whose names both contain the words the user typed, created through the ERP.
    admin = httpx.Client(base_url=demo_erp.url, timeout=15)
    admin.post("/api/method/login", json={"usr": "admin@demo.local", "pwd": "demo"})
    for name in ("Zebra Hardware Kilimani", "Zebra Hardware Westlands"):
        body = {"customer_name": name, "customer_type": "Company", "territory": "Nairobi",
                "branch": branch["branch"], "customer_group": "Wholesale"}  # fmt: skip
        reply = admin.post("/api/resource/Customer", json=body)
        assert reply.status_code in (200, 409), reply.text
    admin.close()
    with pytest.raises(NeedsChoice) as caught:
        await prepare_create(
            sales, CATALOG.entity("quotation"), _quotation("zebra hardware", item["item_code"])
        )
    labels = sorted(o["label"] for o in caught.value.options)
    assert labels == ["Zebra Hardware Kilimani", "Zebra Hardware Westlands"]
    assert {o["value"] for o in caught.value.options} == set(labels)


async def test_a_company_is_not_a_customer(demo_erp: DemoERP, sales: ToolContext) -> None:
    _, item = _customer_and_item(demo_erp)
    with pytest.raises(ToolInputError, match="No customer"):
        await prepare_create(
            sales, CATALOG.entity("quotation"), _quotation("Harbor Goods Inc", item["item_code"])
        )


async def test_an_item_by_name_resolves_to_its_code(demo_erp: DemoERP, sales: ToolContext) -> None:
    customer, item = _customer_and_item(demo_erp)
    change = await prepare_create(
        sales, CATALOG.entity("quotation"), _quotation(customer["name"], item["item_name"])
    )
    assert change.payload["items"][0]["item"] == item["item_code"]


async def test_a_line_without_a_price_asks_for_a_rate_instead_of_guessing(
    demo_erp: DemoERP, sales: ToolContext
) -> None:
    customer, _ = _customer_and_item(demo_erp)
    unpriced = raw(
        demo_erp,
        'select name from "tabItem" where name not in (select item_code from "tabItem Price" '
        "where price_list = ?) and is_sales_item = 1 limit 1",
        customer["default_price_list"],
    )
    if not unpriced:
        # Remove one price so a line has none (the ERP's data, not the code under test).
        import sqlite3

        conn = sqlite3.connect(demo_erp.path)
        code = conn.execute(
            'select item_code from "tabItem Price" where price_list = ? order by item_code desc '
            "limit 1",
            (customer["default_price_list"],),
        ).fetchone()[0]
        conn.execute(
            'update "tabItem Price" set price_list = ? where item_code = ? and price_list = ?',
            ("Standard Selling USD", code, customer["default_price_list"]),
        )
        conn.commit()
        conn.close()
    else:
        code = unpriced[0]["name"]
    with pytest.raises(ToolInputError) as caught:
        await prepare_create(sales, CATALOG.entity("quotation"), _quotation(customer["name"], code))
    assert f"No price in {customer['default_price_list']}" in str(caught.value)
    given = await prepare_create(
        sales, CATALOG.entity("quotation"), _quotation(customer["name"], code, rate=123.0)
    )
    assert given.payload["items"][0]["rate"] == 123.0


async def test_an_existing_customer_is_never_proposed_for_creation(
    demo_erp: DemoERP, sales: ToolContext
) -> None:
    customer, _ = _customer_and_item(demo_erp)
    with pytest.raises(ToolInputError, match="already exists"):
        await prepare_create(
            sales,
            CATALOG.entity("customer"),
            {"name": customer["name"].upper(), "customer_type": "Company"},
        )
