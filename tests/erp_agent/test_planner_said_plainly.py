"""Requests said plainly, as people type them: "apply 2 days casual leave for me, 17th and 18th
dec" (those two days), "quotation for faraja traders: 5 … + 10 …" (a document written out is
one to make), "raise PO carolina paper mills 500 silver cartons" (the party right after the
document), a purchase order "delivered to Houston Stores" (a store is no party), "grey hammers
in kisumu stores?" (what is held there), "how many annual leave days does Dennis still have?"
(which Dennis), "what's the diff between a draft and a submitted doc?" (how it works), and
"top 3 suppliers by spend, kenya books" (by supplier, the company a filter). Truth is read
from the demo ERP's REST API in its own terms, never through the planner's code."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, cents
from test_planner_conversation import block, chat_as, text_of, tools

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present
from erp_agent.planner.parse_dates import parse_comparison

pytestmark = pytest.mark.anyio


async def test_leave_applied_for_two_named_days(runtime: Any) -> None:
    chat = await chat_as(runtime, "employee@demo.local")
    response = await chat.say("apply 2 days casual leave for me, 17th and 18th dec")
    document = block(response, "proposal")["document"]
    # Mid-December is the coming one, as a form's date is meant (today is 30 November).
    assert document["leave_type"] == "Casual Leave", document
    assert (document["from_date"], document["to_date"]) == (
        dt.date(TEST_TODAY.year, 12, 17).isoformat(),
        dt.date(TEST_TODAY.year, 12, 18).isoformat(),
    ), document


async def test_a_document_written_out_is_one_to_make(runtime: Any, rest: RestERP) -> None:
    [customer] = rest.rows("Customer", [], [["customer_name", "like", "Faraja Traders%"]])
    chat = await chat_as(runtime, "mombasa.manager@demo.local")
    response = await chat.say(
        "quotation for faraja traders: 5 brown steel desks + 10 grey office chairs"
    )
    document = block(response, "proposal")["document"]
    assert document["party"] == customer["name"], document
    assert sorted(r["qty"] for r in document["items"]) == [5, 10], document


async def test_the_party_right_after_the_document_and_a_store_is_no_party(
    runtime: Any, rest: RestERP
) -> None:
    [carolina] = rest.rows("Supplier", [], [["supplier_name", "like", "Carolina Paper%"]])
    chat = await chat_as(runtime, "purchase@demo.local")
    document = block(await chat.say("raise PO carolina paper mills 500 silver cartons"),
                      "proposal")["document"]  # fmt: skip
    assert document["supplier"] == carolina["name"], document
    [ohio] = rest.rows("Supplier", [], [["supplier_name", "like", "Ohio Valley%"]])
    chat = await chat_as(runtime, "purchase.manager@demo.local")
    response = await chat.say(
        "Can you set up a purchase order with Ohio Valley Imports for 300 red brass ball "
        "valves, delivered to Houston Stores?"
    )
    assert block(response, "proposal")["document"]["supplier"] == ohio["name"]


async def test_goods_named_at_a_store_ask_what_is_held_there(runtime: Any, rest: RestERP) -> None:
    [item] = rest.rows("Item", [], [["item_name", "=", "Grey Hammer"]])
    [store] = rest.rows("Warehouse", [], [["warehouse_name", "like", "Kisumu Stores%"]])
    bins = rest.rows("Bin", ["actual_qty"], [["item_code", "=", item["name"]],
                                             ["warehouse", "=", store["name"]]])  # fmt: skip
    held = cents(sum((Decimal(str(b["actual_qty"])) for b in bins), Decimal()))
    assert held
    chat = await chat_as(runtime, "stock@demo.local")
    answer = text_of(await chat.say("grey hammers in kisumu stores?"))
    assert figure_present(answer, held), answer
    assert "warehouses" not in answer.split("\n")[0], answer  # not a count of stores


async def test_leave_left_for_a_first_name_shared_asks_which(runtime: Any, rest: RestERP) -> None:
    dennises = rest.rows("Employee", ["employee_name"], [["first_name", "=", "Dennis"]])
    assert len(dennises) > 1
    chat = await chat_as(runtime, "hr@demo.local")
    response = await chat.say("How many annual leave days does Dennis still have?")
    choices = block(response, "choices")
    offered = " ".join(str(o) for o in choices.get("options", []))
    assert all(d["employee_name"] in offered for d in dennises), choices


async def test_a_difference_between_states_is_how_it_works(runtime: Any) -> None:
    chat = await chat_as(runtime, "purchase@demo.local")
    response = await chat.say("whats the diff between a draft, a submitted and a cancelled doc?")
    assert "knowledge.search" in tools(response), tools(response)


async def test_a_company_named_by_its_books_is_a_filter_not_a_grouping(
    runtime: Any, rest: RestERP
) -> None:
    q3 = [dt.date(TEST_TODAY.year, 7, 1).isoformat(), dt.date(TEST_TODAY.year, 9, 30).isoformat()]
    rows = rest.rows("Purchase Invoice", ["supplier", "net_total"],
                     [["docstatus", "=", 1], ["company", "=", "Savanna Trading Ltd"],
                      ["posting_date", "between", q3]])  # fmt: skip
    per: dict[str, Decimal] = {}
    for r in rows:
        per[r["supplier"]] = per.get(r["supplier"], Decimal()) + Decimal(str(r["net_total"]))
    top, amount = max(per.items(), key=lambda kv: kv[1])
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("top 3 suppliers by spend, kenya books, last quarter"))
    assert top in answer, answer
    assert figure_present(answer, cents(amount)), answer


def test_the_stretch_before_is_before_the_first_period_said() -> None:
    year = TEST_TODAY.year
    q2 = parse_comparison("sales in q2 compared with the previous quarter", TEST_TODAY)
    assert q2 is not None
    assert (q2.current.start, q2.earlier.start, q2.earlier.end) == (
        dt.date(year, 4, 1), dt.date(year, 1, 1), dt.date(year, 3, 31))  # fmt: skip
    twelve = parse_comparison("paid in the last 12 months against the 12 months before", TEST_TODAY)
    assert twelve is not None
    assert twelve.earlier.end < twelve.current.start, twelve
    six = parse_comparison("the last 6 months vs the previous 6 months", TEST_TODAY)
    assert six is not None
    assert six.earlier.end < six.current.start, six
