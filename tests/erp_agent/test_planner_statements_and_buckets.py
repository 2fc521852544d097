"""What finance staff ask of what is owed, as they ask it: "a statement for Lakeside Hardware
for this year" is what was billed to them and what they paid in the period, and what is still
outstanding today; "what's 1-30 days overdue" is that bucket alone, never "more than 30 days";
"the biggest unpaid invoices" are ranked by what is unpaid; a list of overdue invoices says what
is owed on them; money "into our bank accounts" is their debits; "their PO PO-1" is the number
our sales order keeps. Truth is read from the demo ERP's REST API in its own terms (doctype,
native fields, docstatus), never through the planner's code."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP
from test_planner_conversation import Chat, text_of
from test_planner_conversation import block as block_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present
from erp_agent.planner.parse_dates import parse_age

pytestmark = pytest.mark.anyio
YEAR = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.isoformat()]


def _sum(rest: RestERP, doctype: str, field: str, filters: list[list[Any]]) -> Decimal:
    rows = rest.rows(doctype, [field], [["docstatus", "=", 1], *filters])
    return sum((Decimal(str(r[field])) for r in rows), Decimal(0))


@pytest.mark.parametrize(
    ("doctype", "party_field", "payment_type", "question"),
    [
        ("Sales Invoice", "customer", "Receive",
         "pull together a statement for {party} for this year - what we billed, what they paid "
         "and what's still outstanding"),
        ("Purchase Invoice", "supplier", "Pay", "supplier statement {party}, this year"),
    ],
)  # fmt: skip
async def test_a_statement_is_billed_paid_and_owed(
    chat: Chat, rest: RestERP, doctype: str, party_field: str, payment_type: str, question: str
) -> None:
    rows = rest.rows(doctype, [party_field], [["docstatus", "=", 1], ["posting_date", "between", YEAR], ["company", "=", "Savanna Trading Ltd"]])  # fmt: skip
    party = sorted({r[party_field] for r in rows})[0]
    billed = _sum(rest, doctype, "grand_total", [[party_field, "=", party], ["posting_date", "between", YEAR]])  # fmt: skip
    paid = _sum(rest, "Payment Entry", "paid_amount", [["payment_type", "=", payment_type], ["party", "=", party], ["posting_date", "between", YEAR]])  # fmt: skip
    owed = _sum(rest, doctype, "outstanding_amount", [[party_field, "=", party]])
    owed_of_the_year = _sum(rest, doctype, "outstanding_amount", [[party_field, "=", party], ["posting_date", "<", YEAR[0]]])  # fmt: skip
    answer = text_of(await chat.say(question.format(party=party)))
    for figure in (billed, paid, owed):
        assert figure_present(answer, figure), (figure, answer)
    # "What they paid" names a figure, never a filter on the invoices (status Paid).
    assert "Status = Paid" not in answer, answer
    # What is owed is owed today, on invoices of any year, not only this year's.
    assert owed_of_the_year == 0 or figure_present(answer, owed), answer


@pytest.mark.parametrize(
    ("said", "low", "high"),
    [("1-30 days overdue", 1, 30), ("31 to 60 days late", 31, 60),
     ("between 61 and 90 days past due", 61, 90)],
)  # fmt: skip
async def test_an_ageing_bucket_is_that_bucket(
    chat: Chat, rest: RestERP, said: str, low: int, high: int
) -> None:
    company = "Savanna Trading Ltd"
    window = [(TEST_TODAY - dt.timedelta(days=high)).isoformat(),
              (TEST_TODAY - dt.timedelta(days=low)).isoformat()]  # fmt: skip
    base = [["company", "=", company], ["outstanding_amount", ">", 0]]
    bucket = _sum(rest, "Sales Invoice", "outstanding_amount", [*base, ["due_date", "between", window]])  # fmt: skip
    beyond = _sum(rest, "Sales Invoice", "outstanding_amount", [*base, ["due_date", "<", window[1]]])  # fmt: skip
    assert bucket != beyond  # "more than N days" (the wrong reading) is another figure
    answer = text_of(await chat.say(f"how much do customers owe {company} that is {said}?"))
    assert figure_present(answer, bucket), answer
    assert not figure_present(answer, beyond), answer
    listed = text_of(await chat.say(f"which of Savanna's invoices are {said}?"))
    names = set(re.findall(r"ACC-SINV-[\w-]+", listed))
    truth = rest.rows("Sales Invoice", [], [["docstatus", "=", 1], *base, ["due_date", "between", window]])  # fmt: skip
    assert names <= {r["name"] for r in truth}, listed
    assert f"{len(truth)} sales invoices" in listed, listed


def test_a_bucket_is_read_with_both_ends() -> None:
    assert parse_age("what's 1-30 days overdue") == (0, 30)
    assert parse_age("invoices 31-60 days late") == (30, 60)
    assert parse_age("more than 60 days overdue") == (60, None)
    assert parse_age("sales from 2026-11-01 to 2026-11-30") == (None, None)


async def test_the_biggest_unpaid_invoices_are_by_what_is_unpaid(chat: Chat, rest: RestERP) -> None:
    rows = rest.rows("Sales Invoice", ["outstanding_amount", "grand_total"],
                     [["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["currency", "=", "KES"]])  # fmt: skip
    by_owed = sorted(rows, key=lambda r: -Decimal(str(r["outstanding_amount"])))[:5]
    by_total = sorted(rows, key=lambda r: -Decimal(str(r["grand_total"])))[:5]
    assert {r["name"] for r in by_owed} != {r["name"] for r in by_total}  # the readings differ
    answer = text_of(
        await chat.say("List the five biggest unpaid invoices in shillings, largest first")
    )
    listed = re.findall(r"ACC-SINV-[\w-]+", answer)
    assert listed == [r["name"] for r in by_owed], answer


async def test_a_list_of_overdue_invoices_says_what_is_owed_on_them(
    chat: Chat, rest: RestERP
) -> None:
    overdue = [["outstanding_amount", ">", 0], ["due_date", "<", TEST_TODAY.isoformat()]]
    answer = text_of(await chat.say("which of our invoices are overdue at the moment?"))
    for currency in ("KES", "USD"):
        owed = _sum(rest, "Sales Invoice", "outstanding_amount", [*overdue, ["currency", "=", currency]])  # fmt: skip
        assert figure_present(answer, owed), (currency, owed, answer)


async def test_money_into_the_bank_accounts_is_their_debits(chat: Chat, rest: RestERP) -> None:
    last = TEST_TODAY.replace(day=1) - dt.timedelta(days=1)
    month = [last.replace(day=1).isoformat(), last.isoformat()]
    banks = rest.rows("Account", ["company"], [["account_type", "=", "Bank"], ["is_group", "=", 0]])
    assert len({b["company"] for b in banks}) == 2  # one per company, each in its currency
    answer = text_of(await chat.say("how much money came into our bank accounts last month?"))
    for bank in banks:
        debits = _sum(rest, "GL Entry", "debit", [["account", "=", bank["name"]], ["is_cancelled", "=", 0], ["posting_date", "between", month]])  # fmt: skip
        assert figure_present(answer, debits), (bank, debits, answer)
    assert "Which company" not in answer, answer


async def test_a_customers_po_number_finds_our_sales_order(chat: Chat, rest: RestERP) -> None:
    orders = rest.rows("Sales Order", ["po_no", "status"], [["docstatus", "=", 1], ["po_no", "is", "set"]])  # fmt: skip
    order = sorted(orders, key=lambda r: r["name"])[-1]
    response = await chat.say(
        f"Customer's chasing their PO {order['po_no']} - which order is that and what's its status?"
    )
    answer = text_of(response)
    assert order["name"] in answer, answer
    assert order["status"] in answer, answer
    assert response.reading == "one of sales orders", response.reading


async def test_what_we_owe_a_supplier_named_in_part_is_asked_then_its_payables(
    chat: Chat, rest: RestERP
) -> None:
    both = rest.rows("Supplier", [], [["supplier_name", "like", "%Wire & Cable%"]])
    assert len(both) == 2  # "the wire & cable guys" fits two suppliers: ask, never pick one
    first = await chat.say("how much do we owe the wire & cable guys?")
    asked = block_of(first, "choices")
    assert {o["value"] for o in asked["options"]} == {r["name"] for r in both}, asked
    owed = _sum(rest, "Purchase Invoice", "outstanding_amount", [["supplier", "=", "Kenya Wire & Cable Ltd"]])  # fmt: skip
    answer = text_of(await chat.say("Kenya Wire"))
    assert figure_present(answer, owed), answer
    assert "Which supplier" not in answer, answer  # "cable" is not asked about again


async def test_each_bucket_asked_is_its_own_figure(chat: Chat, rest: RestERP) -> None:
    company = "Savanna Trading Ltd"
    base = [["company", "=", company], ["outstanding_amount", ">", 0]]

    def ago(days: int) -> str:
        return (TEST_TODAY - dt.timedelta(days=days)).isoformat()

    buckets = [
        [["due_date", "between", [ago(30), ago(1)]]],
        [["due_date", "between", [ago(60), ago(31)]]],
        [["due_date", "between", [ago(90), ago(61)]]],
        [["due_date", "<", ago(90)]],
    ]
    answer = text_of(await chat.say(
        f"AR ageing for {company} pls - how much is 1-30, 31-60, 61-90 and more than 90 days overdue?"
    ))  # fmt: skip
    for bucket in buckets:
        owed = _sum(rest, "Sales Invoice", "outstanding_amount", [*base, *bucket])
        assert figure_present(answer, owed), (bucket, owed, answer)


async def test_how_many_and_what_they_add_up_to(chat: Chat, rest: RestERP) -> None:
    overdue = [["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["due_date", "<", TEST_TODAY.isoformat()]]  # fmt: skip
    rows = rest.rows("Sales Invoice", ["outstanding_amount", "currency"], overdue)
    answer = text_of(await chat.say("how many overdue invoices have we got and what do they add up to?"))  # fmt: skip
    assert figure_present(answer, len(rows)), answer
    for currency in {r["currency"] for r in rows}:
        owed = sum((Decimal(str(r["outstanding_amount"])) for r in rows if r["currency"] == currency), Decimal(0))  # fmt: skip
        assert figure_present(answer, owed), (currency, answer)


async def test_kenyan_is_the_company_in_kenya(chat: Chat, rest: RestERP) -> None:
    [kenyan] = rest.rows("Company", [], [["country", "=", "Kenya"]])
    year = TEST_TODAY.year - 1
    rows = rest.rows("Purchase Invoice", ["supplier", "net_total"],
                     [["docstatus", "=", 1], ["company", "=", kenyan["name"]],
                      ["posting_date", "between", [f"{year}-01-01", f"{year}-12-31"]]])  # fmt: skip
    per: dict[str, Decimal] = {}
    for r in rows:
        per[r["supplier"]] = per.get(r["supplier"], Decimal(0)) + Decimal(str(r["net_total"]))
    top = sorted(per.items(), key=lambda kv: -kv[1])[:3]
    answer = text_of(await chat.say("Which 3 Kenyan suppliers did we spend the most with last year?"))  # fmt: skip
    # A supplier whose name starts with "Kenya" (the wrong reading) would be the only one.
    for supplier, spent in top:
        assert supplier in answer, answer
        assert figure_present(answer, spent), (supplier, answer)
    branches = rest.rows("Sales Invoice", ["branch", "net_total"],
                         [["docstatus", "=", 1], ["company", "=", kenyan["name"]],
                          ["posting_date", "between", [f"{TEST_TODAY.year}-10-01", TEST_TODAY.isoformat()]]])  # fmt: skip
    answer = text_of(await chat.say("rank the Kenyan branches by revenue this quarter"))
    for branch in {b["branch"] for b in branches}:
        total = sum((Decimal(str(b["net_total"])) for b in branches if b["branch"] == branch), Decimal(0))  # fmt: skip
        assert figure_present(answer, total), (branch, answer)


async def test_a_number_is_found_where_the_other_party_keeps_it(chat: Chat, rest: RestERP) -> None:
    [bill] = rest.rows("Purchase Invoice", ["bill_no", "supplier", "outstanding_amount"],
                       [["docstatus", "=", 1], ["bill_no", "like", "INV-%"]])[:1]  # fmt: skip
    answer = text_of(await chat.say(
        f"{bill['supplier']} sent a reminder about their invoice no. {bill['bill_no']} - how much "
        "of it is still unpaid on our side?"
    ))  # fmt: skip
    assert bill["name"] in answer, answer
    assert f"outstanding {bill['outstanding_amount']:g}" in answer.replace(",", ""), answer
    [cheque] = rest.rows("Payment Entry", ["reference_no", "party", "paid_amount"],
                         [["docstatus", "=", 1], ["reference_no", "like", "CHE-%"]])[:1]  # fmt: skip
    answer = text_of(await chat.say(f"who's cheque {cheque['reference_no']} from, and for how much?"))  # fmt: skip
    assert cheque["name"] in answer, answer
    assert cheque["party"] in answer, answer
    assert figure_present(answer, cheque["paid_amount"]), answer


async def test_debits_and_credits_asked_together(chat: Chat, rest: RestERP) -> None:
    last = TEST_TODAY.replace(day=1) - dt.timedelta(days=1)
    month = [last.replace(day=1).isoformat(), last.isoformat()]
    answer = text_of(await chat.say("GL for Bank - HG last month, total debits and total credits please"))  # fmt: skip
    for side in ("debit", "credit"):
        total = _sum(rest, "GL Entry", side, [["account", "=", "Bank - HG"], ["is_cancelled", "=", 0], ["posting_date", "between", month]])  # fmt: skip
        assert figure_present(answer, total), (side, answer)


async def test_a_supplier_statement_with_its_balance(chat: Chat, rest: RestERP) -> None:
    quarter = [TEST_TODAY.replace(month=10, day=1).isoformat(), TEST_TODAY.isoformat()]
    supplier = "Kenya Wire & Cable Ltd"
    billed = _sum(rest, "Purchase Invoice", "grand_total", [["supplier", "=", supplier], ["posting_date", "between", quarter]])  # fmt: skip
    paid = _sum(rest, "Payment Entry", "paid_amount", [["payment_type", "=", "Pay"], ["party", "=", supplier], ["posting_date", "between", quarter]])  # fmt: skip
    owed = _sum(rest, "Purchase Invoice", "outstanding_amount", [["supplier", "=", supplier]])
    answer = text_of(await chat.say("supplier statement for Kenya Wire & Cable this quarter - billed, paid and balance"))  # fmt: skip
    for figure in (billed, paid, owed):
        assert figure_present(answer, figure), (figure, answer)
