"""The eval harness on the sql system: the bespoke suite, whose truth is hand-written SQL run
straight on the database, passes its gates with the offline planner on SQLite, MariaDB and
PostgreSQL; a wrong truth and a wrong answer each fail the scorer; the CLI runs it on its own."""

from __future__ import annotations

import ast
import re
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path

import pytest
from sql_databases import DIALECTS, MAPPING, database, raw, seeded
from typer.testing import CliRunner

from conftest import TEST_TODAY
from erp_agent.config import Settings
from erp_agent.errors import ConfigError
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.spec import Suite
from erp_agent.models.testing import ScriptedModel
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

FAMILIES = {"totals", "counts", "by_branch", "by_month", "top_n", "lookup", "cross_scope",
            "stale_record"}  # fmt: skip


async def _runtime(url: str, tmp: Path) -> Runtime:
    store = open_store(f"sqlite+aiosqlite:///{tmp / f'store-{abs(hash(url))}.sqlite'}")
    settings = Settings(connector="sql", erp_url=url, sql_mapping=str(MAPPING))
    return await Runtime.create(settings, store=store)


@pytest.fixture
async def sqlite_runtime(tmp_path: Path) -> AsyncIterator[tuple[str, Runtime]]:
    with database("sqlite", tmp_path) as url:
        seeded(url, per_branch=20)
        runtime = await _runtime(url, tmp_path)
        yield url, runtime
        await runtime.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", DIALECTS)
async def test_offline_planner_passes_the_bespoke_gates(dialect: str, tmp_path: Path) -> None:
    with database(dialect, tmp_path) as url:
        seeded(url, per_branch=20)
        runtime = await _runtime(url, tmp_path)
        try:
            (suite,) = load_suites(["bespoke"], "sql")
            planner = OfflinePlanner(runtime.catalog, runtime.connector.name)
            run = await run_suites(runtime, planner, [suite], password="demo", today=TEST_TODAY)
        finally:
            await runtime.aclose()
        # The edits of the stale-record cases were restored.
        assert raw(url, "select count(*) from customers where credit_limit * 100 "
                        "<> round(credit_limit * 100)")[0][0] == 0  # fmt: skip
    (result,) = run.suites
    failed = [(c.case, c.checks, c.error, c.answer[:160]) for c in result.cases if not c.passed]
    assert result.ok, (result.gates, failed)
    assert {c.family for c in result.cases} == FAMILIES
    # Nothing of another branch or tenant reached any answer.
    assert result.metrics["accuracy[cross_scope]"] == 1.0, failed
    assert result.metrics["groundedness"] == 1.0


# The wider suite is held to its gate, which the offline planner now meets.
BREADTH_FLOOR = {"accuracy": 0.9, "groundedness": 1.0}


@pytest.mark.anyio
async def test_the_breadth_suite_holds_its_floor(sqlite_runtime: tuple[str, Runtime]) -> None:
    _, runtime = sqlite_runtime
    (suite,) = load_suites(["bespoke_breadth"], "sql")
    planner = OfflinePlanner(runtime.catalog, runtime.connector.name)
    run = await run_suites(runtime, planner, [suite], password="demo", today=TEST_TODAY)
    (result,) = run.suites
    reached = {k: result.metrics[k] for k in BREADTH_FLOOR}
    failing = [(c.case, c.checks, c.answer[:120]) for c in result.cases if not c.passed]
    assert all((reached[k] or 0) >= floor for k, floor in BREADTH_FLOOR.items()), (reached, failing)
    assert suite.gates == {"accuracy": 0.9, "groundedness": 1.0}


def _one_case(suite: Suite, case_id: str, **changes: object) -> Suite:
    case = next(c for c in suite.cases if c.id == case_id)
    return suite.model_copy(update={"cases": [case], **changes})


@pytest.mark.anyio
async def test_a_wrong_truth_fails_the_scorer(sqlite_runtime: tuple[str, Runtime]) -> None:
    _, runtime = sqlite_runtime
    (suite,) = load_suites(["bespoke"], "sql")
    right = _one_case(suite, "revenue-this-year-1")
    query = right.cases[0].expect.figures[0]
    # Drafts and void invoices counted: a truth that misreads what revenue means.
    misread = query.model_copy(update={"sql": query.sql.replace(
        "and stage = 'posted' ", "")})  # fmt: skip
    expect = right.cases[0].expect.model_copy(update={"figures": [misread]})
    wrong = right.model_copy(
        update={"cases": [right.cases[0].model_copy(update={"expect": expect})]}
    )
    planner = OfflinePlanner(runtime.catalog, runtime.connector.name)
    ok = await run_suites(runtime, planner, [right], password="demo", today=TEST_TODAY)
    bad = await run_suites(runtime, planner, [wrong], password="demo", today=TEST_TODAY)
    assert ok.suites[0].cases[0].passed, ok.suites[0].cases[0]
    assert not bad.suites[0].cases[0].passed
    assert not bad.ok


@pytest.mark.anyio
async def test_a_wrong_answer_fails_the_scorer(sqlite_runtime: tuple[str, Runtime]) -> None:
    url, runtime = sqlite_runtime
    (suite,) = load_suites(["bespoke"], "sql")
    one = _one_case(suite, "revenue-this-year-1")
    (total,) = raw(url, "select sum(net_amount) from invoices where tenant_id = 'SAVANNA' and "
                        "stage = 'posted' and deleted_at is null and issued_on >= '2026-01-01'")[0]  # fmt: skip
    right, off = float(total), float(total) + 100

    async def answered(text: str) -> bool:
        model = ScriptedModel(*[ScriptedModel.reply(text)] * 4)
        run = await run_suites(runtime, model, [one], password="demo", today=TEST_TODAY)
        return run.suites[0].cases[0].checks["figure0"]

    assert await answered(f"Revenue this year: KES {right:,.2f}.")  # the control passes
    assert not await answered(f"Revenue this year: KES {off:,.2f}.")
    # A figure no tool returned is not grounded, even when it happens to be right.
    model = ScriptedModel(*[ScriptedModel.reply(f"KES {right:,.2f}")] * 4)
    run = await run_suites(runtime, model, [one], password="demo", today=TEST_TODAY)
    assert run.suites[0].metrics["groundedness"] == 0.0


def test_sql_truth_imports_nothing_of_the_agent() -> None:
    source = (resources.files("erp_agent.evals") / "sql_truth.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    agent = {m for m in imported if m.startswith("erp_agent")}
    assert agent <= {"erp_agent.errors", "erp_agent.evals.spec", "erp_agent.evals.truth"}, agent


def test_every_sql_figure_is_a_select_that_states_its_scope() -> None:
    (suite,) = load_suites(["bespoke"], "sql")
    assert suite.system == "sql"
    assert len(suite.cases) >= 30
    cases = [c for s in load_suites(None, "sql") for c in s.cases]
    for case in cases:
        expects = [case.expect, *(t.expect for t in case.then)]
        for q in [q for e in expects for q in (*e.figures, *e.forbid)]:
            sql = q.sql
            assert re.match(r"\s*select\b", sql), case.id
            assert "tenant_id" in sql or ":pick_" in sql or "branch_id" in sql, case.id


def test_a_suite_of_the_other_system_is_refused() -> None:
    path = resources.files("erp_agent.evals") / "suites" / "sql" / "bespoke.yaml"
    with pytest.raises(ConfigError, match="another system"):
        load_suites([str(path)])  # an erpnext run given the sql suite's file
    with pytest.raises(ValueError, match="hand-written SQL"):
        Suite.model_validate({"name": "x", "system": "sql", "cases": [{
            "id": "c", "question": "q", "expect": {"figures": [
                {"op": "count", "doctype": "Sales Invoice", "docstatus": 1}]}}]})  # fmt: skip


@pytest.mark.anyio
async def test_an_erpnext_suite_is_refused_on_the_sql_system(
    sqlite_runtime: tuple[str, Runtime],
) -> None:
    _, runtime = sqlite_runtime
    with pytest.raises(ConfigError, match="not written for the sql system"):
        await run_suites(runtime, OfflinePlanner(), load_suites(["routing"]), password="demo")


def test_cli_runs_the_sql_suites_on_a_fresh_demo_database(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from erp_agent.cli.eval import command

    monkeypatch.delenv("ERP_AGENT_CONNECTOR", raising=False)
    app = typer.Typer()
    app.command()(command)
    day = ["--today", TEST_TODAY.isoformat()]
    out = CliRunner().invoke(app, ["--system", "sql", "--suite", "bespoke", *day])
    assert out.exit_code == 0, out.output
    assert "bespoke" in out.output
    assert "cross_scope" in out.output
    # Every sql suite: both meet their gates, so the run exits 0.
    every = CliRunner().invoke(app, ["--system", "sql", "--json", *day])
    assert every.exit_code == 0, every.output
    assert '"bespoke_breadth"' in every.output
    bad = CliRunner().invoke(app, ["--system", "odoo"])
    assert bad.exit_code == 2
    assert "erpnext, sql or tryton" in bad.output


def test_the_url_of_the_truth_is_checked() -> None:
    from erp_agent.evals.sql_truth import SqlTruth

    with pytest.raises(ConfigError, match="not a database URL"):
        SqlTruth("https://erp.example/api", TEST_TODAY)
