"""Follow-ups that set the last period against another, rank every group, or keep only the
unpaid ones; and readings that must not change what was asked (how-to questions in a second
sentence, "with last quarter" as whom money went to, a currency named in words, a status
denied with "without"). Figures are checked against the demo ERP's REST API (native doctypes,
docstatus), never through the planner."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from rest_truth import RestERP, cents, sums
from test_planner_conversation import Chat, query_args, text_of

from conftest import TEST_TODAY
from erp_agent.catalog import load_catalog
from erp_agent.evals.score import figure_present
from erp_agent.planner.intents import understand
from erp_agent.planner.parse_dates import compared_in
from erp_agent.planner.reading import Kind, Request

pytestmark = pytest.mark.anyio
Y = TEST_TODAY.year


def _read(said: str) -> Request:
    return understand(load_catalog(), "erpnext", said, TEST_TODAY)


def test_versus_with_no_period_of_its_own_sets_the_last_period_against_the_other() -> None:
    said = "revenue for Q3 ; only Mombasa ; vs the same quarter last year?"
    compared = compared_in(said, TEST_TODAY)
    assert compared is not None
    assert (compared.current.start, compared.current.end) == (dt.date(Y, 7, 1), dt.date(Y, 9, 30))
    assert (compared.earlier.start, compared.earlier.end) == (
        dt.date(Y - 1, 7, 1),
        dt.date(Y - 1, 9, 30),
    )


@pytest.mark.parametrize(
    "said",
    [
        "I submitted a sales invoice with the wrong rate on it. How do I correct it now?",
        "whats the right way to move stock from one warehouse to another?",
        "What should we do before closing the month, and how do we stop people posting into it?",
        "the customer returned goods on a paid invoice - do I cancel it or raise a credit note?",
    ],
)
def test_a_how_to_anywhere_in_the_message_is_a_process_question(said: str) -> None:
    assert _read(said).kind == Kind.KNOWLEDGE


def test_with_last_quarter_is_whom_money_went_to_not_a_comparison() -> None:
    req = _read("which 3 suppliers did we spend the most with last quarter?")
    assert req.kind != Kind.TREND
    assert req.period is not None
    assert req.period.start == dt.date(Y, 7, 1)
    assert req.top == 3


def test_a_currency_in_words_and_a_status_denied_with_without() -> None:
    req = _read("List the five biggest unpaid invoices in shillings")
    assert req.currency == "KES"
    assert all("shilling" not in v.lower() for _, v in req.names)
    bills = _read("which supplier bills have gone past their due date without being paid?")
    assert "Paid" not in bills.statuses


async def test_vs_the_same_quarter_last_year_after_a_quarter(chat: Chat, rest: RestERP) -> None:
    def revenue(start: str, end: str) -> dict[str, Decimal]:
        rows = rest.rows(
            "Sales Invoice", ["base_net_total", "company"],
            [["docstatus", "=", 1], ["posting_date", "between", [start, end]]],
        )  # fmt: skip
        return sums(rows, lambda r: r["company"], "base_net_total")

    now, then = revenue(f"{Y}-07-01", f"{Y}-09-30"), revenue(f"{Y - 1}-07-01", f"{Y - 1}-09-30")
    await chat.say("revenue for Q3?")
    response = await chat.say("vs the same quarter last year?")
    args = query_args(response)
    assert args["period"] == {"from": f"{Y}-07-01", "to": f"{Y}-09-30"}
    assert args["compare_period"] == {"from": f"{Y - 1}-07-01", "to": f"{Y - 1}-09-30"}
    answer = text_of(response)
    for figures in (now, then):
        for value in figures.values():
            assert figure_present(answer, float(cents(value))), answer


async def test_rank_all_after_the_top_one_shows_every_group(chat: Chat, rest: RestERP) -> None:
    october = [f"{Y}-10-01", f"{Y}-10-31"]
    rows = rest.rows(
        "Sales Invoice", ["base_net_total", "branch", "company"],
        [["docstatus", "=", 1], ["posting_date", "between", october],
         ["company", "=", "Savanna Trading Ltd"]],
    )  # fmt: skip
    per_branch = sums(rows, lambda r: r["branch"], "base_net_total")
    assert len(per_branch) >= 3
    await chat.say("which branch sold the most last month for Savanna Trading?")
    response = await chat.say(f"rank all {len(per_branch)} for me")
    answer = text_of(response)
    for branch, value in per_branch.items():
        assert branch in answer, answer
        assert figure_present(answer, float(cents(value))), answer


async def test_how_many_of_those_are_not_fully_paid(chat: Chat, rest: RestERP) -> None:
    october = [f"{Y}-10-01", f"{Y}-10-31"]
    every = rest.rows("Sales Invoice", ["name"],
                      [["docstatus", "=", 1], ["posting_date", "between", october]])  # fmt: skip
    owed = rest.rows(
        "Sales Invoice", ["name"],
        [["docstatus", "=", 1], ["posting_date", "between", october],
         ["outstanding_amount", ">", 0]],
    )  # fmt: skip
    assert 0 < len(owed) < len(every)
    await chat.say("How many sales invoices did we raise last month?")
    answer = text_of(await chat.say("how many of those are still not fully paid?"))
    assert figure_present(answer, float(len(owed))), answer
    assert not figure_present(answer, float(len(every))), answer
