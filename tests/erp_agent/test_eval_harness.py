"""The eval harness: the offline planner passes every built-in gate against the demo ERP; a
model that invents a figure fails; the CLI exits non-zero when a gate fails."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import TEST_TODAY, DemoERP
from erp_agent.config import Settings
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.spec import builtin_names
from erp_agent.models.testing import ScriptedModel
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

FAILURE_MODES = (
    "aggregation_by_retrieval",
    "exact_identifier",
    "cross_tenant",
    "stale_record",
    "out_of_scope",
)


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    rt = await Runtime.create(Settings(erp_url=demo_erp.url), store=store)
    yield rt
    await rt.aclose()


def test_builtin_suites_cover_the_failure_modes_with_ten_cases_each() -> None:
    suites = {s.name: s for s in load_suites()}
    assert set(builtin_names()) == set(suites) >= {*FAILURE_MODES, "routing", "groundedness"}
    for name in FAILURE_MODES:
        assert len(suites[name].cases) >= 10, name
        assert suites[name].gates, name
    # Expected figures are REST queries in the ERP's own terms, never typed numbers.
    for suite in suites.values():
        for case in suite.cases:
            assert all(q.doctype for q in case.expect.figures)


@pytest.mark.anyio
async def test_offline_planner_passes_every_gate(runtime: Runtime) -> None:
    # The paraphrase suite has its own gate test (test_eval_paraphrase.py).
    suites = load_suites([n for n in builtin_names() if n != "paraphrase"])
    run = await run_suites(
        runtime, OfflinePlanner(runtime.catalog), suites, password="demo", today=TEST_TODAY
    )
    failed = {
        s.name: {g: v for g, v in s.gates.items() if not v["ok"]} for s in run.suites if not s.ok
    }
    details = [
        (c.suite, c.case, c.checks, c.error, c.answer[:160])
        for s in run.suites
        for c in s.cases
        if not c.passed
    ]
    assert run.ok, (failed, details)
    by_name = {s.name: s for s in run.suites}
    # Every figure, computed independently from the ERP's REST API, is right.
    assert by_name["aggregation_by_retrieval"].metrics["accuracy"] == 1.0, details
    assert all(s.metrics["groundedness"] == 1.0 for s in run.suites)


@pytest.mark.anyio
async def test_a_model_that_invents_a_figure_fails(runtime: Runtime) -> None:
    liar = ScriptedModel(
        *[ScriptedModel.reply("The total is 987,654,321.09 and the status is Paid.")] * 200
    )
    suites = load_suites(["aggregation_by_retrieval", "groundedness"])
    run = await run_suites(runtime, liar, suites, password="demo", today=TEST_TODAY)
    assert not run.ok
    agg, grounded = run.suites
    assert agg.metrics["accuracy"] == 0.0
    assert not agg.gates["accuracy"]["ok"]
    assert grounded.metrics["groundedness"] == 0.0
    assert not grounded.gates["groundedness"]["ok"]


def test_cli_exit_codes(demo_erp: DemoERP, monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from erp_agent.cli.eval import command

    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    app = typer.Typer()
    app.command()(command)
    ok = CliRunner().invoke(
        app, ["--suite", "routing", "--json", "--today", TEST_TODAY.isoformat()]
    )
    assert ok.exit_code == 0, ok.output
    assert '"ok": true' in ok.output
    unknown = CliRunner().invoke(app, ["--suite", "no_such_suite"])
    assert unknown.exit_code == 2
    assert "Built-in suites" in unknown.output
    bad_model = CliRunner().invoke(app, ["--model", "llama"])
    assert bad_model.exit_code != 0
