"""What people say before the question ("remind me…", "just wondering, …", "can you
confirm…") is neither a record's name nor a follow-up: the question after it is answered as
if asked alone. Truth comes from the demo ERP's REST API (native doctypes, docstatus)."""

from __future__ import annotations

import pytest
from rest_truth import RestERP, cents, sums
from test_planner_conversation import Chat, query_args, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio
OCTOBER = [f"{TEST_TODAY.year}-10-01", f"{TEST_TODAY.year}-10-31"]


@pytest.mark.parametrize(
    "said",
    [
        "just wondering, what was our revenue last month",
        "quick one: can you confirm our revenue last month?",
        "remind me what our revenue was last month",
    ],
)
async def test_an_opener_before_the_question_is_not_part_of_it(
    chat: Chat, rest: RestERP, said: str
) -> None:
    rows = rest.rows(
        "Sales Invoice", ["base_net_total", "company"],
        [["docstatus", "=", 1], ["posting_date", "between", OCTOBER]],
    )  # fmt: skip
    per_company = sums(rows, lambda r: r["company"], "base_net_total")
    assert per_company
    response = await chat.say(said)
    args = query_args(response)
    assert args["metric"] == "revenue", said
    assert args["period"] == {"from": OCTOBER[0], "to": OCTOBER[1]}, said
    answer = text_of(response)
    for value in per_company.values():
        assert figure_present(answer, float(cents(value))), answer


async def test_remind_me_is_not_a_name_looked_up(chat: Chat, rest: RestERP) -> None:
    items = rest.rows("Item", ["name"], [["item_name", "like", "%Grey Hammer%"]])
    assert len(items) == 1
    response = await chat.say("remind me what we last paid for grey hammers")
    args = query_args(response)
    assert args["metric"] == "last_purchase_rate"
    assert {"dimension": "item", "op": "=", "value": items[0]["name"]} in args["filters"]
    assert "remind" not in text_of(response).lower()
