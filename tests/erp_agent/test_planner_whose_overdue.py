"""Whose records an owed-money question is about, and which figure it asks: "overdue payables"
and "unpaid bills" are what we owe suppliers (a status word such as "overdue" says no side, the
records' own name does), "overdue receivables" named by the figure's own label is that figure
(not every company's Accounts Receivable report), and "which customers owe us money past the
due date" is what is overdue per customer (a status the report cannot filter by). Truth is read
from the demo ERP's REST API in its own terms (doctype, native fields, docstatus), never
through the planner's code; each test also checks that the other side's figure is absent."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, cents
from test_planner_conversation import chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio

_OVERDUE = [["docstatus", "=", 1], ["is_return", "=", 0], ["outstanding_amount", ">", 0],
            ["due_date", "<", TEST_TODAY.isoformat()]]  # fmt: skip


def _overdue(rest: RestERP, doctype: str, *filters: list[Any]) -> dict[str, Decimal]:
    """What is overdue on submitted invoices, per currency."""
    rows = rest.rows(doctype, ["outstanding_amount", "currency"], [*_OVERDUE, *filters])
    out: dict[str, Decimal] = {}
    for r in rows:
        out[r["currency"]] = out.get(r["currency"], Decimal()) + Decimal(
            str(r["outstanding_amount"])
        )
    return {c: cents(v) for c, v in out.items()}


@pytest.mark.parametrize("question", ["overdue payables", "unpaid bills that are overdue"])
async def test_overdue_payables_are_what_we_owe_suppliers(
    runtime: Any, rest: RestERP, question: str
) -> None:
    payables = _overdue(rest, "Purchase Invoice")
    receivables = _overdue(rest, "Sales Invoice")
    assert payables["KES"]
    assert receivables["KES"]
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say(question))
    assert figure_present(answer, payables["KES"]), answer
    assert not figure_present(answer, receivables["KES"]), answer


async def test_overdue_receivables_named_outright_are_one_figure(
    runtime: Any, rest: RestERP
) -> None:
    receivables = _overdue(rest, "Sales Invoice")
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("overdue receivables"))
    for currency, amount in receivables.items():
        assert figure_present(answer, amount), (currency, answer)


async def test_which_customers_owe_past_the_due_date_is_overdue_per_customer(
    runtime: Any, rest: RestERP
) -> None:
    savanna = ["company", "=", "Savanna Trading Ltd"]  # all the accounts user sees
    rows = rest.rows("Sales Invoice", ["customer", "outstanding_amount"], [*_OVERDUE, savanna])
    per: dict[str, Decimal] = {}
    for r in rows:
        per[r["customer"]] = per.get(r["customer"], Decimal()) + Decimal(
            str(r["outstanding_amount"])
        )
    top, amount = max(per.items(), key=lambda kv: kv[1])
    everything = rest.rows("Sales Invoice", ["outstanding_amount"],
                           [["docstatus", "=", 1], ["outstanding_amount", ">", 0], savanna])  # fmt: skip
    owed = cents(sum((Decimal(str(r["outstanding_amount"])) for r in everything), Decimal()))
    assert owed != cents(sum(per.values(), Decimal()))  # some of it is not yet due
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(await chat.say("which customers owe us money past the due date?"))
    assert top in answer, answer
    assert figure_present(answer, cents(amount)), answer
    assert figure_present(answer, cents(sum(per.values(), Decimal()))), answer
