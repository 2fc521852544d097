"""`erp-agent eval`: score a model on the eval suites against the configured ERP, or against
a throwaway demo seeded as of ``--today`` when none is configured.

Exit code 0 when every suite's gates pass, 1 when a gate fails (so CI can use it), 2 on a
configuration error."""

from __future__ import annotations

import asyncio
import datetime as dt
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from erp_agent.assembly import configure
from erp_agent.cli._common import console, err_console
from erp_agent.cli._model import BaseUrlOption
from erp_agent.cli.demo_sql import mapping_path
from erp_agent.config import Settings, load_settings
from erp_agent.errors import ConfigError, ErpAgentError
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.report import failures, families, table, to_json
from erp_agent.evals.runner import CONCURRENCY, EvalRun
from erp_agent.evals.spec import System
from erp_agent.models.base import ChatModel
from erp_agent.planner import OfflinePlanner
from erp_agent.retrieval.knowledge import packaged_root
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import SQLStore

STORE_LOCK_SECONDS = 60.0
# The throwaway demo ERP's data when none is configured: the test suite's seed and volume.
DEMO_SEED = 42
DEMO_SCALE = 0.1


@dataclass(frozen=True)
class Throwaway:
    """A demo data set the run seeds for itself as of ``--today`` (no system configured)."""

    seed: int | None
    scale: float | None


def _bespoke_demo(
    settings: Settings, tmp: Path, today: dt.date | None, seed_value: int | None
) -> Settings:
    """A throwaway bespoke demo database, seeded as of ``today``, for the sql suites (whose
    truth is written against its schema) when no sql database is configured."""
    from demo_erp.bespoke.seed import seed  # noqa: TID251 - the eval seeds its own demo data

    url = f"sqlite:///{tmp / 'bespoke.sqlite'}"
    day = today or dt.date.today()
    if seed_value is None:
        seed(url, today=day)  # the bespoke demo's own default seed
    else:
        seed(url, seed=seed_value, today=day)
    return settings.model_copy(
        update={"connector": "sql", "erp_url": url, "sql_mapping": str(mapping_path())}
    )


@contextmanager
def _demo_erp(
    settings: Settings, tmp: Path, today: dt.date | None, demo: Throwaway
) -> Iterator[Settings]:
    """A throwaway demo ERP, seeded as of ``today`` and served on a free loopback port for the
    run, with the agent's data (the starter knowledge base's index) in ``tmp``."""
    from demo_erp.seed import seed  # noqa: TID251 - the eval seeds its own demo data
    from demo_erp.server import settings_for, start_in_thread  # noqa: TID251

    day = today or dt.date.today()
    path = tmp / "demo-erp.sqlite"
    seed(path, seed=DEMO_SEED if demo.seed is None else demo.seed, today=day,
         scale=DEMO_SCALE if demo.scale is None else demo.scale)  # fmt: skip
    server = start_in_thread(settings_for(path, today=day))
    try:
        yield settings.model_copy(update={"erp_url": server.url, "data_dir": str(tmp / "agent")})
    finally:
        server.stop()


@contextmanager
def _tryton_demo(
    settings: Settings, tmp: Path, today: dt.date | None, seed_value: int | None
) -> Iterator[Settings]:
    """A throwaway Tryton demo (the optional `tryton` group), seeded as of ``today`` and served
    on a free loopback port for the run."""
    from demo_erp.tryton.instance import DATABASE, Server, build  # noqa: TID251 - see above

    build(tmp / "tryton", seed=7 if seed_value is None else seed_value, today=today)
    server = Server(tmp / "tryton")
    try:
        server.wait()
        yield settings.model_copy(update={"connector": "tryton", "erp_url": server.url,
                                          "tryton_database": DATABASE})  # fmt: skip
    finally:
        server.stop()


async def _run(
    settings: Settings, offline: bool, suites: list[str], password: str, today: dt.date | None,
    system: System, demo: Throwaway | None, concurrency: int,
) -> EvalRun:  # fmt: skip
    chosen = load_suites(suites or None, system)  # a wrong name fails before any seeding
    with tempfile.TemporaryDirectory(prefix="erp-agent-eval-") as tmp, ExitStack() as stack:
        if system == "sql" and demo is not None:
            settings = await asyncio.to_thread(_bespoke_demo, settings, Path(tmp), today, demo.seed)
        elif system == "tryton" and demo is not None:
            settings = await asyncio.to_thread(
                stack.enter_context, _tryton_demo(settings, Path(tmp), today, demo.seed)
            )
        elif demo is not None:
            settings = await asyncio.to_thread(
                stack.enter_context, _demo_erp(settings, Path(tmp), today, demo)
            )
        # Eval conversations go to a throwaway store, never the deployment's; the concurrent
        # cases' writes wait their turn for its lock as long as a turn may take.
        store = SQLStore(f"sqlite+aiosqlite:///{Path(tmp) / 'eval.sqlite'}",
                         lock_timeout=STORE_LOCK_SECONDS)  # fmt: skip
        runtime = await Runtime.create(settings, store=store)
        # The model under test answers alone: no planner fallback hides its failures.
        model: ChatModel = (
            OfflinePlanner(runtime.catalog, runtime.connector.name)
            if offline
            else runtime.models.model("reasoning", org="eval")
        )
        try:
            if demo is not None and system == "erpnext":
                # Process questions are answered from the starter knowledge base, as on the demo.
                await asyncio.to_thread(runtime.knowledge.index_path, packaged_root())
            return await run_suites(runtime, model, chosen, password=password, today=today,
                                    concurrency=concurrency)  # fmt: skip
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
            help="erpnext, sql or tryton: whose suites to run (default: the configured "
            "connector's). "
            "Without a configured ERP (or sql database) a throwaway demo is seeded as of --today."
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            help=f"Random seed of the throwaway demo data (default {DEMO_SEED}; the bespoke "
            "database's own default on sql). Only when no ERP is configured."
        ),
    ] = None,
    scale: Annotated[
        float | None,
        typer.Option(
            min=0.01,
            help=f"Volume of the throwaway demo ERP's data (default {DEMO_SCALE}). Only when no "
            "ERP is configured.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Cases asked at once (each in its own conversation).")
    ] = CONCURRENCY,
) -> None:
    """Score a model on the eval suites; exit 1 when a suite's gate fails."""
    settings = load_settings()
    chosen = system or (
        settings.connector if settings.connector in ("sql", "tryton") else "erpnext"
    )
    if chosen not in ("erpnext", "sql", "tryton"):
        err_console.print(f"[red]Error:[/] --system is erpnext, sql or tryton, not {chosen!r}")
        raise typer.Exit(2)
    target: System = "sql" if chosen == "sql" else "tryton" if chosen == "tryton" else "erpnext"
    password = settings.password.get_secret_value() if settings.password else "demo"
    try:
        demo = _throwaway(settings, target, seed, scale)
        day = dt.date.fromisoformat(today) if today else None
        configured = configure(settings, model, base_url)
        run = asyncio.run(
            _run(configured, model == "offline", suite or [], password, day, target, demo,
                 concurrency)
        )  # fmt: skip
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


def _throwaway(
    settings: Settings, system: System, seed: int | None, scale: float | None
) -> Throwaway | None:
    """The demo data to seed for the run: when no system of record is configured (no
    ERP_AGENT_ERP_URL for erpnext; the sql connector not configured for sql; the tryton
    connector not configured for tryton: a Tryton demo is then built and served)."""
    if system == "tryton":
        if scale is not None:
            raise ConfigError("--scale sizes the demo ERP; the Tryton demo has one size.")
        return None if settings.connector == "tryton" else Throwaway(seed, None)
    if system == "sql":
        if scale is not None:
            raise ConfigError("--scale sizes the demo ERP; the bespoke sql demo has one size.")
        if settings.connector != "sql":
            return Throwaway(seed, None)
        if seed is not None:
            raise ConfigError("--seed seeds a throwaway demo database, but a sql database is "
                              "configured (ERP_AGENT_CONNECTOR=sql): unset it, or drop --seed.")  # fmt: skip
        return None
    if "erp_url" in settings.model_fields_set or settings.connector != "erpnext":
        if seed is not None or scale is not None:
            raise ConfigError(
                f"--seed and --scale seed a throwaway demo ERP, but an ERP is configured "
                f"({settings.erp_url}): unset ERP_AGENT_ERP_URL to seed one, or drop them."
            )
        return None
    return Throwaway(seed, scale)
