"""`erp-agent demo`: the whole product on one machine — seed and start the bundled demo ERP,
start the server with the offline planner (or the configured model), print where to sign in.

Indexing (knowledge documents, then ERP records) runs in the background once the server
answers, so the demo is usable at once and search improves as indexing finishes.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import typer
import uvicorn

# The demo command is the one place that starts the bundled ERP in this process; the agent
# still talks to it over HTTP only.
from demo_erp.context import Settings as ErpSettings  # noqa: TID251
from demo_erp.seed import DEMO_USERS, seed  # noqa: TID251
from demo_erp.server import start_in_thread  # noqa: TID251
from erp_agent.catalog import load_catalog
from erp_agent.cli._common import connector_from, console, err_console, load_settings
from erp_agent.cli._model import model_for
from erp_agent.config import Settings
from erp_agent.errors import ErpAgentError
from erp_agent.models.registry import ModelRegistry
from erp_agent.retrieval.knowledge import KnowledgeBase
from erp_agent.retrieval.retriever import Retriever
from erp_agent.retrieval.settings import RetrievalSettings, make_retriever
from erp_agent.retrieval.sync import RecordSync
from erp_agent.runtime import Runtime
from erp_agent.server import ModelSwitch, create_app
from erp_agent.server.knowledge import IndexedKnowledge

DEMO_PASSWORD = "demo"
INDEX_AS = "admin@demo.local"  # the background record sync reads as the demo's administrator


def demo(
    port: Annotated[int, typer.Option("--port", help="Port of the web app and API.")] = 8080,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    erp_port: Annotated[
        int, typer.Option("--erp-port", help="Port of the demo ERP (0: any free).")
    ] = 0,
    data: Annotated[
        Path, typer.Option("--data", help="Folder for the demo ERP and the agent's data.")
    ] = Path("data"),
    scale: Annotated[
        float, typer.Option("--scale", min=0.01, help="Demo data volume when seeding (1 = full).")
    ] = 0.25,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="offline, or provider:model; default: configured, else offline."
        ),
    ] = None,
    index: Annotated[
        bool,
        typer.Option("--index/--no-index", help="Index knowledge and records in the background."),
    ] = True,
) -> None:
    """Start the demo: demo ERP + agent server + web app. Ctrl-C stops everything."""
    started = time.monotonic()
    erp_file = data / "demo-erp.sqlite"
    if not erp_file.exists():
        data.mkdir(parents=True, exist_ok=True)
        with console.status("Seeding the demo ERP (first run only)…") as status:
            summary = seed(
                erp_file,
                scale=scale,
                password=DEMO_PASSWORD,
                progress=lambda s: status.update(f"Seeding: {s}"),
            )
        console.print(f"Seeded {erp_file} in {summary.seconds:.1f} s.")
    erp = start_in_thread(ErpSettings(db_path=str(erp_file)), host="127.0.0.1", port=erp_port)
    try:
        asyncio.run(_serve(erp.url, host, port, data, model, index, started))
    except ErpAgentError as exc:
        err_console.print(f"[red]Error:[/] {exc}")
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        pass
    finally:
        erp.stop()


async def _serve(
    erp_url: str, host: str, port: int, data: Path, model: str | None, index: bool, started: float
) -> None:
    settings = load_settings().model_copy(update={"erp_url": erp_url, "data_dir": str(data)})
    runtime = await Runtime.create(settings)
    # --model fills the local slot; without it the configured model (if any) serves first.
    registry = ModelRegistry.from_settings(settings) if model is None else ModelRegistry()
    switch = ModelSwitch(
        lambda: model_for(runtime, model or "offline"),
        registry=registry,
        local_name=model or "offline-planner",
    )
    knowledge, retriever = _knowledge(data)
    app = create_app(runtime, switch, knowledge=knowledge)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving  # raises why it could not start (e.g. the port is taken)
            return
        await asyncio.sleep(0.05)
    _announce(host, port, erp_url, switch.describe()["model"], time.monotonic() - started)
    background = None
    if index and knowledge is not None and retriever is not None:
        background = asyncio.create_task(_index(settings, knowledge, retriever))
    elif index:
        console.print(
            "[dim]Knowledge and record indexing skipped: the retrieval index is not available.[/]"
        )
    try:
        await serving
    finally:
        if background is not None:
            background.cancel()
        await switch.aclose()
        await runtime.aclose()


def _announce(host: str, port: int, erp_url: str, model: str, seconds: float) -> None:
    console.print(
        f"\n[bold green]erp-agent is ready[/] in {seconds:.1f} s: [bold]http://{host}:{port}/[/]"
    )
    console.print(
        f"  admin console: http://{host}:{port}/admin   API docs: http://{host}:{port}/docs"
    )
    console.print(f"  demo ERP: {erp_url}   model: {model}")
    console.print(f"\nSign in as any demo user (password [bold]{DEMO_PASSWORD}[/]):")
    for user in DEMO_USERS:
        console.print(f"  {user.email:<30} {user.description}")
    console.print("\nCtrl-C stops the demo.")


def _knowledge(data: Path) -> tuple[IndexedKnowledge | None, Retriever | None]:
    """The knowledge upload for the admin console and the index to fill, if retrieval works."""
    settings = RetrievalSettings()
    try:
        retriever = make_retriever(settings)
    except ErpAgentError as exc:
        console.print(f"[dim]Knowledge upload unavailable: {exc}[/]")
        return None, None
    kb = KnowledgeBase(retriever, settings.index_tenant)
    return IndexedKnowledge(kb, data / "knowledge"), retriever


async def _index(settings: Settings, knowledge: IndexedKnowledge, retriever: Retriever) -> None:
    """Knowledge first (small), then the ERP's records as fact cards — in a worker thread with
    its own event loop and connector, because embedding is CPU-bound and would stall requests."""
    try:
        report = await knowledge.reindex()
        console.print(
            f"[dim]Knowledge indexed: {len(report['indexed'])} new, {report['unchanged']} unchanged.[/]"
        )
        entities = await asyncio.to_thread(asyncio.run, _sync_records(settings, retriever))
        console.print(f"[dim]Records indexed: {entities} entities.[/]")
    except ErpAgentError as exc:
        console.print(f"[yellow]Background indexing stopped:[/] {exc}")


async def _sync_records(settings: Settings, retriever: Retriever) -> int:
    connector = connector_from(settings)
    try:
        credential = await connector.login(INDEX_AS, DEMO_PASSWORD)
        sync = RecordSync(
            connector, load_catalog(), retriever.index, retriever.embedder, credential
        )
        return len((await sync.sync()).entities)
    finally:
        await connector.aclose()
