"""Two things people ask of master data without naming a figure: what we last paid a supplier
for an item ("what did we pay X for grey bolts last time?": the rate on the item's line of the
supplier's latest submitted Purchase Invoice), and whose an email address or a phone number is.
Items are named as people type them (lowercase, plural); truth is read from the demo ERP's own
tables, and the wrong answers a careless reader would give are shown to fail the same checks."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import DemoERP
from conftest import ask_offline as ask
from erp_agent.evals.score import figure_present
from erp_agent.planner.kinds import contact_point
from erp_agent.planner.name_phrases import name_phrases, whole_first
from erp_agent.runtime import Runtime


def test_names_are_the_runs_of_words_left_and_hyphenated_words_are_one_name() -> None:
    own = frozenset(["balance", "price", "paid", "last", "time"])
    assert name_phrases("the cash-in-hand balance for October", own) == [
        "cash in hand", "cash", "hand"]  # fmt: skip
    assert name_phrases("price we paid Acme for grey bolts last time", own, parts=False) == [
        "Acme", "grey bolts"]  # fmt: skip
    assert name_phrases("balance of Debtors - ST", own) == ["Debtors - ST"]
    # Once "cash in hand" names a record, its words alone are not names of their own.
    assert whole_first(["cash in hand", "cash", "hand", "Debtors - ST"]) == {"cash", "hand"}


def test_an_email_or_phone_is_read_whole_and_an_id_or_amount_is_neither() -> None:
    assert contact_point.said("who is Info@Equator.co.ke?") == (
        "email", "info@equator.co.ke", "Info@Equator.co.ke")  # fmt: skip
    assert contact_point.said("customer with phone 0722 802 476") == (
        "phone", "0722802476", "0722 802 476")  # fmt: skip
    assert contact_point.said("who has +254 722802476") == (
        "phone", "254722802476", "+254 722802476")  # fmt: skip
    for text in ("find bill INV-44035", "invoice for 5407.42 dollars", "sales in 2026",
                 "debtors ageing 30 60 90 120", "top 100000 items"):  # fmt: skip
        assert contact_point.said(text) is None, text


def latest_purchase(demo: DemoERP) -> tuple[str, str, str, float, float]:
    """A supplier, one of its items' name, the supplier's latest and earliest rate for it (on
    submitted Purchase Receipts, not returns), where the two differ."""
    with sqlite3.connect(demo.path) as conn:
        rows = list(conn.execute(
            "select p.supplier, i.item_name, pi.item_code, pi.rate from `tabPurchase Receipt` p "
            "join `tabPurchase Receipt Item` pi on pi.parent = p.name join tabItem i on "
            "i.name = pi.item_code where p.docstatus = 1 and p.status != 'Return' "
            "order by p.supplier, pi.item_code, p.posting_date desc, p.name desc"))  # fmt: skip
    seen: dict[tuple[str, str], list[float]] = {}
    names: dict[tuple[str, str], str] = {}
    for supplier, item_name, code, rate in rows:
        seen.setdefault((supplier, code), []).append(float(rate))
        names[(supplier, code)] = item_name
    for (supplier, code), rates in sorted(seen.items()):
        if len(rates) > 1 and rates[0] != rates[-1]:
            return supplier, names[(supplier, code)], code, rates[0], rates[-1]
    raise AssertionError("no supplier bought one item at two rates")


@pytest.mark.anyio
async def test_what_we_last_paid_a_supplier_for_an_item_is_its_latest_receipt_rate(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    supplier, item_name, code, latest, earliest = latest_purchase(demo_erp)
    assert code.startswith("SKU-")  # an item code: the name typed is what must find it
    typed = item_name.lower() + "s"  # "grey nylon bolts": lowercase and plural, as people type
    a = await ask(runtime, f"what did we pay {supplier} for {typed} last time?", "admin@demo.local")
    query = next(c["arguments"] for c in a["calls"] if c["name"] == "metrics.query")
    assert query["metric"] == "last_purchase_rate", a["calls"]
    assert figure_present(a["text"], round(latest, 2)), a["text"]
    # The supplier's first rate for it (a reader that takes the oldest line) is not the answer.
    assert not figure_present(a["text"], round(earliest, 2))
    assert a["grounded"]
    # "Last month" is a period, not the latest purchase: never read as a purchase rate.
    b = await ask(runtime, "what did we pay suppliers last month?", "admin@demo.local")
    assert all(c["arguments"].get("metric") != "last_purchase_rate" for c in b["calls"])


@pytest.mark.anyio
async def test_an_email_or_a_phone_number_finds_whose_it_is(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    with sqlite3.connect(demo_erp.path) as conn:
        contacts = list(conn.execute(
            "select full_name, email_id, mobile_no, link_name from tabContact where email_id "
            "!= '' and mobile_no != '' and link_doctype = 'Customer' order by name"))  # fmt: skip
    (name, email, mobile, customer), other = contacts[0], contacts[1]
    a = await ask(runtime, f"who is {email.upper()}?", "admin@demo.local")
    assert name in a["text"], a["text"]
    assert customer in a["text"], a["text"]
    assert other[0] not in a["text"]  # another contact's name: a lookup that ignored the email
    digits = "".join(ch for ch in mobile if ch.isdigit())[-9:]
    spaced = f"0{digits[:3]} {digits[3:6]} {digits[6:]}"  # as typed locally: "0722 802 476"
    b = await ask(runtime, f"which customer has the phone number {spaced}?", "admin@demo.local")
    assert customer in b["text"], b["text"]
    assert other[0] not in b["text"], b["text"]
    c = await ask(runtime, "who is nobody@nowhere.example?", "admin@demo.local")
    assert c["text"].startswith("No contact, customer or supplier"), c["text"]
