"""Names said the short way: "lake" for the customers whose names start with it (asked back
which, then answered for the one picked), and an account by its whole name with its company's
code ("Sales - ST"), though its first word is one of ours. Truth is read from the demo ERP's
REST API in its own terms (doctype, native fields, docstatus), never through the planner's code;
each test also checks that the wrong reading's figure is absent."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP
from test_planner_conversation import block, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio


def _net(rest: RestERP, filters: list[list[Any]]) -> Decimal:
    year = [f"{TEST_TODAY.year}-01-01", f"{TEST_TODAY.year}-12-31"]
    rows = rest.rows("Sales Invoice", ["base_net_total"],
                     [["docstatus", "=", 1], ["posting_date", "between", year], *filters])  # fmt: skip
    return sum((Decimal(str(r["base_net_total"])) for r in rows), Decimal())


async def test_a_name_said_by_its_start_is_asked_back(runtime: Any, rest: RestERP) -> None:
    lake = sorted(
        c["name"]
        for c in rest.rows("Customer", ["customer_name"])
        if any(w.lower().startswith("lake") for w in re.findall(r"\w+", c["customer_name"]))
    )
    assert len(lake) >= 2, lake
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    reply = await chat.say("what did lake buy from us this year?")
    options = sorted(o["label"] for o in block(reply, "choices")["options"])
    assert options == lake, options
    everyone = _net(rest, [])
    answer = text_of(await chat.say(lake[0]))
    assert figure_present(answer, _net(rest, [["customer", "=", lake[0]]])), answer
    assert not figure_present(answer, everyone), answer  # "lake" is no filler word


async def test_an_account_named_with_its_company_code(runtime: Any, rest: RestERP) -> None:
    october = [f"{TEST_TODAY.year}-10-01", f"{TEST_TODAY.year}-10-31"]
    rows = rest.rows("GL Entry", ["account", "credit"],
                     [["is_cancelled", "=", 0], ["posting_date", "between", october]])  # fmt: skip
    sales = sum(
        (Decimal(str(r["credit"])) for r in rows if r["account"] == "Sales - ST"), Decimal()
    )
    every = sum((Decimal(str(r["credit"])) for r in rows), Decimal())
    assert sales
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("total credits on Sales - ST in october"))
    assert figure_present(answer, sales), answer
    assert not figure_present(answer, every), answer


async def test_a_lowercase_full_name_then_another_leave_type(runtime: Any, rest: RestERP) -> None:
    staff = rest.rows("Employee", ["company"], [["employee_name", "=", "Dennis Maina"]])
    others = rest.rows("Employee", [], [["employee_name", "like", "Dennis %"]])
    assert len(staff) == 1
    assert len(others) > 1  # "dennis" alone would be asked back
    report = rest.report("Employee Leave Balance", {
        "from_date": f"{TEST_TODAY.year}-01-01", "to_date": f"{TEST_TODAY.year}-12-31",
        "company": staff[0]["company"], "employee": staff[0]["name"],
    })  # fmt: skip
    left = {r["leave_type"]: Decimal(str(r["closing_balance"])) for r in report["result"]}
    assert left["Annual Leave"] != left["Casual Leave"]
    chat = await chat_as(runtime, "hr@demo.local")
    reply = await chat.say("how many annual leave days does dennis maina have left?")
    assert not [b for b in reply.blocks if b["type"] == "choices"], text_of(reply)
    assert figure_present(text_of(reply), left["Annual Leave"]), text_of(reply)
    reply = await chat.say("and casual?")
    reading = "\n".join(b["markdown"] for b in reply.blocks if b["type"] == "text")
    assert "Casual Leave" in reading, reading
    assert figure_present(text_of(reply), left["Casual Leave"]), reading
