""" "Marketing expense for Harbor Goods last quarter", "utilities booked against the Nairobi
branch": money spent, said with an expense account's name and no figure, is what moved on
that account (the General Ledger's rows), with every other name a filter. "Booked against" is
where a posting went, not a comparison. Truth is GL Entry rows over the demo ERP's REST API."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_truth import RestERP, cents
from test_planner_conversation import Chat, query_args, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present
from erp_agent.planner.parse_dates import sets_against

pytestmark = pytest.mark.anyio
Y = TEST_TODAY.year


def _moved(rest: RestERP, filters: list[list[object]]) -> Decimal:
    rows = rest.rows("GL Entry", ["debit", "credit"], [["is_cancelled", "=", 0], *filters])
    return sum((Decimal(str(r["debit"])) - Decimal(str(r["credit"])) for r in rows), Decimal(0))


def test_booked_against_is_where_a_posting_went_not_a_comparison() -> None:
    assert not sets_against("utilities booked against the Nairobi branch this year")
    assert not sets_against("which invoice did we raise against Acme's PO PO-72525")
    assert sets_against("revenue this month against last month")


async def test_an_expense_accounts_name_is_what_moved_on_it(chat: Chat, rest: RestERP) -> None:
    quarter = [f"{Y}-07-01", f"{Y}-09-30"]
    harbor = _moved(
        rest, [["account", "=", "Marketing - HG"], ["posting_date", "between", quarter]]
    )
    savanna = _moved(
        rest, [["account", "=", "Marketing - ST"], ["posting_date", "between", quarter]]
    )
    assert harbor
    assert savanna
    response = await chat.say("marketing expense for Harbor Goods in Q3 please")
    args = query_args(response)
    assert args["metric"] == "ledger_net_movement"
    answer = text_of(response)
    assert figure_present(answer, float(cents(harbor))), answer
    assert not figure_present(answer, float(cents(savanna))), answer


async def test_every_other_name_said_filters_the_figure(chat: Chat, rest: RestERP) -> None:
    year = [f"{Y}-01-01", f"{Y}-12-31"]
    rows = rest.rows("GL Entry", ["branch"], [["account", "=", "Rent - ST"], ["is_cancelled", "=", 0],
                                             ["posting_date", "between", year]])  # fmt: skip
    branch = rows[0]["branch"]
    in_branch = _moved(rest, [["account", "=", "Rent - ST"], ["branch", "=", branch],
                              ["posting_date", "between", year]])  # fmt: skip
    response = await chat.say(f"rent booked against the {branch} branch this year, total?")
    args = query_args(response)
    assert {"dimension": "branch", "op": "=", "value": branch} in args["filters"]
    assert "compare_period" not in args
    assert figure_present(text_of(response), float(cents(in_branch))), text_of(response)
