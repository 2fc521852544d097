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
from erp_agent.cli.demo_sql import mapping_path
from erp_agent.config import Settings, load_settings
from erp_agent.errors import ErpAgentError
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.report import failures, families, table, to_json
from erp_agent.evals.runner import EvalRun
from erp_agent.evals.spec import System
from erp_agent.models.base import ChatModel
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store


def _bespoke_demo(settings: Settings, tmp: Path, today: dt.date | None) -> Settings:
    """A throwaway bespoke demo database, seeded as of ``today``, for the sql suites (whose
    truth is written against its schema) when no sql database is configured."""
    from demo_erp.bespoke.seed import seed  # noqa: TID251 - the eval seeds its own demo data

    url = f"sqlite:///{tmp / 'bespoke.sqlite'}"
    seed(url, today=today or dt.date.today())
    return settings.model_copy(
        update={"connector": "sql", "erp_url": url, "sql_mapping": str(mapping_path())}
    )


async def _run(
    settings: Settings, offline: bool, suites: list[str], password: str, today: dt.date | None,
    system: System,
) -> EvalRun:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="erp-agent-eval-") as tmp:
        if system == "sql" and settings.connector != "sql":
            settings = await asyncio.to_thread(_bespoke_demo, settings, Path(tmp), today)
        # Eval conversations go to a throwaway store, never the deployment's.
        store = open_store(f"sqlite+aiosqlite:///{Path(tmp) / 'eval.sqlite'}")
        runtime = await Runtime.create(settings, store=store)
        # The model under test answers alone: no planner fallback hides its failures.
        model: ChatModel = (
            OfflinePlanner(runtime.catalog, runtime.connector.name)
            if offline
            else runtime.models.model("reasoning", org="eval")
        )
        try:
            chosen = load_suites(suites or None, system)
            return await run_suites(runtime, model, chosen, password=password, today=today)
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
    system: Annotated[
        str | None,
        typer.Option(
            help="erpnext or sql: whose suites to run (default: the configured connector's). "
            "sql without a configured sql database seeds a throwaway bespoke demo database."
        ),
    ] = None,
) -> None:
    """Score a model on the eval suites; exit 1 when a suite's gate fails."""
    settings = load_settings()
    chosen = system or ("sql" if settings.connector == "sql" else "erpnext")
    if chosen not in ("erpnext", "sql"):
        err_console.print(f"[red]Error:[/] --system is erpnext or sql, not {chosen!r}")
        raise typer.Exit(2)
    target: System = "sql" if chosen == "sql" else "erpnext"
    password = settings.password.get_secret_value() if settings.password else "demo"
    try:
        day = dt.date.fromisoformat(today) if today else None
        configured = configure(settings, model, base_url)
        run = asyncio.run(_run(configured, model == "offline", suite or [], password, day, target))
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
