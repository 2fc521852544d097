"""The offline planner's reading of requests: dates, amounts, and paraphrases the planner's code
never mentions (other wording, other values), all resolved through the catalog."""

from __future__ import annotations

import datetime as dt

import pytest

from erp_agent.catalog import load_catalog
from erp_agent.planner.intents import understand
from erp_agent.planner.parse_amounts import parse_amount, parse_top
from erp_agent.planner.parse_dates import parse_age_days, parse_as_of, parse_period
from erp_agent.planner.reading import Kind

TODAY = dt.date(2026, 11, 30)
CATALOG = load_catalog()
D = dt.date


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("sales today", D(2026, 11, 30), D(2026, 11, 30)),
        ("orders this week", D(2026, 11, 30), D(2026, 12, 6)),
        ("bills last week", D(2026, 11, 23), D(2026, 11, 29)),
        ("revenue this month", D(2026, 11, 1), D(2026, 11, 30)),
        ("revenue last month", D(2026, 10, 1), D(2026, 10, 31)),
        ("pipeline next month", D(2026, 12, 1), D(2026, 12, 31)),
        ("this quarter", D(2026, 10, 1), D(2026, 12, 31)),
        ("previous quarter", D(2026, 7, 1), D(2026, 9, 30)),
        ("this fiscal year", D(2026, 1, 1), D(2026, 12, 31)),
        ("last financial year", D(2025, 1, 1), D(2025, 12, 31)),
        ("in March", D(2026, 3, 1), D(2026, 3, 31)),
        ("during december", D(2025, 12, 1), D(2025, 12, 31)),
        ("in September 2024", D(2024, 9, 1), D(2024, 9, 30)),
        ("for Q3", D(2026, 7, 1), D(2026, 9, 30)),
        ("q1 2025", D(2025, 1, 1), D(2025, 3, 31)),
        ("since 14 February", D(2026, 2, 14), TODAY),
        ("since July 9th", D(2026, 7, 9), TODAY),
        ("between 3 April and 19 May", D(2026, 4, 3), D(2026, 5, 19)),
        ("from February to April", D(2026, 2, 1), D(2026, 4, 30)),
        ("ytd", D(2026, 1, 1), TODAY),
        ("year to date", D(2026, 1, 1), TODAY),
        ("the past 45 days", D(2026, 10, 16), TODAY),
        ("last 2 weeks", D(2026, 11, 16), TODAY),
        ("in 2023", D(2023, 1, 1), D(2023, 12, 31)),
    ],
)
def test_periods(text: str, start: dt.date, end: dt.date) -> None:
    period = parse_period(text, TODAY)
    assert period is not None, text
    assert (period.start, period.end) == (start, end)


def test_as_of_and_age() -> None:
    assert parse_as_of("balance sheet as of last month end", TODAY) == D(2026, 10, 31)
    assert parse_as_of("as at the end of last quarter", TODAY) == D(2026, 9, 30)
    assert parse_as_of("as of 15 June 2025", TODAY) == D(2025, 6, 15)
    assert parse_age_days("anything more than 75 days overdue") == 75
    assert parse_age_days("overdue by over 45 days") == 45
    assert parse_age_days("90 days late") == 90
    assert parse_period("no date here", TODAY) is None


@pytest.mark.parametrize(
    ("text", "op", "value"),
    [
        ("owes us more than $12,500", ">", 12500),
        ("bills over 7k", ">", 7000),
        ("deals above 2.5m", ">", 2_500_000),
        ("orders under 350", "<", 350),
        ("at least KES 40,000", ">=", 40000),
        ("no more than 1.5 million", "<=", 1_500_000),
    ],
)
def test_amounts(text: str, op: str, value: float) -> None:
    amount = parse_amount(text)
    assert amount is not None
    assert amount.op == op
    assert float(amount.value) == value


def test_amount_is_not_a_duration_and_top_n() -> None:
    assert parse_amount("more than 60 days overdue") is None
    assert parse_top("the top 7 suppliers") == 7
    assert parse_top("our three biggest") == 3
    assert parse_top("biggest three customers") == 3
    assert parse_top("top customers") == 5


def ask(text: str):  # type: ignore[no-untyped-def]
    return understand(CATALOG, "erpnext", text, TODAY)


@pytest.mark.parametrize(
    ("text", "kind", "entity"),
    [
        # Paraphrases with wording and values that appear nowhere in the planner's code.
        ("how many vendor bills came in during august?", Kind.COUNT, "purchase_invoice"),
        ("give me the count of client orders still to bill", Kind.COUNT, "sales_order"),
        ("what's the sum we invoiced the Eldoret branch in Q1 2025", Kind.TOTAL, "sales_invoice"),
        ("turnover per territory this fiscal year", Kind.TOTAL, "sales_invoice"),
        ("spend by supplier since 3 March", Kind.TOTAL, "purchase_invoice"),
        ("largest 4 clients by billing this year as a graph", Kind.TOTAL, "sales_invoice"),
        ("list the quotes that expired", Kind.LIST, "quotation"),
        ("which expense claims are still draft?", Kind.LIST, "expense_claim"),
        ("is ACC-PINV-2025-00777 settled?", Kind.DOCUMENT, "purchase_invoice"),
        ("raise an estimate for Baraka Stores for 7 pcs of ZX-77-RED", Kind.WRITE, "quotation"),
        ("reject PUR-ORD-2025-00412", Kind.WRITE, "purchase_order"),
        ("how are purchases trending?", Kind.TREND, "purchase_invoice"),
        ("any odd payments this week?", Kind.ANOMALIES, "payment_entry"),
    ],
)
def test_paraphrases(text: str, kind: Kind, entity: str) -> None:
    req = ask(text)
    assert req.kind == kind, (text, req.kind)
    assert req.entity is not None, text
    assert req.entity.name == entity, (text, req.entity.name)


def test_values_come_from_the_catalog() -> None:
    req = ask("how many vendor bills are on hold or partly paid?")
    assert "Partly Paid" in req.statuses
    eldoret = ask("what did we invoice the Eldoret branch in Q1 2025")
    assert ("branch", "Eldoret") in eldoret.names
    assert eldoret.period is not None
    assert eldoret.period.start == D(2025, 1, 1)
    grouped = ask("turnover per territory this fiscal year")
    assert grouped.group == "territory"
    quote = ask("raise an estimate for Baraka Stores for 7 pcs of ZX-77-RED")
    assert quote.items == ["ZX-77-RED"]
    assert (None, "Baraka Stores") in quote.names
    mark = ask("Mark CRM-LEAD-2026-00031 as interested")
    assert mark.kind == Kind.WRITE
    assert mark.target_value == "interested"


@pytest.mark.parametrize(
    "text",
    ["What's the weather in Eldoret?", "Recommend a good novel", "Who is the president of Ghana?"],
)
def test_out_of_scope_is_not_forced_onto_an_entity(text: str) -> None:
    assert ask(text).kind == Kind.UNKNOWN
