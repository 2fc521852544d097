"""`erp-agent demo`: the whole product on one machine — seed and start the bundled demo ERP,
start the server with the offline planner (or the configured model), print where to sign in.

Start time matters (a first run must be usable within 30 s), so the demo data is seeded in a
second process while this one imports and assembles the agent, and indexing (knowledge, then
ERP records) runs in the background once the server answers.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from erp_agent.assembly import configure
from erp_agent.cli._common import console, ensure_port_free, fail
from erp_agent.cli._demo_agent import DEMO_PASSWORD, serve_agent
from erp_agent.cli._model import BaseUrlOption, ModelOption
from erp_agent.errors import ConfigError, ErpAgentError

if TYPE_CHECKING:
    from erp_agent.config import Settings

INDEX_AS = "admin@demo.local"  # the background record sync reads as the demo's administrator
# The demo command is the one place that runs the bundled ERP on this machine; the agent still
# talks to it over HTTP only. Seeding runs in its own process, through the demo ERP's own CLI.
_SEED = "from demo_erp.cli import app; app()"


def demo(
    port: Annotated[int, typer.Option("--port", help="Port of the web app and API.")] = 8080,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    erp_port: Annotated[
        int, typer.Option("--erp-port", help="Port of the demo ERP (0: any free port).")
    ] = 8000,
    data: Annotated[
        Path, typer.Option("--data", help="Folder for the demo ERP's database.")
    ] = Path("data"),
    scale: Annotated[
        float, typer.Option("--scale", min=0.01, help="Demo data volume when seeding (1 = full).")
    ] = 0.2,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    index: Annotated[
        bool,
        typer.Option("--index/--no-index", help="Index knowledge and records in the background."),
    ] = True,
    system: Annotated[
        str,
        typer.Option(
            "--system",
            help="erpnext: the bundled demo ERP over HTTP; sql: the bespoke demo database "
            "(SQLite) through the sql connector; tryton: a real Tryton (the optional `tryton` "
            "group) through the tryton connector.",
        ),
    ] = "erpnext",
) -> None:
    """Start the demo: demo ERP + agent server + web app. Ctrl-C stops everything."""
    started = time.monotonic()
    try:
        if system not in ("erpnext", "sql", "tryton"):
            raise ConfigError(f"--system must be erpnext, sql or tryton, not {system!r}")
        ensure_port_free(host, port, "--port")
        configured = configure(None, model, base_url)
        if system == "sql":
            from erp_agent.cli.demo_sql import serve_sql

            db_file = data / "demo-shop.sqlite"
            asyncio.run(serve_sql(db_file, host, port, model, configured, index, started))
            return
        if system == "tryton":
            from erp_agent.cli.demo_tryton import serve_tryton

            asyncio.run(
                serve_tryton(data / "tryton", host, port, model, configured, index, started)
            )
            return
        ensure_port_free("127.0.0.1", erp_port, "--erp-port")
    except KeyboardInterrupt:
        return
    except ErpAgentError as exc:
        raise fail(exc) from exc
    erp_file = data / "demo-erp.sqlite"
    seeding = None if erp_file.exists() else _start_seeding(erp_file, scale)
    try:
        asyncio.run(
            _serve(erp_file, seeding, host, port, erp_port, model, configured, index, started)
        )
    except ErpAgentError as exc:
        raise fail(exc) from exc
    except KeyboardInterrupt:
        pass
    finally:
        if seeding is not None and seeding.poll() is None:
            seeding.terminate()


def _start_seeding(erp_file: Path, scale: float) -> subprocess.Popen[bytes]:
    erp_file.parent.mkdir(parents=True, exist_ok=True)
    partial = erp_file.with_suffix(".seeding")  # renamed when complete: no half-seeded demo
    console.print(f"Seeding the demo ERP into {erp_file} (first run only)…")
    command = [sys.executable, "-c", _SEED, "seed", "--path", str(partial), "--scale", str(scale)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _finish_seeding(seeding: subprocess.Popen[bytes], erp_file: Path) -> None:
    _, errors = seeding.communicate()
    if seeding.returncode != 0:
        raise ErpAgentError(f"Seeding the demo ERP failed:\n{errors.decode(errors='replace')}")
    erp_file.with_suffix(".seeding").replace(erp_file)


async def _serve(
    erp_file: Path,
    seeding: subprocess.Popen[bytes] | None,
    host: str,
    port: int,
    erp_port: int,
    model: str | None,
    configured: Settings,
    index: bool,
    started: float,
) -> None:
    # Imported here, while the seeding process works on the other core (serve_agent's too).
    import uvicorn  # noqa: F401

    from demo_erp.context import Settings as ErpSettings  # noqa: TID251 - see _SEED
    from demo_erp.server import free_port, start_in_thread  # noqa: TID251
    from erp_agent.runtime import Runtime
    from erp_agent.server import create_app  # noqa: F401

    erp_url = f"http://127.0.0.1:{erp_port or free_port()}"
    settings = configured.model_copy(update={"erp_url": erp_url})
    runtime = await Runtime.create(settings)
    if seeding is not None:
        await asyncio.to_thread(_finish_seeding, seeding, erp_file)
    erp = start_in_thread(ErpSettings(db_path=str(erp_file)), port=int(erp_url.rsplit(":", 1)[1]))
    try:
        await serve_agent(
            runtime, settings, host, port, model, index,
            lambda name: _announce(host, port, erp_url, name, time.monotonic() - started),
            index_as=INDEX_AS,
        )  # fmt: skip
    finally:
        erp.stop()


def _announce(host: str, port: int, erp_url: str, model: str, seconds: float) -> None:
    from demo_erp.seed import DEMO_USERS  # noqa: TID251 - the demo's own user list

    url = f"http://{host}:{port}"
    console.print(f"\n[bold green]erp-agent is ready[/] in {seconds:.1f} s: [bold]{url}/[/]")
    console.print(f"  admin console: {url}/admin", soft_wrap=True)
    console.print(f"  API docs:      {url}/docs", soft_wrap=True)
    console.print(f"  demo ERP:      {erp_url}   model: {model}", soft_wrap=True)
    console.print(f"\nSign in as any demo user (password [bold]{DEMO_PASSWORD}[/]):")
    for user in DEMO_USERS:
        console.print(f"  {user.email:<30} {user.description}", soft_wrap=True)
    console.print("\nCtrl-C stops the demo.")
