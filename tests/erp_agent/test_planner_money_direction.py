"""Which way the money went is read from who pays whom, not from the word "pay": "what did
Gulf Traders pay us?" is money received, "how much did we pay Kenya Wire & Cable?" money paid,
and a question that says neither gets each direction as its own figure, never their sum.
Figures are checked against the demo ERP's own Payment Entries (payment_type, party,
docstatus); the readings a wrong implementation gives are shown to fail the same checks."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from conftest import TEST_TODAY, DemoERP, raw
from conftest import ask_offline as ask
from erp_agent.catalog import load_catalog
from erp_agent.config import EngineSettings
from erp_agent.evals.score import figure_present, plain
from erp_agent.gateway.signin import sign_in
from erp_agent.planner import OfflinePlanner, vocabulary
from erp_agent.planner.direction import IN, OUT, money_direction
from erp_agent.planner.intents import understand
from erp_agent.planner.read_as import split
from erp_agent.planner.reading import Kind, Request
from erp_agent.runtime import Runtime

CATALOG = load_catalog()
COMPANY = "Savanna Trading Ltd"


def read(text: str) -> Request:
    return understand(CATALOG, "erpnext", vocabulary.correct(text, CATALOG), dt.date(2026, 11, 30))


@pytest.mark.parametrize(
    ("text", "way"),
    [
        ("how much has Tana Investments paid us so far this year", IN),
        ("did Malindi Ventures pay anything in september", IN),
        ("receipts from Acme Ltd last quarter", IN),
        ("money that came in last month", IN),
        ("customer payments in august", IN),
        ("amount we paid to Nairobi Steel Works in september", OUT),
        ("what have we paid Rift Valley Agro Supplies", OUT),
        ("payments made to vendors this quarter", OUT),
        ("cash that went out in march", OUT),
        ("how much cash did we get from customers in september", IN),
        ("payments we sent to suppliers in august", OUT),
        ("how much did we send to Kenya Wire & Cable", OUT),
        # Goods, not money, may be what came or went: no money word, no direction.
        ("what did we get from Nairobi Steel Works", None),
        ("what did we send to the Mombasa warehouse", None),
        ("payment entries of last week", None),
        ("payments by mode of payment", None),
    ],
)
def test_the_direction_is_who_pays_whom(text: str, way: str | None) -> None:
    assert money_direction(text) == way
    req = read(text)
    if req.entity is not None and "payment_type" in req.entity.fields:
        assert req.enum_filters.get("payment_type") == ([way] if way else None)


def test_the_word_pay_alone_is_not_the_payment_type_and_a_word_reader_errs() -> None:
    text = "what did Gulf Traders pay us this year?"
    assert read(text).enum_filters["payment_type"] == [IN]
    # Matching the enum's values as words, as the reader did before, reads "pay" as Pay.
    words = {v for v in ("Receive", "Pay") if f" {v.lower()} " in f" {text.lower()} "}
    assert words == {OUT}


def test_a_figure_asked_with_we_received_is_a_figure_not_a_search() -> None:
    req = read("how much have we received from Gulf Traders this year?")
    assert req.kind == Kind.TOTAL
    assert req.enum_filters["payment_type"] == [IN]


def paid(demo: DemoERP, payment_type: str, *, party: str | None = None, **dates: str) -> float:
    """Submitted Payment Entries of one direction, straight from the ERP's table."""
    where = "docstatus = 1 and company = ? and payment_type = ? and posting_date between ? and ?"
    params: list[Any] = [COMPANY, payment_type, dates["start"], dates["end"]]
    if party is not None:
        where += " and party = ?"
        params.append(party)
    amount = "received_amount" if payment_type == "Receive" else "paid_amount"
    [row] = raw(
        demo, f"select round(sum({amount}), 2) from `tabPayment Entry` where {where}", *params
    )
    return float(row[0] or 0)


YEAR = {"start": "2026-01-01", "end": "2026-12-31"}


@pytest.mark.anyio
async def test_what_a_customer_paid_us_is_the_money_received_from_it(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    received = paid(demo_erp, "Receive", party="Gulf Traders", **YEAR)
    assert received > 0
    for question in ("what did Gulf Traders pay us this year?",
                     "how much have we received from Gulf Traders this year?"):  # fmt: skip
        a = await ask(runtime, question)
        assert figure_present(a["text"], received), (question, a["text"])
        assert a["grounded"], a["text"]
        assert not a["text"].startswith("No records found")


@pytest.mark.anyio
async def test_a_function_word_beside_a_name_is_not_part_of_it(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    """ "during", "throughout": English's own words, never looked up as records."""
    cases = [
        ("money in from Lakeside Hardware during october", "Lakeside Hardware",
         {"start": "2026-10-01", "end": "2026-10-31"}),
        ("how much did we receive from Gulf Traders throughout q3", "Gulf Traders",
         {"start": "2026-07-01", "end": "2026-09-30"}),
    ]  # fmt: skip
    for question, party, period in cases:
        received = paid(demo_erp, "Receive", party=party, **period)
        assert received > 0, question
        a = await ask(runtime, question)
        assert figure_present(a["text"], received), (question, a["text"])
        # The figure for the whole year, or for every party, is not the answer.
        assert not figure_present(a["text"], paid(demo_erp, "Receive", party=party, **YEAR))
        assert a["grounded"], a["text"]


@pytest.mark.anyio
async def test_money_got_from_a_kind_of_party_is_its_payments_not_its_records(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    """ "How much cash did we get from customers": the money customers paid, not the customers
    created in that month."""
    period = {"start": "2026-09-01", "end": "2026-09-30"}
    where = (
        "docstatus = 1 and company = ? and party_type = 'Customer' and payment_type = 'Receive' "
        "and posting_date between ? and ?"
    )
    [(received,)] = raw(
        demo_erp,
        f"select round(sum(received_amount), 2) from `tabPayment Entry` where {where}",
        COMPANY,
        period["start"],
        period["end"],
    )
    assert received
    a = await ask(runtime, "how much cash did we get from customers in september")
    assert figure_present(a["text"], float(received)), a["text"]
    assert "created" not in a["text"], a["text"]
    assert a["grounded"], a["text"]


@pytest.mark.anyio
async def test_what_we_paid_a_supplier_is_the_money_paid_to_it(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    supplier = "Kenya Wire & Cable Ltd"
    out = paid(demo_erp, "Pay", party=supplier, **YEAR)
    money_in = paid(demo_erp, "Receive", party=supplier, **YEAR)
    both = round(out + money_in, 2)
    a = await ask(runtime, "how much did we pay Kenya Wire & Cable this year")
    assert figure_present(a["text"], out), a["text"]
    assert a["grounded"]
    # A reader that took both directions, or the wrong one, states another figure.
    assert not (both != out and figure_present(a["text"], both))


@pytest.mark.anyio
async def test_payments_without_a_direction_are_two_figures_never_their_sum(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    period = {"start": "2026-10-01", "end": "2026-10-31"}
    money_in, money_out = paid(demo_erp, "Receive", **period), paid(demo_erp, "Pay", **period)
    assert money_in
    assert money_out
    a = await ask(runtime, "total payments in october")
    assert figure_present(a["text"], money_in), a["text"]
    assert figure_present(a["text"], money_out), a["text"]
    assert not figure_present(a["text"], round(money_in + money_out, 2))


# ------------------------------------------------------------------ what parties owe


def owed_by_party(demo: DemoERP, doctype: str, party: str) -> dict[str, float]:
    """Each party's outstanding on its submitted invoices, from the ERP's own table."""
    rows = raw(
        demo,
        f"select {party}, round(sum(outstanding_amount), 2) from `tab{doctype}` where "
        "docstatus = 1 and company = ? and outstanding_amount != 0 group by 1",
        COMPANY,
    )
    return {r[0]: float(r[1]) for r in rows}


@pytest.mark.anyio
async def test_parties_owing_more_than_an_amount_are_those_whose_debt_is_over_it(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    owed = owed_by_party(demo_erp, "Sales Invoice", "customer")
    over = {c: v for c, v in owed.items() if v > 500_000}
    under = {c: v for c, v in owed.items() if 0 < v <= 500_000}
    assert over
    assert under
    a = await ask(runtime, "customers owing more than 500k")
    for customer, total in over.items():
        assert customer in a["text"]
        assert figure_present(a["text"], total), a["text"]
    # A reading that dropped the amount lists customers under it too.
    assert not any(f"- {c}:" in a["text"] for c in under), a["text"]


@pytest.mark.anyio
async def test_which_party_owes_the_most_is_the_one_with_the_largest_debt(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    for question, doctype, party in (
        ("which customer owes us the most", "Sales Invoice", "customer"),
        ("which supplier do we owe the most?", "Purchase Invoice", "supplier"),
    ):
        ranked = sorted(owed_by_party(demo_erp, doctype, party).items(), key=lambda kv: -kv[1])
        (first, most), (second, _) = ranked[0], ranked[1]
        a = await ask(runtime, question)
        assert first in a["text"]
        assert figure_present(a["text"], most), a["text"]
        # The whole ageing report (the ranking ignored) names the others as well.
        assert second not in a["text"], a["text"]


@pytest.mark.anyio
async def test_what_we_still_owe_a_supplier_is_its_payables(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    owed = owed_by_party(demo_erp, "Purchase Invoice", "supplier")["Nairobi Steel Works Ltd"]
    a = await ask(runtime, "what do we still owe Nairobi Steel Works")
    assert figure_present(a["text"], owed), a["text"]
    assert a["grounded"]


@pytest.mark.anyio
async def test_the_top_five_of_a_report_as_a_chart_are_its_five_largest_parties(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    runtime.gateway.today = TEST_TODAY
    session = await sign_in(
        runtime.connector, runtime.registry, runtime.policy, "accounts@demo.local", "demo"
    )
    engine = runtime.engine(OfflinePlanner(runtime.catalog), EngineSettings(today=TEST_TODAY))
    first = await engine.run_turn(session, "What are our overdue receivables?")
    then = await engine.run_turn(
        session, "show the top 5 as a chart", conversation_id=first.conversation_id
    )
    text = split(plain("\n".join(b["markdown"] for b in then.blocks if b["type"] == "text")))[1]
    assert any(b["type"] == "chart" for b in then.blocks)
    rows = raw(
        demo_erp,
        "select customer, round(sum(outstanding_amount), 2) s from `tabSales Invoice` where "
        "docstatus = 1 and is_return = 0 and outstanding_amount > 0 and due_date < ? and "
        "company = ? group by customer order by s desc",
        TEST_TODAY.isoformat(),
        COMPANY,
    )
    top, rest = rows[:5], rows[5:]
    assert rest
    for customer, owed in top:
        assert f"{customer}:" in text, text
        assert figure_present(text, float(owed)), text
    # The whole ageing report again, or every customer, names the sixth too.
    assert f"{rest[0][0]}:" not in text, text
