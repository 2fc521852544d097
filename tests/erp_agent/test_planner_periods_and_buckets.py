"""Periods, buckets and second figures as people say them: "q3 this year against q3 last year"
(the two third quarters, not the years to date); "this quarter with last quarter" after
"compare"; "this year vs all of last year" (the whole of it); "split into 30 days or less, and
older than that" (two ageing buckets of what is past due); "anything more than 60 days late"
(overdue, not attendance); "and what did that come to?" after a count (the same invoices'
net total); "payroll YTD, gross and net" (both figures); "whats it worth" after a question
about one document (its grand total). Truth is read from the demo ERP's REST API in its own
terms (doctype, native fields, docstatus), never through the planner's code; each test also
checks that the wrong reading's figure is absent."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, cents
from test_planner_conversation import chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio

_YEAR = TEST_TODAY.year


def _sum(rest: RestERP, doctype: str, field: str, filters: list[list[Any]]) -> Decimal:
    rows = rest.rows(doctype, [field], [["docstatus", "=", 1], *filters])
    return cents(sum((Decimal(str(r[field] or 0)) for r in rows), Decimal()))


def _between(start: dt.date, end: dt.date) -> list[Any]:
    return ["posting_date", "between", [start.isoformat(), end.isoformat()]]


async def test_a_quarter_this_year_against_the_same_quarter_last_year(
    runtime: Any, rest: RestERP
) -> None:
    savanna = ["company", "=", "Savanna Trading Ltd"]
    q3 = _sum(rest, "Sales Invoice", "net_total",
              [savanna, _between(dt.date(_YEAR, 7, 1), dt.date(_YEAR, 9, 30))])  # fmt: skip
    q3_before = _sum(rest, "Sales Invoice", "net_total",
                     [savanna, _between(dt.date(_YEAR - 1, 7, 1), dt.date(_YEAR - 1, 9, 30))])  # fmt: skip
    to_date = _sum(rest, "Sales Invoice", "net_total",
                   [savanna, _between(dt.date(_YEAR, 1, 1), TEST_TODAY)])  # fmt: skip
    assert q3
    assert q3_before
    assert to_date != q3
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("q3 this year against q3 last year, savanna sales, quick one"))
    assert figure_present(answer, q3), answer
    assert figure_present(answer, q3_before), answer
    assert not figure_present(answer, to_date), answer  # not the years to date


async def test_compare_this_quarter_with_last_quarter(runtime: Any, rest: RestERP) -> None:
    savanna = ["company", "=", "Savanna Trading Ltd"]  # all the accounts user sees
    this_q = _sum(rest, "Sales Invoice", "net_total",
                  [savanna, _between(dt.date(_YEAR, 10, 1), TEST_TODAY)])  # fmt: skip
    last_q = _sum(rest, "Sales Invoice", "net_total",
                  [savanna, _between(dt.date(_YEAR, 7, 1), dt.date(_YEAR, 9, 30))])  # fmt: skip
    to_date = _sum(rest, "Sales Invoice", "net_total",
                   [savanna, _between(dt.date(_YEAR, 1, 1), TEST_TODAY)])  # fmt: skip
    assert this_q
    assert last_q
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(await chat.say("compare our sales this quarter with last quarter"))
    assert figure_present(answer, this_q), answer
    assert figure_present(answer, last_q), answer  # the whole of last quarter is offered
    assert not figure_present(answer, to_date), answer


async def test_this_year_against_all_of_last_year(runtime: Any, rest: RestERP) -> None:
    acme = ["customer", "=", "Acme Ltd"]
    this_year = _sum(rest, "Sales Invoice", "net_total",
                     [acme, _between(dt.date(_YEAR, 1, 1), TEST_TODAY)])  # fmt: skip
    whole = _sum(rest, "Sales Invoice", "net_total",
                 [acme, _between(dt.date(_YEAR - 1, 1, 1), dt.date(_YEAR - 1, 12, 31))])  # fmt: skip
    same_days = _sum(rest, "Sales Invoice", "net_total",
                     [acme, _between(dt.date(_YEAR - 1, 1, 1), TEST_TODAY.replace(year=_YEAR - 1))])  # fmt: skip
    assert whole != same_days
    chat = await chat_as(runtime, "sales@demo.local")
    answer = text_of(await chat.say("acme - this year vs all of last year, r they buying more?"))
    assert figure_present(answer, this_year), answer
    assert figure_present(answer, whole), answer
    assert not figure_present(answer, same_days), answer


async def test_two_ageing_buckets_said_in_words(runtime: Any, rest: RestERP) -> None:
    today = TEST_TODAY
    owed: list[list[Any]] = [
        ["company", "=", "Savanna Trading Ltd"],
        ["outstanding_amount", ">", 0],
    ]
    young = _sum(rest, "Purchase Invoice", "outstanding_amount", [*owed, [
        "due_date", "between",
        [(today - dt.timedelta(days=30)).isoformat(), (today - dt.timedelta(days=1)).isoformat()],
    ]])  # fmt: skip
    old = _sum(rest, "Purchase Invoice", "outstanding_amount",
               [*owed, ["due_date", "<", (today - dt.timedelta(days=30)).isoformat()]])  # fmt: skip
    everything = _sum(rest, "Purchase Invoice", "outstanding_amount", owed)
    assert young
    assert old
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(await chat.say(
        "our payables that are past due - split into 30 days or less, and older than that, pls"
    ))  # fmt: skip
    assert figure_present(answer, young), answer
    assert figure_present(answer, old), answer
    assert not figure_present(answer, everything), answer  # not the whole report


async def test_days_late_is_overdue(runtime: Any, rest: RestERP) -> None:
    cutoff = (TEST_TODAY - dt.timedelta(days=60)).isoformat()
    late = rest.rows("Sales Invoice", ["outstanding_amount"], [
        ["docstatus", "=", 1], ["customer", "=", "Northgate Builders Inc"],
        ["outstanding_amount", ">", 0], ["due_date", "<", cutoff],
    ])  # fmt: skip
    assert late
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("northgate builders - anything more than 60 days late?"))
    assert "attendance" not in answer.lower(), answer
    for row in late:
        assert row["name"] in answer, answer


async def test_a_count_then_what_it_came_to(runtime: Any, rest: RestERP) -> None:
    filters = [["customer", "=", "Gulf Traders"], _between(dt.date(_YEAR, 1, 1), TEST_TODAY)]
    net = _sum(rest, "Sales Invoice", "net_total", filters)
    gross = _sum(rest, "Sales Invoice", "grand_total", filters)
    assert net != gross
    chat = await chat_as(runtime, "mombasa.manager@demo.local")
    await chat.say("how many times have we invoiced gulf traders this year")
    answer = text_of(await chat.say("and what did that come to?"))
    assert figure_present(answer, net), answer
    assert not figure_present(answer, gross), answer  # before tax, as sales are said


async def test_gross_and_net_payroll(runtime: Any, rest: RestERP) -> None:
    filters: list[list[Any]] = [
        ["company", "=", "Harbor Goods Inc"],
        ["start_date", "between", [f"{_YEAR}-01-01", TEST_TODAY.isoformat()]],
    ]
    gross = _sum(rest, "Salary Slip", "gross_pay", filters)
    net = _sum(rest, "Salary Slip", "net_pay", filters)
    assert gross != net
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("harbor goods payroll YTD, gross and net"))
    assert figure_present(answer, gross), answer
    assert figure_present(answer, net), answer


async def test_what_a_document_asked_about_is_worth(runtime: Any, rest: RestERP) -> None:
    orders = rest.rows("Purchase Order", ["grand_total", "workflow_state"],
                       [["docstatus", "=", 1], ["workflow_state", "=", "Approved"]])  # fmt: skip
    assert orders
    order = orders[0]
    chat = await chat_as(runtime, "purchase.manager@demo.local")
    await chat.say(f"has {order['name']} been approved?")
    answer = text_of(await chat.say("whats it worth"))
    assert order["name"] in answer, answer
    assert figure_present(answer, cents(order["grand_total"])), answer
