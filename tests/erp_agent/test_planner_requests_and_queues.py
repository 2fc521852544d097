"""Requests typed the way staff type them: a leave application for someone named in lower case,
"starting 11 jan" for three days (the coming January, not the one past); a quotation "for chui
stores: 10 grey office chairs"; "take-home pay … for harbor goods in october" (net pay, not
goods coming in); "how much is late at my branch" (what is overdue, not attendance); "leave
requests sitting in my queue" (what waits for this user's approval). Truth is read from the
demo ERP's REST API in its own terms (doctype, native fields, docstatus), never through the
planner's code; each test also checks that the wrong reading is absent."""

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


def _nearest(month: int, day: int) -> dt.date:
    """The day nearest the test's today, as a form's date without a year is meant."""
    days = [dt.date(TEST_TODAY.year + k, month, day) for k in (-1, 0, 1)]
    return min(days, key=lambda d: abs((d - TEST_TODAY).days))


def _working_days_from(day: dt.date, count: int) -> dt.date:
    while count > 1:
        day += dt.timedelta(days=1)
        count -= day.weekday() < 5
    return day


async def test_leave_for_someone_named_in_lower_case(runtime: Any, rest: RestERP) -> None:
    named = rest.rows("Employee", ["employee_name"], [["employee_name", "=", "Otieno Wafula"]])
    own = rest.rows("Employee", [], [["user_id", "=", "hr@demo.local"]])
    assert len(named) == 1
    assert own
    assert own[0]["name"] != named[0]["name"]
    chat = await chat_as(runtime, "hr@demo.local")
    reply = await chat.say(
        "put in a leave application for otieno wafula: 3 days annual leave starting 11 jan"
    )
    payload = block(reply, "proposal").get("payload") or {}
    start = _nearest(1, 11)
    assert payload.get("employee") == named[0]["name"], payload  # not the asker's own record
    assert payload.get("from_date") == start.isoformat(), payload
    assert payload.get("to_date") == _working_days_from(start, 3).isoformat(), payload
    assert payload.get("leave_type") == "Annual Leave", payload


async def test_a_quotation_for_a_customer_typed_before_a_colon(runtime: Any, rest: RestERP) -> None:
    customers = rest.rows("Customer", [], [["customer_name", "like", "Chui Stores%"]])
    chairs = rest.rows("Item", [], [["item_name", "=", "Grey Office Chair"]])
    assert len(customers) == 1
    assert len(chairs) == 1
    chat = await chat_as(runtime, "sales@demo.local")
    reply = await chat.say("draft a quotation for chui stores: 10 grey office chairs")
    payload = block(reply, "proposal").get("payload") or {}
    assert payload.get("party") == customers[0]["name"], payload
    lines = [(line.get("item"), line.get("qty")) for line in payload.get("items") or []]
    assert lines == [(chairs[0]["name"], 10.0)], payload


async def test_take_home_pay_of_a_company_named_before_in(runtime: Any, rest: RestERP) -> None:
    october = [str(TEST_TODAY.year) + "-10-01", str(TEST_TODAY.year) + "-10-31"]
    slips = rest.rows("Salary Slip", ["net_pay", "gross_pay"], [
        ["docstatus", "=", 1], ["company", "=", "Harbor Goods Inc"],
        ["start_date", "between", october],
    ])  # fmt: skip
    net = sum((Decimal(str(s["net_pay"])) for s in slips), Decimal())
    gross = sum((Decimal(str(s["gross_pay"])) for s in slips), Decimal())
    assert net
    assert net != gross
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("take-home pay total for harbor goods in october"))
    assert figure_present(answer, net), answer
    assert "create" not in answer.lower(), answer  # "take-home" asks nothing to be made


async def test_what_is_late_at_my_branch_and_my_queue(runtime: Any, demo_erp: Any) -> None:
    user = RestERP(demo_erp.url, "mombasa.manager@demo.local")
    rows = user.rows("Sales Invoice", ["outstanding_amount"], [
        ["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["branch", "=", "Mombasa"],
        ["due_date", "<", TEST_TODAY.isoformat()],
    ])  # fmt: skip
    user.close()
    late = sum((Decimal(str(r["outstanding_amount"])) for r in rows), Decimal())
    assert late
    chat = await chat_as(runtime, "mombasa.manager@demo.local")
    answer = text_of(await chat.say("how much is late at my branch"))
    assert figure_present(answer, late), answer
    assert "attendance" not in answer.lower(), answer

    hr = RestERP(demo_erp.url, "hr@demo.local")
    waiting = hr.rows("Leave Application", [], [
        ["docstatus", "=", 0], ["status", "=", "Open"], ["leave_approver", "=", "hr@demo.local"],
    ])  # fmt: skip
    every = hr.rows("Leave Application", [], [])
    hr.close()
    assert waiting
    assert len(every) != len(waiting)
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("leave requests sitting in my queue?"))
    assert f"{len(waiting)} documents wait" in answer, answer
    assert all(w["name"] in answer for w in waiting), answer


async def test_a_figure_word_then_the_month_before(runtime: Any, rest: RestERP) -> None:
    def net(month: int) -> Decimal:
        first = dt.date(TEST_TODAY.year, month, 1)
        last = dt.date(TEST_TODAY.year, month + 1, 1) - dt.timedelta(days=1)
        slips = rest.rows("Salary Slip", ["net_pay"], [
            ["docstatus", "=", 1], ["company", "=", "Savanna Trading Ltd"],
            ["start_date", "between", [first.isoformat(), last.isoformat()]],
        ])  # fmt: skip
        return sum((Decimal(str(s["net_pay"])) for s in slips), Decimal())

    last_month = TEST_TODAY.month - 1
    before, then = net(last_month - 1), net(last_month)
    assert before
    assert before != then
    chat = await chat_as(runtime, "hr@demo.local")
    await chat.say("gross payroll for savanna last month")
    assert figure_present(text_of(await chat.say("what about net")), then)
    answer = text_of(await chat.say("and net for the month before?"))
    assert figure_present(answer, before), answer
    assert not figure_present(answer, then), answer


async def test_do_we_have_anything_overdue_to_a_supplier(runtime: Any, demo_erp: Any) -> None:
    user = RestERP(demo_erp.url, "accounts.manager@demo.local")
    rows = user.rows("Purchase Invoice", ["outstanding_amount"], [
        ["docstatus", "=", 1], ["outstanding_amount", ">", 0],
        ["supplier", "=", "Kenya Wire & Cable Ltd"], ["due_date", "<", TEST_TODAY.isoformat()],
    ])  # fmt: skip
    user.close()
    owed = sum((Decimal(str(r["outstanding_amount"])) for r in rows), Decimal())
    assert owed
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    reply = await chat.say("do we have anything overdue to kenya wire and cable")
    answer = text_of(reply)
    assert figure_present(answer, owed), answer
    assert "Accounts Receivable" not in answer, answer  # what we owe them, not the AR report
