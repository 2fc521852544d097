"""Records asked for by rank, price lists, approvals and the words people use for them: "the
3 biggest invoices" are the invoices (one list per currency), "the last invoice we sent X" the
newest, "POs waiting on approval" the workflow's state, "stock transfers" Stock Entries of
purpose Material Transfer, "the standard buying price" the Item Price. Truth is read from the
demo ERP's REST API in its own terms (doctype, native fields, docstatus), never through the
planner's code."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, cents, sums
from test_planner_conversation import Chat, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio
MONTH = [TEST_TODAY.replace(day=1).isoformat(), TEST_TODAY.isoformat()]
YEAR = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.isoformat()]


async def test_the_biggest_invoices_are_ranked_per_currency(chat: Chat, rest: RestERP) -> None:
    rows = rest.rows("Sales Invoice", ["grand_total", "currency"], [["docstatus", "=", 1]])
    per: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: -Decimal(str(r["grand_total"]))):
        per.setdefault(row["currency"], []).append(row)
    assert len(per) > 1  # the demo bills in two currencies: one ranking would mix them
    answer = text_of(await chat.say("top 3 sales invoices by amount"))
    listed = re.findall(r"ACC-SINV-[\w-]+", answer)
    for top in per.values():
        assert {r["name"] for r in top[:3]} <= set(listed), answer
    # A single ranking across currencies (the wrong reading) shows only 3 invoices.
    assert len(listed) == 3 * len(per), answer


async def test_the_last_invoice_sent_to_a_customer_is_its_newest(chat: Chat, rest: RestERP) -> None:
    rows = rest.rows("Sales Invoice", ["customer", "posting_date"], [["docstatus", "=", 1]])
    customer = max(rows, key=lambda r: r["posting_date"])["customer"]
    own = [r for r in rows if r["customer"] == customer]
    newest = max(r["posting_date"] for r in own)
    latest = {r["name"] for r in own if r["posting_date"] == newest}
    oldest = min(own, key=lambda r: r["posting_date"])["name"]
    answer = text_of(await chat.say(f"pull up the last invoice we sent {customer}"))
    listed = set(re.findall(r"ACC-SINV-[\w-]+", answer))
    assert len(listed) == 1, answer
    assert listed <= latest, answer
    assert oldest not in listed or oldest in latest, answer


async def test_the_biggest_customer_payments_are_the_payments(chat: Chat, rest: RestERP) -> None:
    company = "Savanna Trading Ltd"
    rows = rest.rows(
        "Payment Entry", ["paid_amount", "party"],
        [["docstatus", "=", 1], ["payment_type", "=", "Receive"], ["company", "=", company],
         ["posting_date", "between", YEAR]],
    )  # fmt: skip
    top = sorted(rows, key=lambda r: -Decimal(str(r["paid_amount"])))[:3]
    assert len(top) == 3
    answer = text_of(await chat.say("biggest 3 customer payments into Savanna this year?"))
    # The customers ranked by what they paid (the wrong reading) name no payment at all.
    assert set(re.findall(r"ACC-PAY-[\w-]+", answer)) == {r["name"] for r in top}, answer


async def test_orders_waiting_on_approval_are_the_workflow_state(
    runtime: Any, rest: RestERP
) -> None:
    pending = rest.rows(
        "Purchase Order",
        ["name"],
        [["docstatus", "=", 0], ["workflow_state", "=", "Pending Approval"]],
    )
    drafts = rest.rows("Purchase Order", ["name"], [["docstatus", "=", 0]])
    assert pending
    assert len(drafts) != len(pending)  # counting drafts (the wrong reading) would differ
    chat = await chat_as(runtime, "purchase.manager@demo.local")
    answer = text_of(await chat.say("how many POs are waiting on approval?"))
    assert figure_present(answer, float(len(pending))), answer
    assert not figure_present(answer, float(len(drafts))), answer


async def test_stock_transfers_are_entries_of_that_purpose(runtime: Any, rest: RestERP) -> None:
    entries = rest.rows(
        "Stock Entry", ["purpose"], [["docstatus", "=", 1], ["posting_date", "between", YEAR]]
    )
    moved = [e for e in entries if e["purpose"] == "Material Transfer"]
    assert moved
    assert len(moved) != len(entries)
    chat = await chat_as(runtime, "stock@demo.local")
    answer = text_of(await chat.say("How many stock transfers between warehouses this year?"))
    assert figure_present(answer, float(len(moved))), answer
    assert not figure_present(answer, float(len(entries))), answer


async def test_the_standard_buying_price_is_the_price_list_rate(chat: Chat, rest: RestERP) -> None:
    item = rest.rows("Item", ["item_name"], [["item_name", "=", "Grey Office Chair"]])[0]
    [price] = rest.rows(
        "Item Price", ["price_list_rate"],
        [["item_code", "=", item["name"]], ["price_list", "=", "Standard Buying KES"]],
    )  # fmt: skip
    answer = text_of(
        await chat.say("whats the standard buying price in shillings for a Grey Office Chair")
    )
    assert figure_present(answer, float(price["price_list_rate"])), answer
    assert "Last purchase rate" not in answer, answer  # what was last paid is another figure
    follow = text_of(await chat.say("and on the USD buying price list?"))
    [usd] = rest.rows(
        "Item Price", ["price_list_rate"],
        [["item_code", "=", item["name"]], ["price_list", "=", "Standard Buying USD"]],
    )  # fmt: skip
    assert figure_present(follow, float(usd["price_list_rate"])), follow
    assert not figure_present(follow, float(price["price_list_rate"])), follow


async def test_a_name_with_and_for_its_ampersand(chat: Chat, rest: RestERP) -> None:
    rows = rest.rows(
        "Purchase Invoice", ["net_total"],
        [["docstatus", "=", 1], ["supplier", "=", "Machakos Wire & Cable Ltd"],
         ["posting_date", "between", YEAR]],
    )  # fmt: skip
    assert rows
    total = cents(sum(Decimal(str(r["net_total"])) for r in rows))
    answer = text_of(
        await chat.say(f"how much did we buy from Machakos Wire and Cable in {TEST_TODAY.year}?")
    )
    assert figure_present(answer, float(total)), answer


async def test_receivables_past_an_age_are_one_figure(chat: Chat, rest: RestERP) -> None:
    cutoff = (TEST_TODAY - dt.timedelta(days=90)).isoformat()
    rows = rest.rows(
        "Sales Invoice", ["outstanding_amount"],
        [["docstatus", "=", 1], ["company", "=", "Savanna Trading Ltd"],
         ["outstanding_amount", ">", 0], ["due_date", "<", cutoff]],
    )  # fmt: skip
    assert rows
    total = cents(sum(Decimal(str(r["outstanding_amount"])) for r in rows))
    answer = text_of(
        await chat.say("How much of Savanna's receivables is more than 90 days past due?")
    )
    assert figure_present(answer, float(total)), answer


async def test_suppliers_past_due_are_the_payables(runtime: Any, rest: RestERP) -> None:
    rows = rest.rows(
        "Purchase Invoice", ["outstanding_amount", "currency"],
        [["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["due_date", "<", TEST_TODAY.isoformat()]],
    )  # fmt: skip
    assert rows
    chat = await chat_as(runtime, "accounts.manager@demo.local")
    answer = text_of(await chat.say("are we behind on paying any suppliers? how much is past due"))
    for value in sums(rows, lambda r: r["currency"], "outstanding_amount").values():
        assert figure_present(answer, float(cents(value))), answer


async def test_goods_counted_by_the_verb_of_their_moving(chat: Chat, rest: RestERP) -> None:
    start = TEST_TODAY.replace(month=1, day=1).isoformat()
    moves = rest.rows(
        "Stock Ledger Entry", ["item_code", "actual_qty"],
        [["voucher_type", "=", "Purchase Receipt"], ["is_cancelled", "=", 0],
         ["posting_date", "between", [start, TEST_TODAY.isoformat()]]],
    )  # fmt: skip
    per = sums(moves, lambda r: r["item_code"], "actual_qty")
    code = max(per, key=lambda c: per[c])
    [item] = rest.rows("Item", ["item_name", "stock_uom"], [["name", "=", code]])
    on_hand = sums(
        rest.rows("Bin", ["actual_qty"], [["item_code", "=", code]]), lambda r: 1, "actual_qty"
    )
    assert on_hand[1] != per[code]  # the quantity on hand (the wrong reading) differs
    answer = text_of(await chat.say(f"how many {item['item_name']}s did we receive this year"))
    assert figure_present(answer, float(per[code])), answer


async def test_a_department_named_with_its_word(chat: Chat, rest: RestERP) -> None:
    staff = rest.rows(
        "Employee",
        ["department"],
        [["status", "=", "Active"], ["company", "=", "Savanna Trading Ltd"]],
    )
    dept = next(r["department"] for r in staff if (r["department"] or "").startswith("Warehouse"))
    n = sum(1 for r in staff if r["department"] == dept)
    assert n != len(staff)
    answer = text_of(await chat.say("how many people work in the warehouse dept at Savanna?"))
    assert figure_present(answer, float(n)), answer
    assert not figure_present(answer, float(len(staff))), answer


async def test_concentration_keeps_the_company_and_states_the_top_amounts(
    chat: Chat, rest: RestERP
) -> None:
    rows = rest.rows(
        "Sales Invoice", ["customer", "net_total"],
        [["docstatus", "=", 1], ["company", "=", "Savanna Trading Ltd"], ["posting_date", "between", YEAR]],
    )  # fmt: skip
    per = sums(rows, lambda r: r["customer"], "net_total")
    top = sorted(per.values(), reverse=True)[:5]
    answer = text_of(
        await chat.say("What share of Savanna's sales this year comes from our top 5 customers?")
    )
    assert figure_present(answer, float(cents(sum(per.values())))), answer
    for value in top:
        assert figure_present(answer, float(cents(value))), answer


@pytest.mark.parametrize(
    ("said", "amount"),
    [
        ("record 25,000 bob received from Gulf Traders via M-Pesa today", "25000"),
        ("I need to claim KSh 1,800 for fuel from yesterday's client visit", "1800"),
        ("record a payment of 25000 from Gulf Traders", "25000"),
        ("5k from acme", "5000"),
        ("pay SAL-QTN-2026-00053 on 2026-11-30", None),  # a code and a date are no amount
        ("record 3 payments of 400", None),  # two numbers, no currency: which is unclear
    ],
)
def test_the_money_a_change_is_for(said: str, amount: str | None) -> None:
    from erp_agent.planner.parse_amounts import money_said

    found = money_said(said)
    assert (str(found) if found is not None else None) == amount


def test_an_enum_value_is_named_only_by_its_own_values() -> None:
    from erp_agent.catalog.fields import Field

    with pytest.raises(ValueError, match="value_names names values the enum does not have"):
        Field.model_validate(
            {"name": "purpose", "spec": "enum(A|B)", "value_names": {"C": ["a kind of c"]}}
        )


async def test_a_partys_share_of_a_figure(chat: Chat, rest: RestERP) -> None:
    year = TEST_TODAY.year - 1
    rows = rest.rows(
        "Sales Invoice", ["customer", "net_total"],
        [["docstatus", "=", 1], ["company", "=", "Savanna Trading Ltd"],
         ["posting_date", "between", [f"{year}-01-01", f"{year}-12-31"]]],
    )  # fmt: skip
    whole = sum(Decimal(str(r["net_total"])) for r in rows)
    part = sum(Decimal(str(r["net_total"])) for r in rows if r["customer"] == "Acme Ltd")
    assert 0 < part < whole
    answer = text_of(
        await chat.say(
            "how dependent are we on Acme? what % of Savanna turnover last year was them"
        )
    )
    assert figure_present(answer, float(cents(part))), answer
    assert figure_present(answer, float(cents(whole))), answer
    assert f"{(part / whole * 100).quantize(Decimal('0.01'))}%" in answer, answer
    # "Kindly share the payments…" asks for the payments, not a share.
    listed = text_of(
        await chat.say("Kindly share the payments we received from Acme Ltd last quarter.")
    )
    assert "share of" not in listed, listed
