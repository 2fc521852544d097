""" "Which items are out of stock": the stock balances (ERPNext's Bin) with nothing on hand, per
item and warehouse, not the total on hand. Truth is the demo ERP's Bin rows over REST."""

from __future__ import annotations

import json
import re

import pytest
from rest_truth import RestERP
from test_planner_conversation import Chat, block, text_of, tools

from erp_agent.catalog import load_catalog
from erp_agent.evals.score import figure_present
from erp_agent.planner.intents import understand

pytestmark = pytest.mark.anyio
USER = "stock@demo.local"


def test_a_quantity_at_nil_names_the_records_that_hold_it() -> None:
    from datetime import date

    catalog = load_catalog()
    for said in ("which items have no stock", "products that are out of stock", "stockouts?"):
        req = understand(catalog, "erpnext", said, date(2026, 11, 30))
        assert req.entity is not None, said
        assert (req.entity.name, req.nil_fields) == ("stock_balance", ["qty"]), said
    req = understand(catalog, "erpnext", "which items are in stock", date(2026, 11, 30))
    assert req.nil_fields == []


def test_only_a_quantity_is_named_at_nil() -> None:
    from erp_agent.catalog.fields import Field

    with pytest.raises(ValueError, match="only quantities"):
        Field.model_validate({"name": "status", "spec": "string", "none_named_by": ["none"]})


async def test_items_out_of_stock_are_the_bins_with_nothing_on_hand(
    chat: Chat, rest: RestERP
) -> None:
    empty = rest.rows("Bin", ["item_code", "warehouse"], [["actual_qty", "<=", 0]])
    stocked = rest.rows("Bin", ["item_code"], [["actual_qty", ">", 0]])
    assert empty
    assert stocked
    response = await chat.say("which items are out of stock?")
    assert "metrics.query" not in tools(response)
    answer = text_of(response)
    assert figure_present(answer, float(len(empty))), answer
    listed = set(re.findall(r"SKU-[\w-]+", json.dumps(block(response, "table"))))
    assert listed == {r["item_code"] for r in empty}, answer
    mombasa = [r for r in empty if r["warehouse"].startswith("Mombasa")]
    answer = text_of(await chat.say("anything out of stock in Mombasa?"))
    assert set(re.findall(r"SKU-[\w-]+", answer)) == {r["item_code"] for r in mombasa}, answer


async def test_units_delivered_out_of_a_warehouse_are_the_delivery_notes_stock_moves(
    chat: Chat, rest: RestERP
) -> None:
    from decimal import Decimal

    from conftest import TEST_TODAY

    month = [TEST_TODAY.replace(day=1).isoformat(), TEST_TODAY.isoformat()]
    rows = rest.rows(
        "Stock Ledger Entry", ["actual_qty", "item_code", "voucher_type"],
        [["is_cancelled", "=", 0], ["posting_date", "between", month],
         ["warehouse", "like", "Nakuru%"]],
    )  # fmt: skip
    unit = {i["name"]: i["stock_uom"] for i in rest.rows("Item", ["name", "stock_uom"])}
    per_unit: dict[str, Decimal] = {}
    for r in rows:
        if r["voucher_type"] == "Delivery Note":
            uom = unit[r["item_code"]]
            per_unit[uom] = per_unit.get(uom, Decimal(0)) + Decimal(str(r["actual_qty"]))
    assert per_unit
    response = await chat.say("units delivered out of Nakuru Stores this month, total?")
    answer = text_of(response)
    for value in per_unit.values():
        assert figure_present(answer, float(value)), answer


async def test_an_item_named_with_a_catalog_word_inside_is_found_whole(
    chat: Chat, rest: RestERP
) -> None:
    # "grey office chairs": "office" is a word the catalog knows, yet part of the item's name;
    # received "from suppliers" and counted is a quantity received, not the rate paid.
    from decimal import Decimal

    from conftest import TEST_TODAY

    items = rest.rows("Item", ["name"], [["item_name", "=", "Grey Office Chair"]])
    assert len(items) == 1
    first = TEST_TODAY.replace(day=1)
    last_month_end = first.fromordinal(first.toordinal() - 1)
    month = [last_month_end.replace(day=1).isoformat(), last_month_end.isoformat()]
    rows = rest.rows(
        "Stock Ledger Entry", ["actual_qty"],
        [["item_code", "=", items[0]["name"]], ["voucher_type", "=", "Purchase Receipt"],
         ["is_cancelled", "=", 0], ["posting_date", "between", month]],
    )  # fmt: skip
    received = sum((Decimal(str(r["actual_qty"])) for r in rows), Decimal(0))
    assert received
    response = await chat.say(
        "grey office chairs received from suppliers last month - how many altogether?"
    )
    answer = text_of(response)
    assert "goods_received_qty" in str(response.tools_called), answer
    assert figure_present(answer, float(received)), answer
