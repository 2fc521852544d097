"""Recording a payment: "25,000 bob received from Gulf Traders via M-Pesa today" is a Payment
Entry proposed for confirmation, filled as ERPNext's payment form fills it — the party's
receivable or payable account and the bank or cash account of the mode of payment, asked of the
ERP as the user — and confirming it writes exactly that draft. Truth is the demo ERP's own
Company defaults, Mode of Payment type and Payment Entry rows, read over REST as the
administrator."""

from __future__ import annotations

from typing import Any

import pytest
from rest_truth import RestERP
from test_planner_conversation import block, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio


def _company(rest: RestERP, name: str) -> dict[str, Any]:
    fields = ["default_receivable_account", "default_payable_account", "default_bank_account",
              "default_cash_account"]  # fmt: skip
    [row] = rest.rows("Company", fields, [["name", "=", name]])
    return row


def _mode_type(rest: RestERP, mode: str) -> str:
    [row] = rest.rows("Mode of Payment", ["type"], [["name", "=", mode]])
    return str(row["type"])


def _the_company_of(rest: RestERP, doctype: str, party_field: str, party: str) -> str:
    rows = rest.rows(doctype, ["company"], [[party_field, "=", party], ["docstatus", "=", 1]])
    companies = {r["company"] for r in rows}
    assert len(companies) == 1, companies
    return str(companies.pop())


@pytest.mark.parametrize(
    ("said", "mode"),
    [
        ("record 25,000 bob received from Gulf Traders via M-Pesa today", "M-Pesa"),
        ("please record a payment from Gulf Traders of 25,000 in cash", "Cash"),
        # "Paid in cash" says how, not which way: a customer's money is received.
        ("log a receipt of 25,000 from Gulf Traders paid in cash", "Cash"),
    ],
)
async def test_money_received_is_a_payment_into_the_mode_of_payments_account(
    runtime: Any, rest: RestERP, said: str, mode: str
) -> None:
    company = _the_company_of(rest, "Sales Invoice", "customer", "Gulf Traders")
    defaults = _company(rest, company)
    cash = _mode_type(rest, mode) == "Cash"
    chat = await chat_as(runtime, "accounts@demo.local")
    response = await chat.say(said)
    document = block(response, "proposal")["document"]
    assert document["payment_type"] == "Receive"  # "from" a customer: money received
    assert document["party"] == "Gulf Traders"
    assert document["party_type"] == "customer"
    assert document["mode_of_payment"] == mode
    assert document["amount"] == 25000
    assert document["date"] == TEST_TODAY.isoformat()
    # Received: out of the customer's receivable account, into the mode's bank or cash account.
    assert document["paid_from"] == defaults["default_receivable_account"]
    wanted = defaults["default_cash_account" if cash else "default_bank_account"]
    assert document["paid_to"] == wanted
    other = defaults["default_bank_account" if cash else "default_cash_account"]
    assert document["paid_to"] != other  # the wrong mode's account is another account
    assert figure_present(text_of(response), 25000)


async def test_money_paid_to_a_supplier_goes_from_the_bank_to_their_payable_account(
    runtime: Any, rest: RestERP
) -> None:
    company = _the_company_of(rest, "Purchase Invoice", "supplier", "Nairobi Steel Works Ltd")
    defaults = _company(rest, company)
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    response = await chat.say("record a payment of 40,000 to Nairobi Steel Works Ltd by cheque")
    document = block(response, "proposal")["document"]
    assert document["payment_type"] == "Pay"  # a supplier is paid, never "received"
    assert document["party_type"] == "supplier"
    assert document["company"] == company  # where the supplier's payments are, not asked
    assert document["paid_from"] == defaults["default_bank_account"]
    assert document["paid_to"] == defaults["default_payable_account"]
    assert document["paid_to"] != defaults["default_receivable_account"]


async def test_confirming_a_payment_writes_that_draft(runtime: Any, rest: RestERP) -> None:
    chat = await chat_as(runtime, "accounts@demo.local")
    response = await chat.say("record 12,345 received from Gulf Traders via M-Pesa today")
    proposal = block(response, "proposal")
    done = await runtime.gateway.confirm(chat.session, proposal["id"], proposal["payload_hash"])
    assert done.ok, done
    fields = ["docstatus", "paid_from", "paid_to", "paid_amount", "received_amount",
              "party", "party_type", "mode_of_payment", "payment_type"]  # fmt: skip
    rows = rest.rows("Payment Entry", fields, [["paid_amount", "=", 12345], ["docstatus", "=", 0]])
    try:
        assert len(rows) == 1, rows
        [row] = rows
        document = proposal["document"]
        assert row["paid_from"] == document["paid_from"]
        assert row["paid_to"] == document["paid_to"]
        assert (row["party_type"], row["party"], row["payment_type"]) == (
            "Customer", "Gulf Traders", "Receive",
        )  # fmt: skip
        assert row["received_amount"] == row["paid_amount"] == 12345
    finally:
        for row in rows:  # the draft is removed, so no other test counts it
            rest.client.delete(f"/api/resource/Payment Entry/{row['name']}").raise_for_status()


def _open_invoice(rest: RestERP, doctype: str) -> dict[str, Any]:
    party = "supplier" if doctype == "Purchase Invoice" else "customer"
    rows = rest.rows(
        doctype,
        [party, "company", "outstanding_amount", "grand_total"],
        [["docstatus", "=", 1], ["outstanding_amount", ">", 1000]],
    )
    rows = [r for r in rows if r["outstanding_amount"] != r["grand_total"]] or rows
    return {**rows[0], "party": rows[0][party]}


async def test_paying_a_bill_in_full_is_a_payment_of_what_is_outstanding_on_it(
    runtime: Any, rest: RestERP
) -> None:
    bill = _open_invoice(rest, "Purchase Invoice")
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    response = await chat.say(f"pay {bill['party']}'s bill {bill['name']} in full")
    document = block(response, "proposal")["document"]
    assert document["payment_type"] == "Pay"
    assert (document["party_type"], document["party"]) == ("supplier", bill["party"])
    assert document["company"] == bill["company"]
    assert document["amount"] == bill["outstanding_amount"]  # owed now, not its grand total
    assert (
        document["amount"] != bill["grand_total"]
        or bill["grand_total"] == bill["outstanding_amount"]
    )
    [ref] = document["references"]
    assert (ref["document_type"], ref["document"], ref["allocated"]) == (
        "purchase_invoice", bill["name"], bill["outstanding_amount"],
    )  # fmt: skip
    assert bill["name"] in text_of(response)
    assert figure_present(text_of(response), bill["outstanding_amount"])


async def test_a_customers_payment_against_an_invoice_is_received_and_confirmed_as_drafted(
    runtime: Any, rest: RestERP
) -> None:
    invoice = _open_invoice(rest, "Sales Invoice")
    part = 1000
    chat = await chat_as(runtime, "accounts@demo.local")
    response = await chat.say(f"record a payment of {part} against {invoice['name']} by cheque")
    proposal = block(response, "proposal")
    document = proposal["document"]
    assert document["payment_type"] == "Receive"
    assert document["amount"] == part  # the sum said, not the whole outstanding
    assert document["mode_of_payment"] == "Cheque"
    done = await runtime.gateway.confirm(chat.session, proposal["id"], proposal["payload_hash"])
    assert done.ok, done
    drafts = rest.rows("Payment Entry", ["party", "paid_amount"],
                        [["docstatus", "=", 0], ["paid_amount", "=", part], ["party", "=", invoice["party"]]])  # fmt: skip
    try:
        assert len(drafts) == 1, drafts
    finally:
        for row in drafts:
            rest.client.delete(f"/api/resource/Payment Entry/{row['name']}").raise_for_status()
    # More than is owed on it is never allocated.
    too_much = invoice["outstanding_amount"] + 1000
    answer = text_of(
        await chat.say(f"record a payment of {too_much:.2f} against {invoice['name']}")
    )
    assert "won't allocate more" in answer, answer
