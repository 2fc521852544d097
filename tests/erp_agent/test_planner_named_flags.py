"""Records people call by their own name: "credit notes" are the Sales Invoices with is_return
set, "excluding credit notes" leaves them out, and "net of credit notes" is a figure that nets
them, never a figure of them. Truth is read from the demo ERP's REST API (Sales Invoice,
is_return, docstatus), never through the planner's code."""

from __future__ import annotations

import re

import pytest
from rest_truth import RestERP, cents, sums
from test_planner_conversation import Chat, query_args, text_of, tools

from conftest import TEST_TODAY
from erp_agent.catalog import load_catalog
from erp_agent.evals.score import figure_present
from erp_agent.planner.intents import understand

pytestmark = pytest.mark.anyio
LAST_YEAR = [f"{TEST_TODAY.year - 1}-01-01", f"{TEST_TODAY.year - 1}-12-31"]


@pytest.mark.parametrize(
    ("said", "flag"),
    [
        ("credit notes this year", True),
        ("list our credit memos", True),
        ("sales invoices in november excluding credit notes", False),
        ("revenue last year net of credit notes", False),
        ("invoices without any credit notes", False),
        ("sales invoices this month", None),
    ],
)
def test_the_name_of_a_kind_of_record_sets_its_flag(said: str, flag: bool | None) -> None:
    req = understand(load_catalog(), "erpnext", said, TEST_TODAY)
    assert req.entity is not None, said
    assert req.entity.name == "sales_invoice", said
    assert req.flags.get("is_return") is flag, (said, req.flags)


def test_a_phrase_names_only_a_yes_no_field() -> None:
    from erp_agent.catalog.fields import Field

    with pytest.raises(ValueError, match="only boolean fields"):
        Field.model_validate({"name": "status", "spec": "enum(A|B)", "named_by": ["a kind"]})


async def test_credit_notes_listed_are_the_returns_and_only_they(chat: Chat, rest: RestERP) -> None:
    notes = rest.rows(
        "Sales Invoice", ["name"],
        [["docstatus", "=", 1], ["is_return", "=", 1], ["posting_date", "between", LAST_YEAR]],
    )  # fmt: skip
    invoices = rest.rows(
        "Sales Invoice", ["name"],
        [["docstatus", "=", 1], ["is_return", "=", 0], ["posting_date", "between", LAST_YEAR]],
    )  # fmt: skip
    assert notes
    assert invoices
    answer = text_of(await chat.say("show me the credit notes from last year"))
    listed = set(re.findall(r"ACC-SINV-[\w-]+", answer))
    assert listed == {r["name"] for r in notes}, answer
    count = text_of(await chat.say("how many credit notes were issued last year?"))
    assert figure_present(count, float(len(notes))), count
    assert not figure_present(count, float(len(invoices))), count


async def test_net_of_credit_notes_is_the_figure_that_nets_them(chat: Chat, rest: RestERP) -> None:
    currency = {
        c["name"]: c["default_currency"] for c in rest.rows("Company", ["name", "default_currency"])
    }
    rows = rest.rows(
        "Sales Invoice", ["base_net_total", "is_return", "company"],
        [["docstatus", "=", 1], ["posting_date", "between", LAST_YEAR]],
    )  # fmt: skip
    of_returns = [r for r in rows if r["is_return"]]
    assert of_returns
    company = of_returns[0]["company"]  # the company-currency figure the notes belong to
    netted = cents(
        sums([r for r in rows if r["company"] == company], lambda r: 1, "base_net_total")[1]
    )
    returns = cents(
        sums([r for r in of_returns if r["company"] == company], lambda r: 1, "base_net_total")[1]
    )
    assert returns < 0
    assert currency[company]
    response = await chat.say("what was revenue last year net of credit notes")
    assert "metrics.query" in tools(response)
    assert query_args(response)["metric"] == "revenue"
    answer = text_of(response)
    assert figure_present(answer, float(netted)), answer
    assert not figure_present(answer, float(returns)), answer


async def test_invoices_excluding_credit_notes_leave_them_out(chat: Chat, rest: RestERP) -> None:
    november = [f"{TEST_TODAY.year}-11-01", f"{TEST_TODAY.year}-11-30"]
    kept = rest.rows(
        "Sales Invoice", ["name"],
        [["docstatus", "=", 1], ["is_return", "=", 0], ["posting_date", "between", november]],
    )  # fmt: skip
    assert kept
    response = await chat.say("how many sales invoices in november, excluding credit notes?")
    assert figure_present(text_of(response), float(len(kept))), text_of(response)


async def test_a_credit_note_raised_against_an_invoice_is_found_by_its_link(
    chat: Chat, rest: RestERP
) -> None:
    notes = rest.rows(
        "Sales Invoice", ["name", "return_against"],
        [["docstatus", "=", 1], ["is_return", "=", 1], ["return_against", "is", "set"]],
    )  # fmt: skip
    assert notes
    original = notes[0]["return_against"]
    against = {r["name"] for r in notes if r["return_against"] == original}
    answer = text_of(await chat.say(f"Was a credit note ever raised against {original}? Which?"))
    assert set(re.findall(r"ACC-SINV-[\w-]+", answer)) - {original} == against, answer
