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
from erp_agent.config import ModelSettings, load_settings
from erp_agent.errors import ErpAgentError
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.report import failures, families, table, to_json
from erp_agent.evals.runner import EvalRun
from erp_agent.models.base import ChatModel
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def model_from(spec: str) -> ChatModel:
    """'offline', 'openai:MODEL' or 'anthropic:MODEL' → a ChatModel."""
    if spec == "offline":
        return OfflinePlanner()
    provider, _, name = spec.partition(":")
    if provider not in _KEY_ENV or not name:
        raise typer.BadParameter(
            f"Unknown model {spec!r}. Use offline, openai:MODEL (e.g. openai:gpt-4.1) or "
            "anthropic:MODEL (e.g. anthropic:claude-sonnet-4-5)."
        )
    from erp_agent.models.registry import build_model

    return build_model(ModelSettings(provider=provider, model=name, api_key_env=_KEY_ENV[provider]))


async def _run(
    model: ChatModel, suites: list[str], password: str, today: dt.date | None
) -> EvalRun:
    settings = load_settings()
    with tempfile.TemporaryDirectory(prefix="erp-agent-eval-") as tmp:
        # Eval conversations go to a throwaway store, never the deployment's.
        store = open_store(f"sqlite+aiosqlite:///{Path(tmp) / 'eval.sqlite'}")
        runtime = await Runtime.create(settings, store=store)
        try:
            return await run_suites(
                runtime, model, load_suites(suites or None), password=password, today=today
            )
        finally:
            await runtime.aclose()
            await model.aclose()


def command(
    model: Annotated[
        str, typer.Option(help="offline | openai:MODEL | anthropic:MODEL")
    ] = "offline",
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
        run = asyncio.run(_run(model_from(model), suite or [], password, day))
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
