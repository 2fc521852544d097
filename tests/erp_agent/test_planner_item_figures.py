"""An item's own figures and the words around them: how many of an item were sold (its invoice
lines, not the invoices' whole quantity), the gross profit on one item (the Gross Profit report
run by item), its valuation rate in a warehouse, how many went out on delivery notes ("Red
widgets shipped out …", a sentence's capitalised first word still part of the name), its
standard buying price ("silver cartons", then "and the dollar list?"), and "I need a material
request for …" as a request for a new document. Truth is read from the demo ERP's REST API in
its own terms (doctype, native fields, docstatus), never through the planner's code; each test
also checks that the wrong reading's figure is absent."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP
from test_planner_conversation import block, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio


def _item(rest: RestERP, name: str) -> str:
    rows = rest.rows("Item", ["item_name"], [["item_name", "=", name]])
    assert len(rows) == 1, rows
    return str(rows[0]["name"])


def _sold(rest: RestERP, item: str, since: dt.date) -> tuple[Decimal, Decimal]:
    """The item's quantity on the lines of submitted Sales Invoices since ``since``, and the
    whole quantity of those invoices (the wrong reading)."""
    invoices = rest.rows(
        "Sales Invoice",
        ["total_qty"],
        [["Sales Invoice Item", "item_code", "=", item], ["docstatus", "=", 1],
         ["posting_date", ">=", since.isoformat()]],
    )  # fmt: skip
    lines = Decimal()
    for invoice in invoices:
        doc = rest.client.get(f"/api/resource/Sales Invoice/{invoice['name']}").json()["data"]
        lines += sum(
            (Decimal(str(i["qty"])) for i in doc["items"] if i["item_code"] == item), Decimal()
        )
    whole = sum((Decimal(str(i["total_qty"])) for i in invoices), Decimal())
    return lines, whole


async def test_how_many_of_an_item_were_sold(runtime: Any, rest: RestERP) -> None:
    chair = _item(rest, "Grey Office Chair")
    lines, whole = _sold(rest, chair, TEST_TODAY.replace(day=1))
    assert lines
    assert lines != whole
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say("how many grey office chairs did we sell this month"))
    assert figure_present(answer, lines), answer
    assert not figure_present(answer, whole), answer  # the invoices' whole quantity


async def test_gross_profit_on_one_item(runtime: Any, rest: RestERP) -> None:
    widget = _item(rest, "Red Widget")
    year = TEST_TODAY.replace(month=1, day=1).isoformat()
    companies = [c["name"] for c in rest.rows("Company", [])]
    profit: list[Decimal] = []
    for company in companies:
        report = rest.report("Gross Profit", {
            "company": company, "from_date": year, "to_date": TEST_TODAY.isoformat(),
            "group_by": "Item Code", "include_returns": 1,
        })  # fmt: skip
        columns = [c["fieldname"] if isinstance(c, dict) else c for c in report["columns"]]
        for row in report["result"]:
            values = row if isinstance(row, dict) else dict(zip(columns, row, strict=False))
            if values.get("item_code") == widget:
                profit.append(Decimal(str(values["gross_profit"])))
    assert profit
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say("gross profit on red widgets this year"))
    assert "No records found" not in answer, answer
    for figure in profit:
        assert figure_present(answer, figure), answer


async def test_valuation_rate_and_what_went_out_on_delivery_notes(
    runtime: Any, rest: RestERP
) -> None:
    grinder = _item(rest, "Grey Angle Grinder")
    bins = rest.rows("Bin", ["valuation_rate", "stock_value", "actual_qty"],
                     [["item_code", "=", grinder], ["warehouse", "like", "Mombasa%"]])  # fmt: skip
    assert len(bins) == 1, bins
    chat = await chat_as(runtime, "stock@demo.local")
    answer = text_of(await chat.say("valuation rate of the grey angle grinder in mombasa stores"))
    assert figure_present(answer, Decimal(str(bins[0]["valuation_rate"]))), answer
    assert not figure_present(answer, Decimal(str(bins[0]["stock_value"]))), answer

    widget = _item(rest, "Red Widget")
    quarter = dt.date(TEST_TODAY.year, (TEST_TODAY.month - 1) // 3 * 3 + 1, 1).isoformat()
    moves = rest.rows("Stock Ledger Entry", ["actual_qty"], [
        ["item_code", "=", widget], ["voucher_type", "=", "Delivery Note"],
        ["is_cancelled", "=", 0], ["posting_date", ">=", quarter],
    ])  # fmt: skip
    shipped = sum((Decimal(str(m["actual_qty"])) for m in moves), Decimal())
    on_hand = sum(
        (Decimal(str(b["actual_qty"]))
         for b in rest.rows("Bin", ["actual_qty"], [["item_code", "=", widget]])),
        Decimal(),
    )  # fmt: skip
    assert shipped
    chat = await chat_as(runtime, "stock@demo.local")
    reply = await chat.say("Red widgets shipped out on delivery notes this quarter - how many?")
    answer = text_of(reply)
    assert figure_present(answer, abs(shipped)) or figure_present(answer, shipped), answer
    assert not figure_present(answer, on_hand), answer  # what is in stock, not what went out
    reading = "\n".join(b["markdown"] for b in reply.blocks if b["type"] == "text")
    assert widget in reading, reading  # the item, not the Widgets item group


async def test_a_list_price_of_an_item_named_with_its_packing(runtime: Any, rest: RestERP) -> None:
    carton = _item(rest, "Silver Carton")
    prices = {
        p["price_list"]: Decimal(str(p["price_list_rate"]))
        for p in rest.rows(
            "Item Price", ["price_list", "price_list_rate"], [["item_code", "=", carton]]
        )
    }
    kes, usd = prices["Standard Buying KES"], prices["Standard Buying USD"]
    chat = await chat_as(runtime, "purchase@demo.local")
    answer = text_of(await chat.say("standard buying price for silver cartons in shillings"))
    assert figure_present(answer, kes), answer
    assert "Which item" not in answer, answer  # "silver cartons" is one item, not "silver"
    answer = text_of(await chat.say("and the dollar list?"))
    assert figure_present(answer, usd), answer


async def test_i_need_a_document_is_a_request_for_one(runtime: Any, rest: RestERP) -> None:
    hammer = _item(rest, "Grey Hammer")
    nairobi = rest.rows("Warehouse", [], [["warehouse_name", "like", "Nairobi%"]])
    assert len(nairobi) == 1
    chat = await chat_as(runtime, "stock@demo.local")
    reply = await chat.say("I need a material request for 20 grey hammers for nairobi stores")
    payload = block(reply, "proposal").get("payload") or {}
    lines = payload.get("items") or []
    assert [(line.get("item"), line.get("qty")) for line in lines] == [(hammer, 20.0)], payload
    assert all(line.get("warehouse") == nairobi[0]["name"] for line in lines), payload

    chat = await chat_as(runtime, "accounts@demo.local")
    reply = await chat.say("I need a list of overdue invoices")
    assert not [b for b in reply.blocks if b.get("type") == "proposal"], text_of(reply)


def _receipt_rates(rest: RestERP, item: str, supplier: str | None = None) -> list[Decimal]:
    """The item's rate on each submitted Purchase Receipt, newest first."""
    filters: list[list[Any]] = [["Purchase Receipt Item", "item_code", "=", item],
                                ["docstatus", "=", 1]]  # fmt: skip
    if supplier:
        filters.append(["supplier", "=", supplier])
    receipts = sorted(rest.rows("Purchase Receipt", ["posting_date"], filters),
                      key=lambda r: (r["posting_date"], r["name"]), reverse=True)  # fmt: skip
    rates = []
    for receipt in receipts:
        doc = rest.client.get(f"/api/resource/Purchase Receipt/{receipt['name']}").json()["data"]
        rates += [Decimal(str(i["rate"])) for i in doc["items"] if i["item_code"] == item][:1]
    return rates


async def test_the_most_recent_rate_and_another_item_after_it(runtime: Any, rest: RestERP) -> None:
    chair = _item(rest, "Orange Office Chair")
    rates = _receipt_rates(rest, chair, "Kenya Wire & Cable Ltd")
    assert len(rates) > 1
    assert max(rates) != rates[0]  # the newest is not the highest: a ranking would differ
    chat = await chat_as(runtime, "purchase@demo.local")
    answer = text_of(await chat.say(
        "kenya wire & cable - what rate did they bill per orange office chair on the most "
        "recent receipt"
    ))  # fmt: skip
    assert figure_present(answer, rates[0]), answer
    assert not figure_present(answer, max(rates)), answer

    valve, sets = _item(rest, "Red Brass Ball Valve"), _item(rest, "Brown Screwdriver Set")
    chat = await chat_as(runtime, "purchase@demo.local")
    await chat.say("LPR on the red brass ball valve")
    reply = await chat.say("and the brown screwdriver set?")
    reading = "\n".join(b["markdown"] for b in reply.blocks if b["type"] == "text")
    assert sets in reading, reading
    assert valve not in reading, reading  # the follow-up's item replaces the first


async def test_how_much_of_an_item_is_in_a_store(runtime: Any, rest: RestERP) -> None:
    tape = _item(rest, "Orange Packing Tape")
    bins = rest.rows("Bin", ["actual_qty"],
                     [["item_code", "=", tape], ["warehouse", "like", "Nairobi%"]])  # fmt: skip
    assert len(bins) == 1
    every = sum(
        (Decimal(str(b["actual_qty"]))
         for b in rest.rows("Bin", ["actual_qty"], [["item_code", "=", tape]])),
        Decimal(),
    )  # fmt: skip
    here = Decimal(str(bins[0]["actual_qty"]))
    assert here != every
    chat = await chat_as(runtime, "stock@demo.local")
    answer = text_of(await chat.say("how much orange packing tape is in the nairobi store"))
    assert figure_present(answer, here), answer
    assert "warehouses" not in answer.split("\n")[0], answer  # not the stores counted


async def test_units_of_an_item_are_a_quantity(runtime: Any, rest: RestERP) -> None:
    widget = _item(rest, "Red Widget")
    lines, whole = _sold(rest, widget, TEST_TODAY.replace(month=1, day=1))
    assert lines
    assert lines != whole
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say("how many units of red widgets did we sell this year"))
    assert figure_present(answer, lines), answer  # not departments, not units of measure
    assert not figure_present(answer, whole), answer


def test_figures_as_of_now_are_suggested_by_what_they_are_kept_per() -> None:
    from erp_agent.catalog.loader import load_catalog
    from erp_agent.planner.nearest import answerable

    catalog = load_catalog()
    questions = answerable(catalog, {"metrics.query": {}})
    # (A label with a number in it is never suggested: it would read as a figure.)
    dated = [m for m in catalog.metrics.values() if m.date_field and not any(
        c.isdigit() for c in m.label)]  # fmt: skip
    undated = [m for m in catalog.metrics.values() if not m.date_field]
    assert dated
    assert undated
    assert all(f"{m.label} by month this year" in questions for m in dated)
    assert not any(f"{m.label} by month this year" in questions for m in undated)
    assert "Valuation rate by item" in questions
