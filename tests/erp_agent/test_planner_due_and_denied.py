"""Periods ahead and just gone, a status denied, a period of the due date, records counted by
their group or country, a person asked about by name and an ageing report for a party typed in
lowercase: each checked against the demo ERP's own rows, never through the planner's code."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from conftest import TEST_TODAY, DemoERP
from conftest import ask_offline as ask
from erp_agent.catalog import load_catalog
from erp_agent.evals.score import figure_present
from erp_agent.planner.filters import _dated_by
from erp_agent.planner.intents import _status_words
from erp_agent.planner.kinds import contact_point
from erp_agent.planner.parse_dates import parse_period
from erp_agent.planner.terms import norm
from erp_agent.runtime import Runtime

MONDAY = dt.date(2026, 11, 30)


def _span(text: str) -> tuple[dt.date, dt.date]:
    period = parse_period(text, MONDAY)
    assert period is not None, text
    return period.start, period.end


def test_the_past_week_runs_up_to_today_and_last_week_is_the_calendar_week() -> None:
    assert _span("payments over the past week") == (dt.date(2026, 11, 23), MONDAY)
    assert _span("payments last week") == (dt.date(2026, 11, 23), dt.date(2026, 11, 29))
    assert _span("sales in the past month") == (dt.date(2026, 10, 30), MONDAY)


def test_the_next_days_start_today_and_a_term_within_is_no_period() -> None:
    assert _span("invoices that fall due in the next 2 weeks") == (MONDAY, dt.date(2026, 12, 14))
    assert parse_period("invoices paid within 30 days", MONDAY) is None


def test_a_status_denied_is_not_that_status() -> None:
    bills = load_catalog().entity("purchase_invoice")
    assert bills is not None
    assert _status_words(bills, norm("which bills have we not paid on time")) == ["Overdue"]
    assert set(_status_words(bills, norm("bills that haven't been paid"))) == {
        "Unpaid", "Overdue", "Partly Paid"}  # fmt: skip
    assert _status_words(bills, norm("bills we paid")) == ["Paid"]


def test_a_period_things_fall_due_in_is_of_the_due_date() -> None:
    invoices = load_catalog().entity("sales_invoice")
    assert invoices is not None
    assert _dated_by(invoices, "invoices that fall due next week") == "due_date"
    assert _dated_by(invoices, "invoices due in the next 14 days") == "due_date"
    assert _dated_by(invoices, "invoices raised last week") == invoices.date_field


def test_a_person_is_asked_about_by_name() -> None:
    assert contact_point.person("who's Megan Johnson, which company is she with?") == (
        "Megan Johnson")  # fmt: skip
    assert contact_point.person("can I get Dennis Mwangi's mobile number") == "Dennis Mwangi"
    assert contact_point.person("what's the email of Grace Otieno?") == "Grace Otieno"
    assert contact_point.person("who owes us the most?") is None


def _rows(demo: DemoERP, query: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(demo.path) as conn:
        return list(conn.execute(query, args))


@pytest.mark.anyio
async def test_overdue_bills_said_as_not_paid_on_time(runtime: Runtime, demo_erp: DemoERP) -> None:
    today = TEST_TODAY.isoformat()
    overdue = {str(n) for (n,) in _rows(demo_erp, "select name from `tabPurchase Invoice` where "
               "docstatus = 1 and outstanding_amount > 0 and due_date < ?", today)}  # fmt: skip
    paid = {str(n) for (n,) in _rows(demo_erp, "select name from `tabPurchase Invoice` where "
            "docstatus = 1 and status = 'Paid'")}  # fmt: skip
    assert overdue
    assert paid
    a = await ask(
        runtime, "which supplier bills have we not paid on time?", "accounts.manager@demo.local"
    )
    shown = min(len(overdue), 5)
    assert sum(n in a["text"] for n in overdue) >= shown, a["text"]
    assert not any(n in a["text"] for n in paid), a["text"]  # "paid" read as the status


@pytest.mark.anyio
async def test_items_counted_by_group_and_suppliers_by_country(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    [(group, n)] = _rows(demo_erp, "select item_group, count(*) from tabItem group by item_group "
                         "order by count(*) desc, item_group limit 1")  # fmt: skip
    a = await ask(runtime, f"how many items are in the {group} group?", "stock@demo.local")
    assert figure_present(a["text"], n), a["text"]
    assert all(c["name"] != "metrics.query" for c in a["calls"])  # not the stock of them
    [(country, m)] = _rows(demo_erp, "select country, count(*) from tabSupplier where country != '' "
                           "group by country order by count(*) desc limit 1")  # fmt: skip
    b = await ask(runtime, f"count of suppliers based in {country}", "purchase@demo.local")
    assert figure_present(b["text"], m), b["text"]


@pytest.mark.anyio
async def test_a_contact_named_says_whose_contact_it_is(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    [(first, last, company)] = _rows(demo_erp, "select first_name, last_name, link_name from "
                                     "tabContact where link_name != '' group by first_name, last_name "
                                     "having count(*) = 1 order by first_name limit 1")  # fmt: skip
    a = await ask(runtime, f"who's {first} {last}, which company is that?", "admin@demo.local")
    assert str(company) in a["text"], a["text"]


@pytest.mark.anyio
async def test_ageing_for_a_customer_typed_in_lowercase_is_that_customers(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    [(customer, owed)] = _rows(demo_erp, "select customer, sum(outstanding_amount) from "
                               "`tabSales Invoice` where docstatus = 1 and outstanding_amount > 0 "
                               "group by customer, currency order by count(*) desc limit 1")  # fmt: skip
    everyone = _rows(demo_erp, "select company, sum(outstanding_amount) from `tabSales Invoice` "
                     "where docstatus = 1 and outstanding_amount > 0 group by company")  # fmt: skip
    a = await ask(runtime, f"ageing for {str(customer).lower()} pls", "admin@demo.local")
    assert figure_present(a["text"], round(float(owed), 2)), a["text"]
    # A report that dropped the customer shows every customer's total instead.
    assert not any(figure_present(a["text"], round(float(t), 2)) for _, t in everyone)


@pytest.mark.anyio
async def test_an_item_named_in_lowercase_plural_with_its_colour_is_that_item(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    # An item whose name past its colour others share ("Blue Wall Switch", "Green Wall
    # Switch"): only the colour, an everyday word, tells it apart.
    items = _rows(demo_erp, "select i.item_name, sum(b.actual_qty) from tabItem i join tabBin b "
                  "on b.item_code = i.name group by i.name order by i.item_name")  # fmt: skip
    rest: dict[str, int] = {}
    for name, _ in items:
        key = str(name).split(" ", 1)[-1]
        rest[key] = rest.get(key, 0) + 1
    name, qty = next((n, q) for n, q in items if rest[str(n).split(" ", 1)[-1]] > 1)
    a = await ask(runtime, f"how many {str(name).lower()}s do we have in stock", "stock@demo.local")
    assert figure_present(a["text"], round(float(qty))), a["text"]
    assert "ignored" not in a["reading"], a["reading"]


@pytest.mark.anyio
async def test_how_many_is_that_and_which_of_those_are_the_records_behind_the_figure(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    from erp_agent.config import EngineSettings
    from erp_agent.gateway.signin import sign_in
    from erp_agent.planner import OfflinePlanner

    today = TEST_TODAY.isoformat()
    late = (TEST_TODAY - dt.timedelta(days=90)).isoformat()
    [(customer, n)] = _rows(demo_erp, "select customer, count(*) from `tabSales Invoice` where "
                            "docstatus = 1 and outstanding_amount > 0 and due_date < ? group by "
                            "customer order by count(*) desc, customer limit 1", today)  # fmt: skip
    old = {str(x) for (x,) in _rows(demo_erp, "select name from `tabSales Invoice` where docstatus "
           "= 1 and outstanding_amount > 0 and due_date < ? and customer = ?", late, customer)}  # fmt: skip
    recent = {str(x) for (x,) in _rows(demo_erp, "select name from `tabSales Invoice` where "
              "docstatus = 1 and outstanding_amount > 0 and due_date between ? and ? and "
              "customer = ?", late, today, customer)}  # fmt: skip
    assert old
    assert recent
    session = await sign_in(runtime.connector, runtime.registry, runtime.policy,
                            "admin@demo.local", "demo")  # fmt: skip
    engine = runtime.engine(OfflinePlanner(runtime.catalog), EngineSettings(today=TEST_TODAY))

    async def say(text: str, conversation: str | None) -> tuple[str, str]:
        r = await engine.run_turn(session, text, conversation_id=conversation)
        return "\n".join(b["markdown"] for b in r.blocks if b["type"] == "text"), r.conversation_id

    _, conv = await say(f"{customer} - how much is overdue?", None)
    counted, _ = await say("how many invoices is that?", conv)
    assert figure_present(counted, n), counted
    listed, _ = await say("which of those are more than 90 days late?", conv)
    assert all(x in listed for x in list(old)[:5]), listed
    assert not any(x in listed for x in recent), listed  # the age was dropped
