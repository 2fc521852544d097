"""The eval harness: a model that invents a figure fails; the CLI exits non-zero when a gate
fails, and seeds a throwaway demo ERP as of --today when none is configured. (The offline
planner's gates, on every date and data set: test_eval_dates.py.)"""

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


def test_cli_seeds_its_own_demo_erp_when_none_is_configured(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import json

    import typer

    from erp_agent.cli.eval import command

    monkeypatch.delenv("ERP_AGENT_ERP_URL", raising=False)
    monkeypatch.setenv("ERP_AGENT_DATA_DIR", str(tmp_path))
    app = typer.Typer()
    app.command()(command)
    args = ["--suite", "exact_identifier", "--json", "--today", "2027-01-02", "--seed", "7"]
    done = CliRunner().invoke(app, [*args, "--scale", "0.05"])
    assert done.exit_code in (0, 1), done.output
    run = json.loads(done.output)
    assert run["today"] == "2027-01-02"
    assert run["seconds"] > 0
    (suite,) = run["suites"]
    # Its picks found documents in the freshly seeded ERP: no case failed for want of one.
    assert not [c for c in suite["cases"] if c["error"]], suite["cases"]
    monkeypatch.setenv("ERP_AGENT_ERP_URL", "http://127.0.0.1:9")
    refused = CliRunner().invoke(app, ["--suite", "routing", "--seed", "7"])
    assert refused.exit_code == 2
    assert "unset ERP_AGENT_ERP_URL" in refused.output
