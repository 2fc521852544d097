"""Choices and rates as people say them: "the electricals one" picks the option whose own words
those are (a reply of words every option has picks none); "and the plastics one?" after a choice
asks the same of another option; "what about otieno?" after choosing between two Brians is the
Brian Otieno offered then, not a new question among every Otieno; "and what about overdue?" and
"how much of that is overdue?" after a party's balance are the overdue part of it; "who sells us
black ball valves cheapest" is each supplier's latest receipt rate side by side; "anything
running low in the mombasa store" is what is below its reorder level. Truth is read from the
demo ERP's REST API in its own terms (doctype, native fields, docstatus), never through the
planner's code; each test also checks that the wrong reading is absent."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, cents
from test_planner_conversation import block, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present
from erp_agent.planner.followup import match_choice

pytestmark = pytest.mark.anyio

_ATHI = [
    {"label": "Athi River Plastics Limited", "value": "Athi River Plastics Limited"},
    {"label": "Athi River Electricals Ltd", "value": "Athi River Electricals Ltd"},
]


def test_a_reply_picks_the_option_its_own_words_name() -> None:
    assert match_choice("the electricals one", _ATHI) == "Athi River Electricals Ltd"
    assert match_choice("the electrical one pls", _ATHI) == "Athi River Electricals Ltd"
    assert match_choice("plastics", _ATHI) == "Athi River Plastics Limited"
    # Words every option has choose none of them, never the first by chance.
    assert match_choice("athi river", _ATHI) is None
    assert match_choice("the river one", _ATHI) is None
    assert match_choice("2", _ATHI) == "Athi River Electricals Ltd"


def _owed(rest: RestERP, supplier: str, *, overdue: bool) -> Decimal:
    filters: list[list[Any]] = [
        ["docstatus", "=", 1], ["supplier", "=", supplier], ["outstanding_amount", "!=", 0],
    ]  # fmt: skip
    if overdue:
        filters.append(["due_date", "<", TEST_TODAY.isoformat()])
    rows = rest.rows("Purchase Invoice", ["outstanding_amount"], filters)
    return sum((Decimal(str(r["outstanding_amount"])) for r in rows), Decimal())


async def test_another_option_then_its_overdue_part(runtime: Any, rest: RestERP) -> None:
    plastics = _owed(rest, "Athi River Plastics Limited", overdue=False)
    electricals = _owed(rest, "Athi River Electricals Ltd", overdue=False)
    late = _owed(rest, "Athi River Plastics Limited", overdue=True)
    assert plastics
    assert electricals
    assert plastics != electricals
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    asked = await chat.say("whats the balance on athi river")
    assert block(asked, "choices")
    first = text_of(await chat.say("the electricals one"))
    assert figure_present(first, cents(electricals)), first
    other = text_of(await chat.say("and the plastics one?"))
    assert figure_present(other, cents(plastics)), other
    assert not figure_present(other, cents(electricals)), other
    part = text_of(await chat.say("and what about overdue?"))
    assert "overdue" in part.lower(), part
    assert figure_present(part, cents(late)), part


async def test_the_overdue_part_of_what_we_owe(runtime: Any, rest: RestERP) -> None:
    supplier = "Industrial Area Plastics Ltd"
    total, overdue = _owed(rest, supplier, overdue=False), _owed(rest, supplier, overdue=True)
    everyone = rest.rows(
        "Sales Invoice", ["outstanding_amount"],
        [["docstatus", "=", 1], ["due_date", "<", TEST_TODAY.isoformat()],
         ["outstanding_amount", "!=", 0]],
    )  # fmt: skip
    assert overdue
    assert everyone
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    first = text_of(await chat.say("how much do we owe industrial area plastics"))
    assert figure_present(first, cents(total)), first
    part = text_of(await chat.say("how much of that is overdue?"))
    assert figure_present(part, cents(overdue)), part  # theirs, not every customer's
    assert supplier in part, part
    assert "receivables" not in part.lower(), part


async def test_a_name_offered_before_is_the_one_meant(runtime: Any, rest: RestERP) -> None:
    brians = rest.rows("Employee", ["employee_name"], [["employee_name", "like", "Brian %"]])
    otienos = rest.rows("Employee", ["employee_name"], [["employee_name", "like", "%Otieno%"]])
    brian_otieno = [r["name"] for r in brians if r["employee_name"] == "Brian Otieno"]
    assert len(brians) >= 2
    assert len(otienos) >= 2  # "otieno" alone is ambiguous
    assert len(brian_otieno) == 1
    chat = await chat_as(runtime, "hr@demo.local")
    assert block(await chat.say("how much annual leave has brian got left"), "choices")
    await chat.say("cheruiyot pls")
    reply = await chat.say("what about otieno")
    assert not [b for b in reply.blocks if b["type"] == "choices"], reply.blocks
    said = "\n".join(b["markdown"] for b in reply.blocks if b["type"] == "text")
    assert brian_otieno[0] in said, said
    assert all(r["name"] not in said for r in otienos if r["name"] != brian_otieno[0]), said


async def test_who_sells_an_item_cheapest(runtime: Any, rest: RestERP) -> None:
    item = rest.rows("Item", [], [["item_name", "=", "Black Brass Ball Valve"]])
    assert len(item) == 1
    code = item[0]["name"]
    receipts = rest.rows(
        "Purchase Receipt", ["supplier", "posting_date", "status"],
        [["docstatus", "=", 1], ["Purchase Receipt Item", "item_code", "=", code]],
    )  # fmt: skip
    latest: dict[str, dict[str, Any]] = {}
    for r in sorted(receipts, key=lambda r: (str(r["posting_date"]), r["name"])):
        if r.get("status") != "Return":
            latest[r["supplier"]] = r
    assert len(latest) >= 2  # more than one supplier to compare
    rates = {}
    for supplier, r in latest.items():
        doc = rest.client.get(f"/api/resource/Purchase Receipt/{r['name']}").json()["data"]
        rates[supplier] = next(line["rate"] for line in doc["items"] if line["item_code"] == code)
    chat = await chat_as(runtime, "purchase@demo.local")
    answer = text_of(await chat.say("who sells us black ball valves cheapest"))
    for supplier, rate in rates.items():
        assert supplier in answer, answer
        assert figure_present(answer, cents(rate)), (supplier, rate, answer)
    assert "Sales Invoice" not in answer, answer  # buying from them, not selling


async def test_anything_running_low_in_a_store(runtime: Any, rest: RestERP) -> None:
    bins = rest.rows(
        "Bin", ["item_code", "projected_qty"], [["warehouse", "=", "Mombasa Stores - ST"]]
    )
    levels = {
        r["name"]: Decimal(str(r["reorder_level"] or 0))
        for r in rest.rows("Item", ["reorder_level"])
    }
    low = [b for b in bins if levels.get(b["item_code"], 0) > 0 and
           Decimal(str(b["projected_qty"])) < levels[b["item_code"]]]  # fmt: skip
    assert low
    chat = await chat_as(runtime, "stock@demo.local")
    answer = text_of(await chat.say("anything running low in mombasa store?"))
    assert "reorder" in answer.lower(), answer
    assert figure_present(answer, len(low)), answer
    assert "warehouses for" not in answer, answer  # not a list of the warehouses themselves
