"""Names and spans as people type them: "mpesa" is the mode of payment M-Pesa; "the Kenya side"
is the company in Kenya, not a supplier named after the country; "hassan's gross pay" asks which
Hassan; "who's taken the most leave" is per employee; "September, October and November" is each
month; "money in and money out of the bank account" is the Bank account's debits and credits;
"has the stuff arrived" is how much of the order was received. Truth is read from the demo ERP's
REST API in its own terms (doctype, native fields, docstatus), never through the planner."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, sums
from test_planner_conversation import chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio
LAST_MONTH_END = TEST_TODAY.replace(day=1) - dt.timedelta(days=1)
LAST_MONTH = [LAST_MONTH_END.replace(day=1).isoformat(), LAST_MONTH_END.isoformat()]


def _total(rows: list[dict[str, Any]], field: str) -> Decimal:
    return sum((Decimal(str(r[field])) for r in rows), Decimal(0))


async def test_a_mode_of_payment_typed_without_its_hyphen(runtime: Any, rest: RestERP) -> None:
    base = [["docstatus", "=", 1], ["payment_type", "=", "Pay"], ["party_type", "=", "Supplier"],
            ["posting_date", "between", LAST_MONTH]]  # fmt: skip
    mpesa = _total(rest.rows("Payment Entry", ["paid_amount"], [*base, ["mode_of_payment", "=", "M-Pesa"]]), "paid_amount")  # fmt: skip
    every = _total(rest.rows("Payment Entry", ["paid_amount"], base), "paid_amount")
    assert mpesa
    assert mpesa != every
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(
        await chat.say("how much did we pay out to suppliers through mpesa last month")
    )
    assert figure_present(answer, mpesa), answer
    assert not figure_present(answer, every), answer  # the name dropped: the wrong reading


async def test_the_kenya_side_is_the_company_in_kenya(runtime: Any, rest: RestERP) -> None:
    [company] = rest.rows("Company", [], [["country", "=", "Kenya"]])
    quarter_end = TEST_TODAY.replace(month=((TEST_TODAY.month - 1) // 3) * 3 + 1, day=1) - dt.timedelta(days=1)  # fmt: skip
    quarter = [quarter_end.replace(day=1, month=quarter_end.month - 2).isoformat(), quarter_end.isoformat()]  # fmt: skip
    rows = rest.rows("Purchase Invoice", ["supplier", "net_total"],
                      [["docstatus", "=", 1], ["company", "=", company["name"]], ["posting_date", "between", quarter]])  # fmt: skip
    spend = sorted(sums(rows, lambda r: r["supplier"], "net_total").items(), key=lambda kv: -kv[1])
    chat = await chat_as(runtime, "purchase.manager@demo.local")
    answer = text_of(
        await chat.say("our 3 biggest suppliers by spend last quarter, kenya side only")
    )
    for supplier, total in spend[:3]:
        assert supplier in answer, answer
        assert figure_present(answer, total), answer


async def test_a_possessive_name_typed_in_lower_case_asks_which(
    runtime: Any, rest: RestERP
) -> None:
    hassans = rest.rows("Employee", ["employee_name"], [["employee_name", "like", "%Hassan%"]])
    assert len(hassans) >= 2
    chat = await chat_as(runtime, "hr@demo.local")
    asked = text_of(await chat.say("what was hassan's gross pay last month"))
    for h in hassans:
        assert h["employee_name"] in asked, asked
    chosen = hassans[0]
    slips = rest.rows("Salary Slip", ["gross_pay"], [["docstatus", "=", 1], ["employee", "=", chosen["name"]], ["start_date", "between", LAST_MONTH]])  # fmt: skip
    answer = text_of(await chat.say(chosen["employee_name"]))
    assert figure_present(answer, _total(slips, "gross_pay")), answer


async def test_who_has_taken_the_most_leave_is_per_employee(runtime: Any, rest: RestERP) -> None:
    year = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.replace(month=12, day=31).isoformat()]  # fmt: skip
    rows = rest.rows("Leave Application", ["employee_name", "total_leave_days"],
                      [["docstatus", "=", 1], ["status", "=", "Approved"], ["from_date", "between", year]])  # fmt: skip
    per = sorted(
        sums(rows, lambda r: r["employee_name"], "total_leave_days").items(), key=lambda kv: -kv[1]
    )
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("who's taken the most leave days this year? top 3"))
    top = per[0]
    assert top[0] in answer, answer
    assert figure_present(answer, top[1]), answer


async def test_months_named_one_by_one_are_each_month(runtime: Any, rest: RestERP) -> None:
    first = TEST_TODAY.replace(day=1)
    months = [first.replace(month=first.month - k) for k in (2, 1, 0)]  # three months in a row
    names = [m.strftime("%B").lower() for m in months]
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say(f"gross payroll for {names[0]}, {names[1]} and {names[2]}, each company separately"))  # fmt: skip
    for start in months:
        end = (start + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
        slips = rest.rows("Salary Slip", ["gross_pay", "company"],
                           [["docstatus", "=", 1], ["start_date", "between", [start.isoformat(), end.isoformat()]]])  # fmt: skip
        for company, gross in sums(slips, lambda r: r["company"], "gross_pay").items():
            assert figure_present(answer, gross), (company, start, answer)


async def test_money_in_and_out_of_the_bank_account(runtime: Any, rest: RestERP) -> None:
    month = [TEST_TODAY.replace(day=1).isoformat(), TEST_TODAY.isoformat()]
    gl = rest.rows("GL Entry", ["debit", "credit"],
                    [["account", "=", "Bank - ST"], ["is_cancelled", "=", 0], ["posting_date", "between", month]])  # fmt: skip
    debit, credit = _total(gl, "debit"), _total(gl, "credit")
    received = _total(rest.rows("Payment Entry", ["received_amount"], [["docstatus", "=", 1], ["payment_type", "=", "Receive"], ["company", "=", "Savanna Trading Ltd"], ["posting_date", "between", month]]), "received_amount")  # fmt: skip
    assert debit != received
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(await chat.say("money in and money out of the bank account this month?"))
    assert figure_present(answer, debit), answer
    assert figure_present(answer, credit), answer


async def test_has_the_stuff_arrived_is_how_much_was_received(runtime: Any, rest: RestERP) -> None:
    orders = rest.rows("Purchase Order", ["per_received", "per_billed"], [["docstatus", "=", 1]])
    order = next(o for o in orders if 0 < o["per_received"] < 100) if any(0 < o["per_received"] < 100 for o in orders) else orders[0]  # fmt: skip
    chat = await chat_as(runtime, "purchase@demo.local")
    answer = text_of(await chat.say(f"where are we with {order['name']}? has the stuff arrived"))
    assert f"received {order['per_received']:g}%" in answer.replace(",", ""), answer


async def test_what_actually_happens_is_a_process_question(runtime: Any) -> None:
    chat = await chat_as(runtime, "accounts@demo.local")
    response = await chat.say(
        "what actually happens if I cancel an invoice that's already been submitted? asking for a friend lol"
    )
    assert "knowledge.search" in [c["name"] for c in response.tools_called], response.tools_called
    assert "friend" not in text_of(response), text_of(response)


async def test_the_people_at_a_customer_and_whose_contact_a_person_is(
    runtime: Any, rest: RestERP
) -> None:
    contacts = rest.rows("Contact", ["first_name", "last_name", "email_id", "company_name", "link_doctype"])  # fmt: skip
    at_customer = next(c for c in contacts if c["link_doctype"] == "Customer" and c["email_id"])
    others = [c for c in contacts if c["company_name"] != at_customer["company_name"]]
    chat = await chat_as(runtime, "sales@demo.local")
    party = str(at_customer["company_name"]).lower().removesuffix(" ltd")
    answer = text_of(await chat.say(f"who do we deal with over at {party}? need their email"))
    assert at_customer["email_id"] in answer, answer
    assert not any(c["email_id"] and c["email_id"] in answer for c in others), answer
    of_supplier = next(c for c in contacts if c["link_doctype"] == "Supplier")
    person = f"{of_supplier['first_name']} {of_supplier['last_name']}"
    answer = text_of(await (await chat_as(runtime, "purchase@demo.local")).say(f"which supplier is {person} from?"))  # fmt: skip
    assert of_supplier["company_name"] in answer, answer


async def test_a_lead_found_by_its_organisation(runtime: Any, rest: RestERP) -> None:
    leads = rest.rows("Lead", ["lead_name", "company_name"], [["company_name", "is", "set"]])
    lead = leads[0]
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say(f"there was a lead from {lead['company_name']} a while back, who was the person and what's the lead number?"))  # fmt: skip
    assert lead["name"] in answer, answer
    assert lead["lead_name"] in answer, answer


async def test_words_that_look_like_names_of_documents(runtime: Any, rest: RestERP) -> None:
    year = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.replace(month=12, day=31).isoformat()]  # fmt: skip
    pos = rest.rows("Purchase Order", ["grand_total"], [["docstatus", "=", 1], ["company", "=", "Harbor Goods Inc"], ["transaction_date", "between", year]])  # fmt: skip
    largest = sorted(pos, key=lambda r: -r["grand_total"])[:3]
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say("largest 3 POs Harbor Goods has placed this yr?"))
    assert [r["name"] for r in largest] == [n for n in answer.split() if n.startswith("PUR-ORD")][:3], answer  # fmt: skip
    # "So far" is no sales order: the income of the P&L, year to date.
    income = _total(rest.rows("Sales Invoice", ["base_net_total"], [["docstatus", "=", 1], ["company", "=", "Harbor Goods Inc"], ["posting_date", "between", [year[0], TEST_TODAY.isoformat()]]]), "base_net_total")  # fmt: skip
    orders = _total(rest.rows("Sales Order", ["grand_total"], [["docstatus", "=", 1], ["company", "=", "Harbor Goods Inc"], ["transaction_date", "between", [year[0], TEST_TODAY.isoformat()]]]), "grand_total")  # fmt: skip
    answer = text_of(await chat.say("Harbor Goods income statement year to date - what's total income so far?"))  # fmt: skip
    assert figure_present(answer, income), answer
    assert not figure_present(answer, orders), answer


async def test_a_documents_quantity_a_balance_and_the_value_of_credit_notes(
    runtime: Any, rest: RestERP
) -> None:
    [note] = rest.rows("Delivery Note", ["total_qty", "customer"], [["docstatus", "=", 1]])[:1]
    chat = await chat_as(runtime, "stock@demo.local")
    answer = text_of(await chat.say(f"how many units went out on {note['name']} and to whom?"))
    assert f"total qty {note['total_qty']:g}" in answer.replace(",", ""), answer
    assert note["customer"] in answer, answer
    owed = rest.rows("Sales Invoice", ["customer", "outstanding_amount"], [["docstatus", "=", 1], ["outstanding_amount", "!=", 0]])  # fmt: skip
    customer = sorted({r["customer"] for r in owed})[0]
    balance = _total([r for r in owed if r["customer"] == customer], "outstanding_amount")
    accounts = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await accounts.say(f"whats the balance on the {customer} customer"))
    assert figure_present(answer, balance), answer
    last_year = [f"{TEST_TODAY.year - 1}-01-01", f"{TEST_TODAY.year - 1}-12-31"]
    notes = rest.rows("Sales Invoice", ["grand_total", "net_total", "currency"], [["docstatus", "=", 1], ["is_return", "=", 1], ["posting_date", "between", last_year]])  # fmt: skip
    gross = sums(notes, lambda r: r["currency"], "grand_total")
    net = sums(notes, lambda r: r["currency"], "net_total")
    answer = text_of(await accounts.say("total value of credit notes we issued last year?"))
    for currency, value in gross.items():
        assert figure_present(answer, value), answer
        assert value == net[currency] or not figure_present(answer, net[currency]), answer


async def test_follow_ups_that_narrow_or_name_another_figure(runtime: Any, rest: RestERP) -> None:
    overdue = rest.rows("Purchase Invoice", ["company", "outstanding_amount", "currency"],
                         [["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["due_date", "<", TEST_TODAY.isoformat()]])  # fmt: skip
    savanna = sums([r for r in overdue if r["company"] == "Savanna Trading Ltd"], lambda r: r["currency"], "outstanding_amount")  # fmt: skip
    everyone = sums(overdue, lambda r: r["currency"], "outstanding_amount")
    assert savanna != everyone
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    await chat.say("which supplier bills have gone past their due date without being paid?")
    answer = text_of(await chat.say("only the Savanna ones, and what do they add up to?"))
    for value in savanna.values():
        assert figure_present(answer, value), answer
    assert "USD" not in answer, answer  # Harbor Goods' bills (the filter dropped) are in dollars
    slips = rest.rows("Salary Slip", ["net_pay", "total_deduction", "currency"], [["docstatus", "=", 1], ["start_date", "between", LAST_MONTH]])  # fmt: skip
    hr = await chat_as(runtime, "hr@demo.local")
    await hr.say("what did payroll cost us last month? gross")
    answer = text_of(await hr.say("and take-home after deductions?"))
    for currency, net in sums(slips, lambda r: r["currency"], "net_pay").items():
        assert figure_present(answer, net), (currency, answer)
    for deduction in sums(slips, lambda r: r["currency"], "total_deduction").values():
        assert not figure_present(answer, deduction), answer


async def test_etc_after_statuses_counts_every_status(runtime: Any, rest: RestERP) -> None:
    since = (TEST_TODAY - dt.timedelta(days=14)).isoformat()
    rows = rest.rows("Attendance", ["status"], [["docstatus", "=", 1], ["attendance_date", "between", [since, TEST_TODAY.isoformat()]]])  # fmt: skip
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    assert len(counts) > 2
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("attendance summary for the last 2 weeks - how many absents, half days etc"))  # fmt: skip
    for status, n in counts.items():
        assert f"{status}: {n}" in answer, answer


async def test_the_items_own_last_purchase_rate_is_said_beside_the_receipts(
    runtime: Any, rest: RestERP
) -> None:
    items = rest.rows("Item", ["item_name", "last_purchase_rate"], [["last_purchase_rate", ">", 0]])
    item = items[0]
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say(f"what did we pay last time for {item['item_name'].lower()}?"))
    assert figure_present(answer, item["last_purchase_rate"]), answer


async def test_money_received_by_a_mode_of_payment_said_in_one_word(
    runtime: Any, rest: RestERP
) -> None:
    year = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.isoformat()]
    base = [["docstatus", "=", 1], ["payment_type", "=", "Receive"], ["party", "=", "Lakeside Hardware"], ["posting_date", "between", year]]  # fmt: skip
    by_cheque = _total(rest.rows("Payment Entry", ["received_amount"], [*base, ["mode_of_payment", "=", "Cheque"]]), "received_amount")  # fmt: skip
    every = _total(rest.rows("Payment Entry", ["received_amount"], base), "received_amount")
    assert 0 < by_cheque < every
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(await chat.say("how much did Lakeside Hardware pay us by cheque this year?"))
    assert figure_present(answer, by_cheque), answer
    assert not figure_present(answer, every), answer
