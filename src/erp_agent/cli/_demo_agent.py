"""The agent as every demo serves it (`erp-agent demo` on ERPNext, on the bespoke database, on
Tryton): the web app started and announced, then the knowledge and the ERP's records indexed in
the background. Its own module so that each system's demo imports it and the command's dispatch
imports each system's demo, without a circle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from erp_agent.cli._common import console
from erp_agent.errors import ErpAgentError

if TYPE_CHECKING:
    from erp_agent.config import Settings
    from erp_agent.retrieval.backfill import Progress
    from erp_agent.retrieval.retriever import Retriever
    from erp_agent.runtime import Runtime
    from erp_agent.server.knowledge import IndexedKnowledge

DEMO_PASSWORD = "demo"  # every bundled demo's users sign in with it


async def serve_agent(
    runtime: Runtime,
    settings: Settings,
    host: str,
    port: int,
    model: str | None,
    index: bool,
    announce: Callable[[str], None],
    index_as: str,
) -> None:
    """The agent's web app over ``runtime``, as every demo serves it (on ERPNext, the bespoke
    database or Tryton): started, announced with the model's name, indexed in the background
    once it answers; the runtime and the model switch are closed when it stops."""
    import uvicorn

    from erp_agent.assembly import assemble

    assembly = await assemble(settings, model, runtime=runtime)
    server = uvicorn.Server(
        uvicorn.Config(
            assembly.app(), host=host, port=port, log_level="warning", proxy_headers=False
        )
    )
    serving = asyncio.create_task(server.serve())
    background = None
    try:
        while not server.started:
            if serving.done():
                await serving  # raises why it could not start (e.g. the port is taken)
                return
            await asyncio.sleep(0.05)
        announce(assembly.switch.describe()["model"])
        if index:
            background = asyncio.create_task(
                _index(settings, assembly.knowledge, runtime.retriever, runtime, index_as=index_as)
            )
        await serving
    finally:
        if background is not None:
            background.cancel()
        await assembly.aclose()


async def _index(
    settings: Settings,
    knowledge: IndexedKnowledge,
    retriever: Retriever,
    runtime: Runtime,
    index_as: str,
) -> None:
    """Knowledge first (small), then the ERP's records as fact cards — in a worker thread with
    its own event loop and connector, because embedding is CPU-bound and would stall requests."""
    try:
        report = await knowledge.reindex()
        console.print(
            f"[dim]Knowledge indexed: {len(report['indexed'])} new, "
            f"{report['unchanged']} unchanged.[/]"
        )
        progress = runtime.index_progress
        entities = await asyncio.to_thread(
            asyncio.run, _sync_records(settings, retriever, progress, index_as)
        )
        waiting = await asyncio.to_thread(retriever.keyword_only, "default")
        console.print(
            f"[dim]Records searchable: {entities} entities; {waiting:,} cards are being embedded "
            "in the background.[/]"
        )
        # In-process scheduling (the embedded default): delta syncs from the watermarks.
        interval = settings.retrieval.sync_interval
        while True:
            await asyncio.sleep(interval)
            await asyncio.to_thread(
                asyncio.run, _sync_records(settings, retriever, progress, index_as)
            )
    except ErpAgentError as exc:
        console.print(f"[yellow]Background indexing stopped:[/] {exc}")


async def _sync_records(
    settings: Settings, retriever: Retriever, progress: Progress, index_as: str
) -> int:
    """Keyword-ready sync; the server's background job adds the vectors."""
    from erp_agent.cli._common import connector_from
    from erp_agent.connectors.profile import connector_catalog
    from erp_agent.retrieval.sync import RecordSync

    connector = connector_from(settings)
    try:
        credential = await connector.login(index_as, DEMO_PASSWORD)
        sync = RecordSync(
            connector, connector_catalog(connector), retriever.index, retriever.embedder, credential,
            status=progress,
        )  # fmt: skip
        return len((await sync.sync(embed=False)).entities)
    finally:
        await connector.aclose()
