"""The eval harness on a real Tryton: the tryton suite, whose truth is stated in Tryton's terms
and computed over Tryton's JSON-RPC by the eval's own client (never the connector), passes its
gates with the offline planner; a truth that misreads "booked" fails the scorer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tryton_fixtures import PASSWORD, Tryton, tryton  # noqa: F401 - session fixture

from conftest import TEST_TODAY
from erp_agent.config import Settings
from erp_agent.evals import load_suites, run_suites
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio


@pytest.fixture
async def runtime(tryton: Tryton, tmp_path: Path) -> AsyncIterator[Runtime]:  # noqa: F811
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    settings = Settings(connector="tryton", erp_url=tryton.url, tryton_database=tryton.database)
    rt = await Runtime.create(settings, store=store)
    yield rt
    await rt.aclose()


async def test_offline_planner_passes_the_tryton_gates(runtime: Runtime) -> None:
    (suite,) = load_suites(["tryton"], "tryton")
    planner = OfflinePlanner(runtime.catalog, runtime.connector.name)
    run = await run_suites(runtime, planner, [suite], password=PASSWORD, today=TEST_TODAY)
    (result,) = run.suites
    failed = [(c.case, c.checks, c.error, c.answer[:200]) for c in result.cases if not c.passed]
    assert result.ok, (result.gates, failed)
    assert result.metrics["groundedness"] == 1.0


async def test_a_truth_that_counts_drafts_fails_the_scorer(runtime: Runtime) -> None:
    (suite,) = load_suites(["tryton"], "tryton")
    case = next(c for c in suite.cases if c.id == "invoiced-this-year-per-company-1")
    query = case.expect.figures[0]
    misread = query.model_copy(update={"state": ["draft", "validated", "posted", "paid"]})
    expect = case.expect.model_copy(update={"figures": [misread]})
    wrong = suite.model_copy(update={"cases": [case.model_copy(update={"expect": expect})]})
    planner = OfflinePlanner(runtime.catalog, runtime.connector.name)
    bad = await run_suites(runtime, planner, [wrong], password=PASSWORD, today=TEST_TODAY)
    assert not bad.suites[0].cases[0].passed


def test_a_tryton_suite_states_its_truth_in_trytons_terms() -> None:
    from erp_agent.evals.spec import Suite

    with pytest.raises(ValueError, match="Tryton's terms"):
        Suite.model_validate({"name": "x", "system": "tryton", "cases": [{
            "id": "c", "question": "q", "expect": {"figures": [
                {"op": "count", "doctype": "Sales Invoice", "docstatus": 1}]}}]})  # fmt: skip
    with pytest.raises(ValueError, match="Tryton's terms"):
        Suite.model_validate({"name": "x", "cases": [{
            "id": "c", "question": "q", "expect": {"figures": [
                {"op": "count", "model": "account.invoice", "state": "any"}]}}]})  # fmt: skip


def test_cli_runs_the_tryton_suite_on_the_configured_tryton(
    tryton: Tryton,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import typer
    from typer.testing import CliRunner

    from erp_agent.cli.eval import command

    monkeypatch.setenv("ERP_AGENT_CONNECTOR", "tryton")
    monkeypatch.setenv("ERP_AGENT_ERP_URL", tryton.url)
    monkeypatch.setenv("ERP_AGENT_TRYTON_DATABASE", tryton.database)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", PASSWORD)
    app = typer.Typer()
    app.command()(command)
    out = CliRunner().invoke(app, ["--suite", "tryton", "--today", TEST_TODAY.isoformat()])
    assert out.exit_code == 0, out.output
    assert "tryton" in out.output
