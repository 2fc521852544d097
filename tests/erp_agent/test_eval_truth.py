"""Eval truth is independent and means what the ERP means: computed over REST in native terms,
it agrees with the ERP's own reports, and the gate fails agents that add up the wrong documents
(drafts or cancelled ones counted, a date or branch filter dropped)."""

from __future__ import annotations

import ast
import datetime as dt
import json
from collections.abc import AsyncIterator
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import TEST_TODAY, DemoERP, raw
from erp_agent.config import Settings
from erp_agent.errors import ConfigError
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.misreading import (
    Misreading,
    counting_cancelled,
    counting_drafts,
    dropping_branch,
    dropping_dates,
    faithful,
    misreading_agent,
)
from erp_agent.evals.spec import Query, Suite
from erp_agent.evals.truth import ErpTruth
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

ADMIN = "admin@demo.local"
KES = "Savanna Trading Ltd"


@pytest.fixture
async def truth(demo_erp: DemoERP) -> AsyncIterator[ErpTruth]:
    t = ErpTruth(demo_erp.url, "demo", TEST_TODAY)
    yield t
    await t.aclose()


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    rt = await Runtime.create(Settings(erp_url=demo_erp.url), store=store)
    yield rt
    await rt.aclose()


def test_truth_imports_nothing_of_the_agent() -> None:
    """The runner's truth cannot reuse the catalog, metrics, connector or tools it is judging."""
    source = (resources.files("erp_agent.evals") / "truth.py").read_text(encoding="utf-8")
    imported = {
        node.module or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    agent = {m for m in imported if m.startswith("erp_agent")}
    assert agent <= {"erp_agent.errors", "erp_agent.evals.spec"}, agent


def test_every_shipped_figure_states_its_meaning_in_erp_terms() -> None:
    for suite in load_suites():
        for case in suite.cases:
            expects = [case.expect, *(turn.expect for turn in case.then)]
            for q in [q for e in expects for q in (*e.figures, *e.forbid)]:
                assert q.doctype[0].isupper(), (suite.name, case.id, q.doctype)
                if q.op in ("sum", "count") and q.doctype != "Customer":
                    assert q.docstatus is not None, (suite.name, case.id)
                if q.op == "sum":
                    assert _one_currency(q), (suite.name, case.id)


def _one_currency(q: Query) -> bool:
    """One currency per sum: per currency, a company-currency field, a quantity (no currency),
    or company-currency amounts (Bin values, GL debits/credits) of one warehouse or account."""
    field = str(q.field)
    if "currency" in q.group_by or field.startswith("base_") or field.endswith("_qty"):
        return True
    pinned = {f for f, op, _ in q.filters if op == "="}
    return (q.doctype == "Bin" and "warehouse" in pinned) or (
        q.doctype == "GL Entry" and field in ("debit", "credit") and "account" in pinned
    )


def test_a_figure_without_its_docstatus_is_refused() -> None:
    with pytest.raises(ValueError, match="docstatus"):
        Query.model_validate({"op": "sum", "doctype": "Sales Invoice", "field": "grand_total"})
    with pytest.raises(ValueError, match="native field"):
        Query.model_validate({"op": "sum", "doctype": "Sales Invoice", "docstatus": 1})


def _sql_total(demo: DemoERP, sql: str, *params: object) -> Decimal:
    (row,) = raw(demo, sql, *params)
    return Decimal(str(row[0] or 0)).quantize(Decimal("0.01"))


@pytest.mark.anyio
async def test_truth_counts_submitted_documents_in_the_period_as_the_user(
    demo_erp: DemoERP, truth: ErpTruth
) -> None:
    """Checked against the ERP's own tables: docstatus, dates and the user's branch all apply."""
    q = Query.model_validate(
        {"op": "sum", "doctype": "Sales Invoice", "field": "grand_total", "docstatus": 1,
         "filters": [["posting_date", "between", ["{year_start}", "{year_end}"]],
                     ["company", "=", KES]]}
    )  # fmt: skip
    (value,) = await truth.figures(ADMIN, q, None)
    expected = _sql_total(
        demo_erp,
        'select sum(grand_total) from "tabSales Invoice" where docstatus = 1 and company = ? '
        "and posting_date between '2026-01-01' and '2026-12-31'",
        KES,
    )
    assert Decimal(str(value)) == expected
    (kisumu,) = await truth.figures("kisumu.manager@demo.local", q, None)
    assert Decimal(str(kisumu)) == _sql_total(
        demo_erp,
        'select sum(grand_total) from "tabSales Invoice" where docstatus = 1 and company = ? '
        "and branch = 'Kisumu' and posting_date between '2026-01-01' and '2026-12-31'",
        KES,
    )
    everything = await truth.figures(ADMIN, q.model_copy(update={"docstatus": "any"}), None)
    assert Decimal(str(everything[0])) >= Decimal(str(value))


async def _report(
    demo: DemoERP, name: str, filters: dict[str, Any], user: str = ADMIN
) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=demo.url, timeout=60) as client:
        await client.post("/api/method/login", data={"usr": user, "pwd": "demo"})
        reply = await client.post(
            "/api/method/frappe.desk.query_report.run",
            # Stock Balance is a prepared report: run it now rather than queue it.
            data={"report_name": name, "filters": json.dumps(filters), "ignore_prepared_report": 1},
        )
        reply.raise_for_status()
        message: dict[str, Any] = reply.json()["message"]
        return message


def _money(value: Any) -> Decimal:
    return Decimal(str(value or 0)).quantize(Decimal("0.01"))


@pytest.mark.anyio
async def test_receivables_truth_agrees_with_the_accounts_receivable_report(
    demo_erp: DemoERP, truth: ErpTruth
) -> None:
    report = await _report(demo_erp, "Accounts Receivable",
                           {"company": KES, "report_date": TEST_TODAY.isoformat()})  # fmt: skip
    rows = [r for r in report["result"] if isinstance(r, dict) and r.get("voucher_no")]
    from_report = sum((_money(r["outstanding"]) for r in rows), Decimal(0))
    q = Query.model_validate(
        {"op": "sum", "doctype": "Sales Invoice", "field": "outstanding_amount", "docstatus": 1,
         "filters": [["company", "=", KES], ["posting_date", "<=", "{today}"]]}
    )  # fmt: skip
    (value,) = await truth.figures(ADMIN, q, None)
    assert rows
    assert _money(value) == from_report


@pytest.mark.anyio
async def test_billed_net_truth_agrees_with_sales_analytics(
    demo_erp: DemoERP, truth: ErpTruth
) -> None:
    """Sales Analytics (value, by customer, monthly) counts submitted invoices' base_net_total."""
    filters = {"company": KES, "from_date": "2026-01-01", "to_date": "2026-06-30",
               "tree_type": "Customer", "doc_type": "Sales Invoice", "value_quantity": "Value",
               "range": "Monthly"}  # fmt: skip
    report = await _report(demo_erp, "Sales Analytics", filters)
    from_report = sum(
        (_money(r.get("total")) for r in report["result"] if isinstance(r, dict)), Decimal(0)
    )
    q = Query.model_validate(
        {"op": "sum", "doctype": "Sales Invoice", "field": "base_net_total", "docstatus": 1,
         "filters": [["company", "=", KES],
                     ["posting_date", "between", ["2026-01-01", "2026-06-30"]]]}
    )  # fmt: skip
    (value,) = await truth.figures(ADMIN, q, None)
    assert from_report > 0
    assert _money(value) == from_report


@pytest.mark.anyio
async def test_stock_truth_agrees_with_the_stock_balance_report(
    demo_erp: DemoERP, truth: ErpTruth
) -> None:
    report = await _report(demo_erp, "Stock Balance",
                           {"company": KES, "from_date": "2026-01-01",
                            "to_date": TEST_TODAY.isoformat()})  # fmt: skip
    rows = [r for r in report["result"] if isinstance(r, dict) and r.get("item_code")]
    assert rows
    by_item: dict[str, Decimal] = {}
    for r in rows:
        by_item[r["item_code"]] = by_item.get(r["item_code"], Decimal(0)) + Decimal(
            str(r["bal_qty"])
        )
    item = max(by_item, key=lambda code: by_item[code])
    q = Query.model_validate(
        {"op": "sum", "doctype": "Stock Ledger Entry", "field": "actual_qty", "docstatus": 1,
         "group_by": ["item_code"],
         "filters": [["item_code", "=", item], ["company", "=", KES],
                     ["posting_date", "<=", "{today}"], ["is_cancelled", "=", 0]]}
    )  # fmt: skip
    (value,) = await truth.figures(ADMIN, q, None)
    assert Decimal(str(value)) == by_item[item]


@pytest.mark.anyio
async def test_a_wrong_password_is_a_clear_error(demo_erp: DemoERP) -> None:
    t = ErpTruth(demo_erp.url, "not-the-password", TEST_TODAY)
    q = Query.model_validate({"op": "count", "doctype": "Customer", "docstatus": "any"})
    with pytest.raises(ConfigError, match="cannot sign in"):
        await t.figures(ADMIN, q, None)
    await t.aclose()


async def _gate(runtime: Runtime, truth: ErpTruth, suite: Suite, misread: Misreading) -> Any:
    agent = await misreading_agent(truth, suite, misread, admin=ADMIN)
    run = await run_suites(runtime, agent, [suite], password="demo", today=TEST_TODAY)
    return run.suites[0]


async def _changed_by(truth: ErpTruth, suite: Suite, misread: Misreading) -> set[str]:
    """The cases whose figure the misreading changes in this ERP's data."""
    changed = set()
    for case in suite.cases:
        for q in case.expect.figures:
            user = ADMIN if q.as_ == "admin" else case.user
            right = await truth.figures(user, q, None)
            wrong = await truth.figures(user, misread(q), None)
            if sorted(map(str, right)) != sorted(map(str, wrong)):
                changed.add(case.id)
    return changed


@pytest.mark.anyio
@pytest.mark.parametrize(
    "misread",
    [counting_drafts, counting_cancelled, dropping_dates, dropping_branch],
    ids=["drafts-counted", "cancelled-counted", "dates-dropped", "branch-dropped"],
)
async def test_the_gate_fails_an_agent_that_adds_up_the_wrong_documents(
    runtime: Runtime, truth: ErpTruth, misread: Misreading
) -> None:
    """Exactly the cases whose figure the misreading changes fail, and enough of them to sink
    the gate; the same agent stating the right figures (the control) passes every case."""
    (suite,) = load_suites(["aggregation_by_retrieval"])
    changed = await _changed_by(truth, suite, misread)
    assert len(changed) / len(suite.cases) > 1 - suite.gates["accuracy"], changed
    wrong = await _gate(runtime, truth, suite, misread)
    assert {c.case for c in wrong.cases if not c.passed} == changed
    assert not wrong.gates["accuracy"]["ok"], wrong.metrics


@pytest.mark.anyio
async def test_the_same_agent_stating_the_right_figures_passes(
    runtime: Runtime, truth: ErpTruth, demo_erp: DemoERP
) -> None:
    (suite,) = load_suites(["aggregation_by_retrieval"])
    control = await _gate(runtime, truth, suite, faithful)
    assert control.metrics["accuracy"] == 1.0, [
        (c.case, c.checks, c.error) for c in control.cases if not c.passed
    ]
    assert raw(demo_erp, 'select count(*) from "tabSales Invoice" where docstatus = 2')[0][0]
    assert raw(demo_erp, 'select count(*) from "tabSales Invoice" where docstatus = 0')[0][0]


def test_date_tokens_resolve_against_the_eval_day() -> None:
    from erp_agent.evals.truth import resolve

    assert resolve("{q2_start}", dt.date(2026, 11, 30)) == "2026-04-01"
    assert resolve(["{today-90}", "{today}"], dt.date(2026, 11, 30)) == ["2026-09-01", "2026-11-30"]


def test_period_to_date_and_earlier_period_tokens() -> None:
    from erp_agent.evals.truth import date_tokens

    def iso(day: dt.date) -> dict[str, str]:
        return {k: v.isoformat() for k, v in date_tokens(day).items()}

    end_of_march = iso(dt.date(2026, 3, 31))
    assert end_of_march["prev_month_same_day"] == "2026-02-28"  # clamped to February's end
    assert end_of_march["prev_quarter_same_day"] == "2025-12-31"
    assert end_of_march["prev_year_same_day"] == "2025-03-31"
    assert iso(dt.date(2028, 2, 29))["prev_year_same_day"] == "2027-02-28"
    new_year = iso(dt.date(2027, 1, 2))
    assert (new_year["month_before_last_start"], new_year["month_before_last_end"]) == (
        "2026-11-01", "2026-11-30",
    )  # fmt: skip
    assert (new_year["quarter_before_last_start"], new_year["quarter_before_last_end"]) == (
        "2026-07-01", "2026-09-30",
    )  # fmt: skip
    assert (new_year["prev_year_q4_start"], new_year["prev_year_q4_end"]) == (
        "2026-10-01", "2026-12-31",
    )  # fmt: skip
    # A quarter named alone is the latest begun: on 2 January, Q4 is last year's, Q1 this one.
    assert new_year["q4_end"] == "2026-12-31"
    assert new_year["q1_start"] == "2027-01-01"
    assert new_year["march_start"] == "2026-03-01"  # the latest March not after today
