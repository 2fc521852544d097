"""The planner reads finance shorthand, ledger questions and figure questions by their meaning:
AP is payables (never receivables), "p and l" the profit and loss, "mnth" a month; a word that
names an account makes a ledger question that account's General Ledger; "what have we
invoiced", "which 2 customers … the most" and "vendor spend" ask for a figure, a ranking and a
figure per party. Wordings here are not the eval suite's; figures are checked against the demo
ERP's own database, and the deliberately wrong readings are shown to fail the same checks."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from conftest import DemoERP
from conftest import ask_offline as ask
from erp_agent.catalog import load_catalog
from erp_agent.evals.score import figure_present
from erp_agent.planner import metric_plan, shorthand, vocabulary
from erp_agent.planner.intents import understand
from erp_agent.planner.kinds import ledger as _ledger
from erp_agent.planner.reading import Kind, Request
from erp_agent.runtime import Runtime

CATALOG = load_catalog()
TODAY = dt.date(2026, 11, 30)


def read(text: str) -> Request:
    return understand(CATALOG, "erpnext", vocabulary.correct(text, CATALOG), TODAY)


def report_of(text: str) -> str | None:
    req = read(text)
    return req.report.name if req.kind == Kind.REPORT and req.report is not None else None


# ------------------------------------------------------------------ shorthand


@pytest.mark.parametrize(
    ("text", "report"),
    [
        ("A/P ageing as of today", "accounts_payable"),
        ("ap aging by supplier", "accounts_payable"),
        ("AP balances over 90 days", "accounts_payable"),
        ("a/r aging", "accounts_receivable"),
        ("PnL for the third quarter", "profit_and_loss"),
        ("P & L last year", "profit_and_loss"),
        ("what's owing to us from customers", "accounts_receivable"),
    ],
)
def test_finance_shorthand_reads_as_the_report_it_stands_for(text: str, report: str) -> None:
    assert report_of(text) == report


def wrong_reader(text: str) -> str | None:
    """A reading without the shorthand layer: 'AP' is then only a keyword that ties with the
    ageing words of receivables, and receivables come first."""
    req = understand(CATALOG, "erpnext", vocabulary.rephrase(text), TODAY)
    return req.report.name if req.report is not None else None


def test_payables_shorthand_is_never_receivables_and_the_check_catches_a_reader_that_errs() -> None:
    reads: Callable[[str], str | None]
    for reads in (report_of, wrong_reader):
        ok = reads("AP ageing") == "accounts_payable"
        assert ok is (reads is report_of)


def test_shorthand_keeps_catalog_terms_and_names() -> None:
    known = {"gl entries", "gl entry"}.__contains__
    assert shorthand.expand("GL entries of October", known) == "GL entries of October"
    assert shorthand.expand("gl for october", known) == "general ledger for october"
    # A capitalised name that starts with the letters is a name, not accounts receivable.
    assert shorthand.expand("AR Traders invoices", known) == "AR Traders invoices"


@pytest.mark.parametrize(
    ("word", "period"),
    [("mnth", "month"), ("mths", "months"), ("qtrly", "quarterly"), ("qrtr", "quarter"),
     ("yrs", "years"), ("wkly", "weekly"), ("yes", None), ("gear", None), ("mon", None)],
)  # fmt: skip
def test_period_words_typed_without_their_vowels(word: str, period: str | None) -> None:
    assert shorthand.period_word(word) == period


def test_abbreviated_period_words_group_a_figure() -> None:
    req = read("qtrly sales last yr")
    assert (req.date_part, req.period and req.period.label) == ("quarter", "2025")
    assert read("purchases per mnth this year").date_part == "month"


def test_inflected_words_are_not_corrected_into_other_words() -> None:
    # "spending" is spend, not "pending"; "billings" is bill, not "billing".
    assert vocabulary.correct("vendor spending last month", CATALOG) == "vendor spending last month"
    assert vocabulary.correct("Kisumu billings in May", CATALOG) == "Kisumu billings in May"


# ------------------------------------------------------------------ figures, rankings, per party


def test_what_was_done_asks_for_a_figure_not_the_documents() -> None:
    req = read("what have we billed customers this quarter?")
    assert req.kind == Kind.TOTAL
    assert metric_plan.pick(CATALOG, read("what did we invoice in October, before tax?")).name == (
        "revenue"
    )
    # A list stays a list.
    assert read("which invoices did we raise in October?").kind == Kind.LIST


def test_which_n_parties_most_is_a_ranking() -> None:
    req = read("which 2 customers did we sell the most to last quarter?")
    assert (req.top, req.kind) == (2, Kind.TOTAL)
    assert read("which 4 items have at most 3 units left").top is None


def test_which_one_has_the_most_is_the_top_one() -> None:
    assert read("which supplier did we spend the most with in 2025?").top == 1
    assert read("what is the most overdue invoice?").top is None


def test_a_party_before_a_figure_asks_for_it_per_party() -> None:
    purchases, revenue = CATALOG.metrics["purchases"], CATALOG.metrics["revenue"]
    assert metric_plan.party_modifiers(CATALOG, purchases, "vendor spending in May") == ["supplier"]
    assert metric_plan.party_modifiers(CATALOG, revenue, "customer revenue this year") == [
        "customer"
    ]
    assert metric_plan.party_modifiers(CATALOG, revenue, "branch sales in May") == ["branch"]
    assert metric_plan.party_modifiers(CATALOG, revenue, "company revenue in May") == []
    # The records' own name is not a party modifier.
    assert metric_plan.party_modifiers(CATALOG, revenue, "total of customer sales invoices") == []


# ------------------------------------------------------------------ ledger


def test_ledger_questions_and_the_words_that_may_name_an_account() -> None:
    assert _ledger.phrases("ledger of the Cash account for October") == ["Cash"]
    assert _ledger.phrases("postings to Bank - ST last month") == ["Bank - ST"]
    assert _ledger.phrases("what went through rent in q3") == ["rent"]
    for text, ledger in [("statement of account for Sales", True),
                         ("what came into the bank account in May", True),
                         ("what went out of petty cash", True),
                         ("sales activity this month", False)]:  # fmt: skip
        assert _ledger.asks_ledger(text) is ledger, text


def gl_debits(demo: DemoERP, account: str | None, start: str, end: str) -> float:
    """The period's debits straight from the ERP's GL entries (not through the agent)."""
    where = "is_cancelled = 0 and posting_date between ? and ?"
    params: list[Any] = [start, end]
    if account is not None:
        where += " and account = ?"
        params.append(account)
    else:
        where += " and company = 'Savanna Trading Ltd'"
    with sqlite3.connect(demo.path) as conn:
        [(total,)] = conn.execute(f"select sum(debit) from `tabGL Entry` where {where}", params)
    return round(float(total or 0), 2)


@pytest.mark.anyio
async def test_a_named_account_is_the_general_ledgers_filter(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    a = await ask(runtime, "show me the bank account's postings in october")
    reports = [c for c in a["calls"] if c["name"] == "report.general_ledger"]
    assert reports, a["calls"]
    assert reports[-1]["arguments"]["account"] == ["Bank - ST"]
    truth = gl_debits(demo_erp, "Bank - ST", "2026-10-01", "2026-10-31")
    assert truth
    assert figure_present(a["text"], truth), a["text"]
    # The ledger of every account (the filter dropped) states another figure: the check fails it.
    unfiltered = gl_debits(demo_erp, None, "2026-10-01", "2026-10-31")
    assert unfiltered != truth
    assert not figure_present(a["text"], unfiltered)
    assert a["grounded"]


@pytest.mark.anyio
async def test_debtors_in_a_ledger_question_is_the_account_not_receivables(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    a = await ask(runtime, "debtors account activity in april")
    names = [c["name"] for c in a["calls"]]
    assert "report.general_ledger" in names
    assert "report.accounts_receivable" not in names
    assert figure_present(
        a["text"], gl_debits(demo_erp, "Debtors - ST", "2026-04-01", "2026-04-30")
    )


def gl_balance(demo: DemoERP, accounts: list[str], as_of: str) -> float:
    """Debit minus credit of the accounts' GL entries up to a day (the General Ledger's closing
    balance), straight from the ERP's rows."""
    marks = ", ".join("?" * len(accounts))
    with sqlite3.connect(demo.path) as conn:
        [(total,)] = conn.execute(
            "select sum(debit) - sum(credit) from `tabGL Entry` where is_cancelled = 0 and "
            f"account in ({marks}) and posting_date <= ?",
            [*accounts, as_of],
        )
    return round(float(total or 0), 2)


def outstanding(demo: DemoERP, doctype: str, where: str) -> float:
    """What submitted invoices of a doctype still owe, straight from the ERP's rows."""
    with sqlite3.connect(demo.path) as conn:
        [(owed,)] = conn.execute(
            f"select sum(outstanding_amount) from `tab{doctype}` where docstatus = 1 and {where}"
        )
    return round(float(owed or 0), 2)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("text", "accounts", "as_of"),
    [
        ("closing balance of Creditors on 30 Sep", ["Creditors - ST"], "2026-09-30"),
        ("what was the debtors account balance at the end of june?", ["Debtors - ST"],
         "2026-06-30"),
        ("how much cash do we have in the bank", ["Cash - ST", "Bank - ST"], None),
    ],
)  # fmt: skip
async def test_an_accounts_balance_is_its_ledger_balance_at_the_date(
    runtime: Runtime, demo_erp: DemoERP, text: str, accounts: list[str], as_of: str | None
) -> None:
    a = await ask(runtime, text)
    truth = gl_balance(demo_erp, accounts, as_of or TODAY.isoformat())
    assert truth
    assert figure_present(a["text"], truth), a["text"]
    # What the control account's invoices still owe, or the balance at today instead of the
    # date asked, is another figure: the check fails a reader that gives it.
    owed = outstanding(demo_erp, "Purchase Invoice", "company = 'Savanna Trading Ltd'")
    assert not figure_present(a["text"], owed)
    if as_of is not None:
        now = gl_balance(demo_erp, accounts, TODAY.isoformat())
        assert now != truth
        assert not figure_present(a["text"], now)
    assert a["grounded"]


@pytest.mark.anyio
async def test_a_partys_balance_is_what_is_still_open_with_it(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    a = await ask(runtime, "what's the balance of Acme Ltd?")
    owed = outstanding(demo_erp, "Sales Invoice", "customer = 'Acme Ltd'")
    assert figure_present(a["text"], owed), a["text"]


@pytest.mark.anyio
async def test_who_bought_the_most_ranks_customers_by_revenue(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    a = await ask(runtime, "which two customers bought the most from us last quarter?")
    query = next(c["arguments"] for c in a["calls"] if c["name"] == "metrics.query")
    assert (query["metric"], query["group_by"], query["top"]) == ("revenue", ["customer"], 2)
    with sqlite3.connect(demo_erp.path) as conn:
        rows = list(conn.execute(
            "select customer, sum(base_net_total) s from `tabSales Invoice` where docstatus = 1 "
            "and company = 'Savanna Trading Ltd' and posting_date between '2026-07-01' and "
            "'2026-09-30' group by customer order by s desc limit 2"))  # fmt: skip
    for customer, total in rows:
        assert customer in a["text"]
        assert figure_present(a["text"], round(total, 2)), a["text"]


@pytest.mark.anyio
async def test_every_account_named_is_kept_and_a_party_ledger_is_the_partys(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    a = await ask(runtime, "GL for cash and bank in september")
    ledger = next(c["arguments"] for c in a["calls"] if c["name"] == "report.general_ledger")
    assert ledger["account"] == ["Cash - ST", "Bank - ST"]
    both = gl_debits(demo_erp, "Cash - ST", "2026-09-01", "2026-09-30") + gl_debits(
        demo_erp, "Bank - ST", "2026-09-01", "2026-09-30"
    )
    assert figure_present(a["text"], round(both, 2)), a["text"]
    # No account is called Acme: the customer's own ledger, never the whole ledger unfiltered.
    b = await ask(runtime, "ledger for Acme Ltd in the second quarter")
    ledger = next(c["arguments"] for c in b["calls"] if c["name"] == "report.general_ledger")
    assert (ledger["party_type"], ledger["party"]) == ("customer", ["Acme Ltd"])
    with sqlite3.connect(demo_erp.path) as conn:
        [(total,)] = conn.execute(
            "select sum(debit) from `tabGL Entry` where is_cancelled = 0 and party = 'Acme Ltd' "
            "and company = 'Savanna Trading Ltd' and posting_date between '2026-04-01' and "
            "'2026-06-30'"
        )
    assert figure_present(b["text"], round(total, 2)), b["text"]
    c = await ask(runtime, "ledger for Nowhere Holdings")
    assert c["text"].startswith("No records found"), c["text"]


@pytest.mark.anyio
async def test_a_name_in_an_owed_question_filters_the_figure(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    a = await ask(runtime, "how much do we owe Nairobi Steel Works?")
    # The payables figure (or the payables report) of that supplier alone.
    answered = [c["arguments"] for c in a["calls"]
                if c["name"] in ("report.accounts_payable", "metrics.query")]  # fmt: skip
    assert answered, a["calls"]
    assert all(
        args.get("supplier") == ["Nairobi Steel Works Ltd"]
        or {"dimension": "supplier", "op": "=", "value": "Nairobi Steel Works Ltd"}
        in args.get("filters", [])
        for args in answered
    ), answered
    with sqlite3.connect(demo_erp.path) as conn:
        [(owed,)] = conn.execute(
            "select sum(outstanding_amount) from `tabPurchase Invoice` where docstatus = 1 and "
            "supplier = 'Nairobi Steel Works Ltd' and company = 'Savanna Trading Ltd'"
        )
        [(everyone,)] = conn.execute(
            "select sum(outstanding_amount) from `tabPurchase Invoice` where docstatus = 1 and "
            "company = 'Savanna Trading Ltd'"
        )
    assert figure_present(a["text"], round(owed, 2)), a["text"]
    # The report for every supplier (the name dropped) states another total: the check fails it.
    assert not figure_present(a["text"], round(everyone, 2))
