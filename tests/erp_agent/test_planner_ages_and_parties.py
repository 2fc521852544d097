"""What is owed by how late it is, per party and per bucket, and the everyday words around it:
"what we owe suppliers by how late it is", "payables 1-30 days past due", "customers more than
60 days overdue - who and how much", "who's in the 90+ bucket", "which 3 suppliers does Harbor
Goods owe the most"; concentration valued before tax; purchases "before tax" (never revenue);
a bank account's receipts and payments; sick days; a party's balance typed in lower case; a
material request for a warehouse; who approves a purchase order. Truth is read from the demo
ERP's REST API in its own terms (doctype, native fields, docstatus), never through the
planner's code; each test also checks that the wrong reading's figure is absent."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, sums
from test_planner_conversation import block, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio

ST, HG = "Savanna Trading Ltd", "Harbor Goods Inc"


def _ago(days: int) -> str:
    return (TEST_TODAY - dt.timedelta(days=days)).isoformat()


def _owed(rest: RestERP, doctype: str, extra: list[list[Any]]) -> list[dict[str, Any]]:
    party = "supplier" if doctype == "Purchase Invoice" else "customer"
    return rest.rows(doctype, [party, "company", "outstanding_amount", "grand_total"],
                     [["docstatus", "=", 1], ["outstanding_amount", ">", 0], *extra])  # fmt: skip


def _total(rows: list[dict[str, Any]], field: str = "outstanding_amount") -> Decimal:
    return sum((Decimal(str(r[field])) for r in rows), Decimal())


async def test_what_we_owe_by_how_late_it_is(runtime: Any, rest: RestERP) -> None:
    st = [["company", "=", ST]]
    first = _total(
        _owed(rest, "Purchase Invoice", [*st, ["due_date", "between", [_ago(30), _ago(1)]]])
    )
    oldest = _total(_owed(rest, "Purchase Invoice", [*st, ["due_date", "<", _ago(90)]]))
    everything = _total(_owed(rest, "Purchase Invoice", st))
    receivable = _total(
        _owed(rest, "Sales Invoice", [*st, ["due_date", "between", [_ago(30), _ago(1)]]])
    )
    assert first
    assert oldest
    assert everything not in (first, oldest)
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say(
        "AP ageing for the kenyan company - what we owe suppliers by how late it is"))  # fmt: skip
    assert figure_present(answer, first), answer
    assert figure_present(answer, oldest), answer
    # The buckets of what is past due, not the whole of what is owed (the report's total).
    assert not figure_present(answer, everything), answer

    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("Savanna payables that are 1-30 days past due"))
    assert figure_present(answer, first), answer
    assert not figure_present(answer, receivable), answer  # the payables' bucket, not AR's

    chat = await chat_as(runtime, "accounts.manager@demo.local")
    window = [_ago(60), _ago(31)]
    hg = _total(
        _owed(rest, "Purchase Invoice", [["company", "=", HG], ["due_date", "between", window]])
    )
    assert hg
    answer = text_of(await chat.say("Harbor Goods supplier bills 31 to 60 days late, how much?"))
    assert figure_present(answer, hg), answer  # Harbor Goods is the company, not a supplier
    assert "couldn't find" not in answer, answer


async def test_each_party_of_an_age_and_who_owes_the_most(runtime: Any, rest: RestERP) -> None:
    late = _owed(rest, "Sales Invoice", [["due_date", "<", _ago(60)]])
    per = sums(late, lambda r: r["customer"], "outstanding_amount")
    counts = Counter(r["customer"] for r in late)
    several = [c for c, n in counts.items() if n > 1]
    assert several  # a customer whose sum is no single invoice's amount
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(
        await chat.say("customers that are more than 60 days overdue - who and how much")
    )
    assert all(figure_present(answer, per[c]) for c in several), answer

    old = _owed(rest, "Sales Invoice", [["due_date", "<", _ago(90)]])
    per_old = sums(old, lambda r: r["customer"], "outstanding_amount")
    many = [c for c, n in Counter(r["customer"] for r in old).items() if n > 1]
    assert many
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("whos in the 90+ days bucket on receivables?"))
    assert all(figure_present(answer, per_old[c]) for c in many), answer
    assert "Accounts Receivable (company" not in answer, answer  # not the report's rows

    owed = sums(_owed(rest, "Purchase Invoice", [["company", "=", HG]]), lambda r: r["supplier"],
                "outstanding_amount")  # fmt: skip
    bought = sums(
        rest.rows("Purchase Invoice", ["supplier", "net_total"],
                  [["docstatus", "=", 1], ["company", "=", HG]]),
        lambda r: r["supplier"], "net_total",
    )  # fmt: skip
    top = max(owed, key=lambda s: owed[s])
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("which 3 suppliers does harbor goods owe the most money to?"))
    assert figure_present(answer, owed[top]), answer
    assert not figure_present(answer, bought[max(bought, key=lambda s: bought[s])]), answer


async def test_figures_before_tax_and_concentration(runtime: Any, rest: RestERP) -> None:
    year = [dt.date(2026, 1, 1).isoformat(), TEST_TODAY.isoformat()]
    sales = rest.rows("Sales Invoice", ["customer", "net_total", "grand_total"],
                      [["docstatus", "=", 1], ["company", "=", ST],
                       ["posting_date", "between", year]])  # fmt: skip
    net = sums(sales, lambda r: r["customer"], "net_total")
    gross = sums(sales, lambda r: r["customer"], "grand_total")
    top3 = sorted(net, key=lambda c: -net[c])[:3]
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("How dependent are we on our top 3 customers at ST this year?"))
    assert figure_present(answer, sum((net[c] for c in top3), Decimal())), answer
    assert not figure_present(answer, sum((gross[c] for c in top3), Decimal())), answer

    quarter = [dt.date(2026, 10, 1).isoformat(), TEST_TODAY.isoformat()]
    user = RestERP(rest.client.base_url.__str__(), "accounts@demo.local")
    bought = sums(user.rows("Purchase Invoice", ["currency", "net_total"],
                            [["docstatus", "=", 1], ["posting_date", "between", quarter]]),
                  lambda r: r["currency"], "net_total")  # fmt: skip
    sold = sums(user.rows("Sales Invoice", ["currency", "net_total"],
                          [["docstatus", "=", 1], ["posting_date", "between", quarter]]),
                lambda r: r["currency"], "net_total")  # fmt: skip
    user.close()
    chat = await chat_as(runtime, "accounts@demo.local")
    answer = text_of(await chat.say("total purchases this quarter please, before tax"))
    assert all(figure_present(answer, v) for v in bought.values()), answer
    assert not any(figure_present(answer, v) for v in sold.values()), answer  # not revenue


async def test_a_bank_accounts_receipts_and_payments(runtime: Any, rest: RestERP) -> None:
    quarter = [dt.date(2026, 10, 1).isoformat(), TEST_TODAY.isoformat()]
    gl = rest.rows("GL Entry", ["debit", "credit"],
                   [["account", "=", "Bank - HG"], ["is_cancelled", "=", 0],
                    ["posting_date", "between", quarter]])  # fmt: skip
    paid = rest.rows("Payment Entry", ["paid_amount"],
                     [["docstatus", "=", 1], ["payment_type", "=", "Pay"],
                      ["company", "=", HG], ["posting_date", "between", quarter]])  # fmt: skip
    credit, paid_out = _total(gl, "credit"), _total(paid, "paid_amount")
    assert credit
    assert credit != paid_out
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say(
        "Harbor Goods bank account - total receipts and total payments this quarter, separately please"
    ))  # fmt: skip
    assert figure_present(answer, _total(gl, "debit")), answer
    assert figure_present(answer, credit), answer
    assert not figure_present(answer, paid_out), answer  # what left the bank, not payment entries


async def test_sick_days_and_a_lower_case_partys_balance(runtime: Any, rest: RestERP) -> None:
    year = [dt.date(2026, 1, 1).isoformat(), dt.date(2026, 12, 31).isoformat()]
    leave = rest.rows("Leave Application", ["leave_type", "total_leave_days"],
                      [["docstatus", "=", 1], ["status", "=", "Approved"],
                       ["from_date", "between", year]])  # fmt: skip
    per = sums(leave, lambda r: r["leave_type"], "total_leave_days")
    assert per.get("Sick Leave")
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("total sick days taken across both companies this year"))
    first = answer.split("\n\n")[1] if "\n\n" in answer else answer
    assert figure_present(first, per["Sick Leave"]), answer
    assert not figure_present(first, sum(per.values(), Decimal())), answer

    hardware = [
        r["name"] for r in rest.rows("Customer", [], [["customer_name", "like", "%Hardware%"]])
    ]
    assert len(hardware) > 1
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    reply = await chat.say("hardware's balance with us pls")
    options = {o["label"] for o in block(reply, "choices")["options"]}
    assert options == set(hardware), options


async def test_a_material_request_for_a_warehouse_and_who_approves(
    runtime: Any, rest: RestERP
) -> None:
    nakuru = rest.rows("Warehouse", ["company"], [["warehouse_name", "like", "Nakuru%"]])
    assert len(nakuru) == 1
    chat = await chat_as(runtime, "stock@demo.local")
    reply = await chat.say("put in a material request for 100 silver cartons for nakuru stores")
    payload = block(reply, "proposal").get("payload") or {}
    assert payload.get("company") == nakuru[0]["company"], payload
    lines = payload.get("items") or []
    assert lines, payload
    assert all(line.get("warehouse") == nakuru[0]["name"] for line in lines), payload
    assert "Which company" not in text_of(reply)

    flows = rest.rows("Workflow", [], [["document_type", "=", "Purchase Order"]])
    assert flows
    doc = rest.client.get(f"/api/resource/Workflow/{flows[0]['name']}").json()["data"]
    approve = {t["allowed"] for t in doc["transitions"] if t.get("action") == "Approve"}
    chat = await chat_as(runtime, "purchase@demo.local")
    answer = text_of(await chat.say("once i send a PO for approval who has to approve it?"))
    assert approve
    assert any(role in answer for role in approve), answer


async def test_follow_ups_that_move_the_age_or_the_place(runtime: Any, demo_erp: Any) -> None:
    user = RestERP(demo_erp.url, "accounts@demo.local")  # the figures as this user sees them
    middle = _total(_owed(user, "Sales Invoice", [["due_date", "between", [_ago(90), _ago(61)]]]))
    oldest = _total(_owed(user, "Sales Invoice", [["due_date", "<", _ago(90)]]))
    first = _total(_owed(user, "Sales Invoice", [["due_date", "between", [_ago(60), _ago(31)]]]))
    user.close()
    assert middle
    assert oldest
    chat = await chat_as(runtime, "accounts@demo.local")
    await chat.say("receivables that are 31-60 days overdue?")
    answer = text_of(await chat.say("and 61 to 90?"))
    assert figure_present(answer, middle), answer
    assert not figure_present(answer, first), answer
    answer = text_of(await chat.say("and over 90?"))
    assert figure_present(answer, oldest), answer
    assert "> 90 outstanding" not in answer, answer  # 90 days, not an amount of 90

    stock = RestERP(demo_erp.url, "stock@demo.local")
    values = sums(stock.rows("Bin", ["warehouse", "stock_value"], []), lambda r: r["warehouse"],
                  "stock_value")  # fmt: skip
    stock.close()
    houston = next(v for w, v in values.items() if w.startswith("Houston"))
    chicago = next(v for w, v in values.items() if w.startswith("Chicago"))
    chat = await chat_as(runtime, "stock@demo.local")
    await chat.say("total stock value sitting in the chicago warehouse")
    answer = text_of(await chat.say("houston?"))
    assert figure_present(answer, houston), answer
    assert not figure_present(answer, chicago), answer


async def test_what_the_approval_queue_is_worth_and_an_account_of_one_company(
    runtime: Any, rest: RestERP
) -> None:
    waiting = rest.rows("Purchase Order", ["currency", "grand_total"],
                        [["docstatus", "=", 0], ["workflow_state", "=", "Pending Approval"]])  # fmt: skip
    worth = sums(waiting, lambda r: r["currency"], "grand_total")
    assert worth
    chat = await chat_as(runtime, "purchase.manager@demo.local")
    await chat.say("any purchase orders waiting for my sign-off?")
    answer = text_of(await chat.say("how much are they worth"))
    assert all(figure_present(answer, v) for v in worth.values()), answer

    year = [dt.date(2026, 1, 1).isoformat(), TEST_TODAY.isoformat()]
    vat = sums(rest.rows("GL Entry", ["account", "debit"],
                         [["is_cancelled", "=", 0], ["account", "like", "VAT - %"],
                          ["posting_date", "between", year]]),
               lambda r: r["account"], "debit")  # fmt: skip
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(
        await chat.say("debits and credits on the VAT account YTD for the kenyan company")
    )
    assert figure_present(answer, vat["VAT - ST"]), answer
    assert not figure_present(answer, vat["VAT - HG"]), answer
    assert "Creditors" not in answer, answer  # "credits" names the figure, not an account
