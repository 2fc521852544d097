"""`erp-agent eval`: score a model on the eval suites against the configured ERP.

Exit code 0 when every suite's gates pass, 1 when a gate fails (so CI can use it), 2 on a
configuration error."""

from __future__ import annotations

import asyncio
import datetime as dt
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from erp_agent.cli._common import console, err_console
from erp_agent.cli._model import BaseUrlOption, configure
from erp_agent.config import Settings, load_settings
from erp_agent.errors import ErpAgentError
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.report import failures, families, table, to_json
from erp_agent.evals.runner import EvalRun
from erp_agent.models.base import ChatModel
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store


async def _run(
    settings: Settings, offline: bool, suites: list[str], password: str, today: dt.date | None
) -> EvalRun:
    with tempfile.TemporaryDirectory(prefix="erp-agent-eval-") as tmp:
        # Eval conversations go to a throwaway store, never the deployment's.
        store = open_store(f"sqlite+aiosqlite:///{Path(tmp) / 'eval.sqlite'}")
        runtime = await Runtime.create(settings, store=store)
        # The model under test answers alone: no planner fallback hides its failures.
        model: ChatModel = (
            OfflinePlanner() if offline else runtime.models.model("reasoning", org="eval")
        )
        try:
            return await run_suites(
                runtime, model, load_suites(suites or None), password=password, today=today
            )
        finally:
            await runtime.aclose()
            await model.aclose()


def command(
    model: Annotated[
        str,
        typer.Option(
            help="offline, or PRESET:NAME (openai:, anthropic:, ollama:, vllm:, llamacpp:, "
            "lmstudio:, openai-compatible: with --base-url)"
        ),
    ] = "offline",
    base_url: BaseUrlOption = None,
    suite: Annotated[
        list[str] | None,
        typer.Option("--suite", help="Suite name or YAML path (repeatable; default: all)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    today: Annotated[
        str | None, typer.Option(help="The ERP's business date (YYYY-MM-DD); default: today.")
    ] = None,
) -> None:
    """Score a model on the eval suites; exit 1 when a suite's gate fails."""
    settings = load_settings()
    password = settings.password.get_secret_value() if settings.password else "demo"
    try:
        day = dt.date.fromisoformat(today) if today else None
        configured = configure(settings, model, base_url)
        run = asyncio.run(_run(configured, model == "offline", suite or [], password, day))
    except (ErpAgentError, ValueError) as exc:
        err_console.print(f"[red]Error:[/] {exc}")
        raise typer.Exit(2) from exc
    if as_json:
        print(to_json(run))
    else:
        console.print(table(run))
        per_family = families(run)
        if per_family is not None:
            console.print(per_family)
        failures(run, console)
    if not run.ok:
        raise typer.Exit(1)
