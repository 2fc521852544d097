"""Companies said by their code, figures that stay asked through a follow-up, and everyday words
for figures and states: "cost of goods sold on ST", "HG's receivables 31 to 60 days late",
"money in and money out of the bank … and last month?", "and net?" after the gross payroll,
"leave days did staff take", "staff numbers per branch for the Kenyan company", "leave
requests sitting with me to approve", "which PO's got rejected", "quotes we lost", "mpesa
collections", "anything overdue in my branch". Truth is read from the demo ERP's REST API in its
own terms (doctype, native fields, docstatus), never through the planner's code; each test
also checks that the wrong reading's figure is absent."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, sums
from test_planner_conversation import block, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present
from erp_agent.planner.parse_dates import parse_comparison

pytestmark = pytest.mark.anyio

LAST_MONTH = [dt.date(2026, 10, 1).isoformat(), dt.date(2026, 10, 31).isoformat()]
THIS_MONTH = [dt.date(2026, 11, 1).isoformat(), TEST_TODAY.isoformat()]


def _gl(rest: RestERP, account: str, span: list[str]) -> tuple[Decimal, Decimal]:
    rows = rest.rows("GL Entry", ["debit", "credit"],
                     [["account", "=", account], ["is_cancelled", "=", 0],
                      ["posting_date", "between", span]])  # fmt: skip
    return (sum((Decimal(str(r["debit"])) for r in rows), Decimal()),
            sum((Decimal(str(r["credit"])) for r in rows), Decimal()))  # fmt: skip


async def test_a_company_said_by_its_code(runtime: Any, rest: RestERP) -> None:
    st, _ = _gl(rest, "Cost of Goods Sold - ST", LAST_MONTH)
    hg, _ = _gl(rest, "Cost of Goods Sold - HG", LAST_MONTH)
    assert st
    assert hg
    assert st != hg
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("cost of goods sold last month on ST, ledger figure"))
    assert figure_present(answer, st), answer
    assert not figure_present(answer, hg), answer
    assert "Which company" not in answer

    window = [TEST_TODAY - dt.timedelta(days=60), TEST_TODAY - dt.timedelta(days=31)]
    bucket = [["docstatus", "=", 1], ["outstanding_amount", ">", 0],
              ["due_date", "between", [d.isoformat() for d in window]]]  # fmt: skip
    owed = sums(rest.rows("Sales Invoice", ["company", "outstanding_amount"], bucket),
                lambda r: r["company"], "outstanding_amount")  # fmt: skip
    everything = sums(
        rest.rows("Sales Invoice", ["company", "outstanding_amount"],
                  [["docstatus", "=", 1], ["outstanding_amount", ">", 0]]),
        lambda r: r["company"], "outstanding_amount",
    )  # fmt: skip
    harbor = owed["Harbor Goods Inc"]
    assert harbor
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("how much of HG's recievables is 31 to 60 days late?"))
    assert figure_present(answer, harbor), answer
    # Not the company's whole receivables (the report), nor the other company's bucket.
    assert not figure_present(answer, everything["Harbor Goods Inc"]), answer
    assert not figure_present(answer, owed["Savanna Trading Ltd"]), answer


async def test_two_figures_stay_asked_when_only_the_period_moves(
    runtime: Any, rest: RestERP
) -> None:
    await _bank_moves(runtime, rest, ("money in and money out of the bank account this month?",
                                      "and last month?"), LAST_MONTH, THIS_MONTH)  # fmt: skip


async def _bank_moves(
    runtime: Any, rest: RestERP, said: tuple[str, str], span: list[str], other: list[str]
) -> None:
    """The bank's money in and out over ``span`` after the two messages, not ``other``'s."""
    debit, credit = _gl(rest, "Bank - ST", span)
    other_debit, _ = _gl(rest, "Bank - ST", other)
    assert debit
    assert credit
    assert other_debit != debit
    chat = await chat_as(runtime, "accounts@demo.local")
    await chat.say(said[0])
    answer = text_of(await chat.say(said[1]))
    assert figure_present(answer, debit), answer
    assert figure_present(answer, credit), answer
    assert not figure_present(answer, other_debit), answer


async def test_a_follow_up_word_moves_to_another_figure_of_the_same_records(
    runtime: Any, rest: RestERP
) -> None:
    slips = rest.rows("Salary Slip", ["company", "gross_pay", "net_pay"],
                      [["docstatus", "=", 1], ["start_date", "between", LAST_MONTH]])  # fmt: skip
    net = sums(slips, lambda r: r["company"], "net_pay")
    gross = sums(slips, lambda r: r["company"], "gross_pay")
    chat = await chat_as(runtime, "hr@demo.local")
    first = text_of(await chat.say("whats the gross payroll for october? both companies"))
    assert all(figure_present(first, v) for v in gross.values()), first
    answer = text_of(await chat.say("and net?"))
    assert all(figure_present(answer, v) for v in net.values()), answer
    assert not any(figure_present(answer, v) for v in gross.values()), answer
    # A capitalised word names a record, not a figure: "goods" of Harbor Goods is no cost of
    # goods sold.
    chat = await chat_as(runtime, "admin@demo.local")
    await chat.say("our 3 largest debtors at Savanna?")
    answer = text_of(await chat.say("and for Harbor Goods?"))
    assert "cost of goods" not in answer.lower(), answer


async def test_leave_days_in_everyday_words(runtime: Any, rest: RestERP) -> None:
    q3 = [dt.date(2026, 7, 1).isoformat(), dt.date(2026, 9, 30).isoformat()]
    taken = rest.rows("Leave Application", ["total_leave_days"],
                      [["docstatus", "=", 1], ["status", "=", "Approved"],
                       ["from_date", "between", q3]])  # fmt: skip
    days = sum((Decimal(str(r["total_leave_days"])) for r in taken), Decimal())
    assert days != len(taken)
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("In total how many leave days did staff take in Q3?"))
    first = answer.splitlines()[0]
    assert figure_present(first, days), answer
    assert not first.startswith("There are"), answer  # days, not a count of applications

    chat = await chat_as(runtime, "employee@demo.local")
    answer = text_of(
        await chat.say("hey, how many annual leave days have I got left for this year?")
    )
    assert "Annual Leave" in answer, answer
    assert "stock" not in answer.lower(), answer  # "got left" of leave, not of stock


async def test_staff_numbers_of_the_company_a_country_word_names(
    runtime: Any, rest: RestERP
) -> None:
    staff = rest.rows("Employee", ["company", "branch"], [["status", "=", "Active"]])
    kenya = [r for r in staff if r["company"] == "Savanna Trading Ltd"]
    assert kenya
    assert len(kenya) != len(staff)
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("staff numbers per branch for the Kenyan company"))
    assert figure_present(answer, len(kenya)), answer
    assert not figure_present(answer, len(staff)), answer
    listed = text_of(await (await chat_as(runtime, "hr@demo.local")).say(
        "list the employees of the Kenyan company"))  # fmt: skip
    assert "Savanna Trading Ltd" in listed, listed
    assert figure_present(listed, len(kenya)), listed


async def test_what_waits_on_me_and_what_was_rejected_or_lost(
    runtime: Any, rest: RestERP, demo_erp: Any
) -> None:
    waiting = rest.rows("Leave Application", ["status"],
                        [["leave_approver", "=", "hr@demo.local"], ["status", "=", "Open"],
                         ["docstatus", "=", 0]])  # fmt: skip
    decided = rest.rows(
        "Leave Application",
        [],
        [["leave_approver", "=", "hr@demo.local"], ["status", "=", "Approved"]],
    )
    assert waiting
    assert decided
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("Any leave requests sitting with me to approve?"))
    assert {r["name"] for r in waiting} <= set(re.findall(r"HR-LAP-[\w-]+", answer)), answer
    assert not {r["name"] for r in decided} & set(re.findall(r"HR-LAP-[\w-]+", answer))

    year = [dt.date(2026, 1, 1).isoformat(), TEST_TODAY.isoformat()]
    rejected = rest.rows(
        "Purchase Order",
        [],
        [["workflow_state", "=", "Rejected"], ["transaction_date", "between", year]],
    )
    others = rest.rows(
        "Purchase Order",
        [],
        [["workflow_state", "!=", "Rejected"], ["transaction_date", "between", year]],
    )
    assert rejected
    assert others
    chat = await chat_as(runtime, "purchase.manager@demo.local")
    answer = text_of(await chat.say("which PO's got rejected this yr?"))
    named = set(re.findall(r"PUR-ORD-[\w-]+", answer))
    assert {r["name"] for r in rejected} <= named, answer
    assert not {r["name"] for r in others} & named, answer

    sales = RestERP(demo_erp.url, "sales@demo.local")  # what this user may see of quotations
    lost = sales.rows("Quotation", [], [["docstatus", "=", 1], ["status", "=", "Lost"],
                                      ["transaction_date", "between", year]])  # fmt: skip
    every = sales.rows(
        "Quotation", [], [["docstatus", "=", 1], ["transaction_date", "between", year]]
    )
    sales.close()
    assert lost
    assert len(lost) != len(every)
    chat = await chat_as(runtime, "sales@demo.local")
    answer = text_of(await chat.say("how many of my quotes did we lose this year?"))
    assert figure_present(answer, len(lost)), answer
    assert not figure_present(answer, len(every)), answer


async def test_a_figure_said_bare_and_anything_overdue(runtime: Any, rest: RestERP) -> None:
    received = rest.rows("Payment Entry", ["mode_of_payment", "paid_amount"],
                         [["docstatus", "=", 1], ["payment_type", "=", "Receive"],
                          ["posting_date", "between", LAST_MONTH]])  # fmt: skip
    by_mode = sums(received, lambda r: r["mode_of_payment"], "paid_amount")
    assert by_mode["M-Pesa"]
    assert len(by_mode) > 1
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(await chat.say("mpesa collections last month?"))
    assert figure_present(answer, by_mode["M-Pesa"]), answer
    assert not figure_present(answer, sum(by_mode.values(), Decimal())), answer

    overdue = rest.rows("Sales Invoice", ["branch", "outstanding_amount"],
                        [["docstatus", "=", 1], ["outstanding_amount", ">", 0],
                         ["due_date", "<", TEST_TODAY.isoformat()]])  # fmt: skip
    per_branch = sums(overdue, lambda r: r["branch"], "outstanding_amount")
    assert per_branch["Kisumu"]
    chat = await chat_as(runtime, "kisumu.manager@demo.local")
    answer = text_of(await chat.say("anything overdue in my branch rn?"))
    assert figure_present(answer, per_branch["Kisumu"]), answer
    assert "Accounts Receivable" not in answer, answer  # the figure, not the report's rows


async def test_follow_ups_that_edit_a_figure_rather_than_read_a_record(
    runtime: Any, rest: RestERP
) -> None:
    """'And his sick leave?' after one employee's annual leave balance is that employee's sick
    leave; 'and their total value?' after a count of drafts is what those drafts add up to."""
    drafts = rest.rows("Sales Invoice", ["currency", "grand_total"], [["docstatus", "=", 0]])
    per_currency = sums(drafts, lambda r: r["currency"], "grand_total")
    assert drafts
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    await chat.say("how many sales invoices are still in draft, not submitted?")
    answer = text_of(await chat.say("and their total value?"))
    assert all(figure_present(answer, v) for v in per_currency.values()), answer
    assert "Name it" not in answer, answer

    chat = await chat_as(runtime, "hr@demo.local")
    await chat.say("Kiprop Cheruiyot annual leave balance?")
    answer = text_of(await chat.say("and his sick leave?"))
    assert "Sick Leave" in answer, answer
    assert "Annual Leave" not in answer, answer  # the type moved; it is not both


async def test_a_quotation_for_a_party_typed_in_lower_case(runtime: Any, rest: RestERP) -> None:
    [customer] = rest.rows("Customer", [], [["customer_name", "like", "Equator Logistics%"]])
    [item] = rest.rows("Item", [], [["item_name", "=", "Blue Wall Switch"]])
    chat = await chat_as(runtime, "sales@demo.local")
    response = await chat.say("quote equator logistics for 30 blue wall switches")
    document = block(response, "proposal")["document"]
    assert document["party"] == customer["name"]
    assert [(r["item"], r["qty"]) for r in document["items"]] == [(item["name"], 30)]


def _revenue(rest: RestERP, span: list[str], filters: list[list[Any]] | None = None) -> Decimal:
    rows = rest.rows(
        "Sales Invoice",
        ["net_total"],
        [["docstatus", "=", 1], ["posting_date", "between", span], *(filters or [])],
    )
    return sum((Decimal(str(r["net_total"])) for r in rows), Decimal())  # fmt: skip


async def test_to_the_same_day_two_figures_and_who_buys(runtime: Any, rest: RestERP) -> None:
    """'This month vs last month to the same day' stops last month at today's day, even on a
    month's last day; 'sales and purchases last month' is each figure; 'how much did Acme Ltd
    buy' is what we sold Acme (a customer buying), not our purchases."""
    # On a month's last day the month is whole; "to the same day" still stops last month at
    # the 30th (this data has no invoice on 31 October, so the dates are what tell).
    comparison = parse_comparison("this month vs last month to the same day", TEST_TODAY)
    assert comparison is not None
    assert comparison.earlier.end == dt.date(2026, 10, 30)
    plain = parse_comparison("this month vs last month", TEST_TODAY)
    assert plain is not None
    assert plain.earlier.end == dt.date(2026, 10, 31)
    to_day = rest.rows(
        "Sales Invoice",
        ["currency", "net_total"],
        [["docstatus", "=", 1], ["posting_date", "between", ["2026-10-01", "2026-10-30"]]],
    )
    chat = await chat_as(runtime, "admin@demo.local")
    response = await chat.say("how's this month tracking vs last month to the same day?")
    said = "\n".join(b["markdown"] for b in response.blocks if b["type"] == "text")
    assert "2026-10-01 to 2026-10-30" in said, said
    for total in sums(to_day, lambda r: r["currency"], "net_total").values():
        assert figure_present(text_of(response), total), said

    bought = rest.rows("Purchase Invoice", ["company", "net_total"],
                       [["docstatus", "=", 1], ["posting_date", "between", LAST_MONTH]])  # fmt: skip
    sold = rest.rows("Sales Invoice", ["company", "net_total"],
                     [["docstatus", "=", 1], ["posting_date", "between", LAST_MONTH]])  # fmt: skip
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say("sales and purchases last month"))
    for rows in (bought, sold):
        for total in sums(rows, lambda r: r["company"], "net_total").values():
            assert figure_present(answer, total), answer

    year = [dt.date(2026, 1, 1).isoformat(), TEST_TODAY.isoformat()]
    acme = _revenue(rest, year, [["customer", "=", "Acme Ltd"]])
    assert acme
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say("how much did Acme Ltd buy this year"))
    assert figure_present(answer, acme), answer
    assert "No records found" not in answer, answer  # not looked for among suppliers


async def test_follow_ups_that_sum_shift_or_move_the_scope(runtime: Any, rest: RestERP) -> None:
    """'What are they worth? incl VAT' after a count sums those records (it does not list
    them); 'what about the month before that' moves both figures back a month; 'and houston?'
    after 'Q3 vs Q2' compares the same quarters for Houston."""
    october = [["docstatus", "=", 1], ["posting_date", "between", LAST_MONTH]]
    bills = rest.rows("Purchase Invoice", ["currency", "grand_total", "net_total"], october)
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    await chat.say("How many supplier invoices did we post in October?")
    answer = text_of(await chat.say("what are they worth? incl VAT"))
    for total in sums(bills, lambda r: r["currency"], "grand_total").values():
        assert figure_present(answer, total), answer
    for net in sums(bills, lambda r: r["currency"], "net_total").values():
        assert not figure_present(answer, net), answer  # incl VAT, not net

    await _bank_moves(runtime, rest, ("Money in and money out of the bank account last month?",
                                      "what about the month before that"),
                      ["2026-09-01", "2026-09-30"], LAST_MONTH)  # fmt: skip

    q3 = _revenue(rest, ["2026-07-01", "2026-09-30"], [["branch", "=", "Houston"]])
    q2 = _revenue(rest, ["2026-04-01", "2026-06-30"], [["branch", "=", "Houston"]])
    assert q3
    assert q2
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    await chat.say("chicago - Q3 sales vs Q2, up or down?")
    answer = text_of(await chat.say("and houston?"))
    assert figure_present(answer, q3), answer
    assert figure_present(answer, q2), answer


async def test_a_payment_from_a_party_typed_in_lower_case(runtime: Any, rest: RestERP) -> None:
    [customer] = rest.rows("Customer", [], [["customer_name", "like", "Kilifi Supplies%"]])
    chat = await chat_as(runtime, "accounts@demo.local")
    response = await chat.say("record 50k received from kilifi supplies by cheque today")
    document = block(response, "proposal")["document"]
    assert document["party"] == customer["name"]
    assert document["payment_type"] == "Receive"
    assert document["amount"] == 50000


async def test_goods_moved_between_two_warehouses_are_a_transfer(
    runtime: Any, rest: RestERP
) -> None:
    """'Move 60 silver cartons from kisumu stores to mombasa stores': a Material Transfer
    between those two warehouses, in the company they belong to, for that item; confirming
    writes exactly that draft."""
    [item] = rest.rows("Item", [], [["item_name", "=", "Silver Carton"]])
    places = {r["name"]: r["company"] for r in rest.rows("Warehouse", ["company"], [])}
    chat = await chat_as(runtime, "stock@demo.local")
    response = await chat.say("move 60 silver cartons from kisumu stores to mombasa stores")
    proposal = block(response, "proposal")
    document = proposal["document"]
    assert document["entry_type"] == "Material Transfer"
    assert (document["from_warehouse"], document["to_warehouse"]) == (
        "Kisumu Stores - ST", "Mombasa Stores - ST",
    )  # fmt: skip
    assert document["company"] == places["Kisumu Stores - ST"]
    assert [(r["item"], r["qty"]) for r in document["items"]] == [(item["name"], 60)]
    done = await runtime.gateway.confirm(chat.session, proposal["id"], proposal["payload_hash"])
    assert done.ok, done
    rows = rest.rows("Stock Entry", ["purpose", "from_warehouse", "to_warehouse", "company"],
                     [["docstatus", "=", 0], ["from_warehouse", "=", "Kisumu Stores - ST"],
                      ["to_warehouse", "=", "Mombasa Stores - ST"]])  # fmt: skip
    try:
        assert len(rows) == 1, rows
        assert rows[0]["purpose"] == "Material Transfer"
        assert rows[0]["company"] == places["Kisumu Stores - ST"]
    finally:
        for row in rows:  # the draft is removed, so no other test counts it
            rest.client.delete(f"/api/resource/Stock Entry/{row['name']}").raise_for_status()
