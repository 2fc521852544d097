"""`erp-agent sync`: bring the records index up to date with the ERP (delta on `modified`).

Cards are written keyword-only, so search works the moment this returns; their vectors are added
by the server in the background (`erp-agent serve`, `erp-agent demo`), or right here with
``--embed``. Register with ``app.command(name="sync")(sync.sync)``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from erp_agent.catalog import load_catalog
from erp_agent.cli._common import console, err_console, load_settings, run_async
from erp_agent.config import Settings
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.profile import connector_catalog
from erp_agent.errors import ErpAgentError
from erp_agent.retrieval.backfill import Backfill, Phase
from erp_agent.retrieval.backfill import Progress as JobProgress
from erp_agent.retrieval.settings import make_retriever
from erp_agent.retrieval.sync import RecordSync, SyncReport, syncable, watermark_name


class RateColumn(ProgressColumn):
    """Items per second (cards, records) of a task."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "", style="cyan")


def _bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
        TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console,
    )  # fmt: skip


def sync(
    entity: Annotated[
        list[str] | None, typer.Option("--entity", "-e", help="Only this entity (repeatable).")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Re-read everything and drop cards of vanished records.")
    ] = False,
    embed: Annotated[
        bool,
        typer.Option(
            "--embed/--no-embed",
            help="Also embed the new cards now, instead of leaving it to the server.",
        ),
    ] = False,
) -> None:
    """Sync ERP records into the search index as fact cards, as the service user
    (ERP_AGENT_SYNC_USER / ERP_AGENT_SYNC_PASSWORD; demo: admin@demo.local / demo)."""
    settings = load_settings()
    rsettings = settings.retrieval
    if not rsettings.sync_user or rsettings.sync_password is None:
        err_console.print(
            "[red]Error:[/] no sync user. Set ERP_AGENT_SYNC_USER and ERP_AGENT_SYNC_PASSWORD "
            "(for the demo ERP: admin@demo.local and demo)."
        )
        raise typer.Exit(1)
    catalog = load_catalog(site=settings.site_dir)
    entities = entity or syncable(catalog)
    unknown = [e for e in entities if e not in catalog.entities]
    if unknown:
        err_console.print(f"[red]Error:[/] unknown entities: {', '.join(unknown)}")
        raise typer.Exit(1)
    retriever = make_retriever(settings)  # the index serve uses
    password = rsettings.sync_password.get_secret_value()

    async def work(connector: Connector) -> SyncReport:
        served = connector_catalog(connector, catalog)
        cred = await connector.login(rsettings.sync_user or "", password)
        tenant = rsettings.index_tenant
        runner = RecordSync(
            connector, served, retriever.index, retriever.embedder, cred, tenant=tenant,
            on_changed=shared_cache_invalidation(settings),
        )  # fmt: skip
        report = SyncReport()
        with _bar() as bar:
            for name in [e for e in entities if e in served.entities]:
                # The size of a first (or full) read is known up front: a bar with an ETA.
                first = full or retriever.index.state(tenant, watermark_name(name)) is None
                total = await _count(connector, cred, name) if first else None
                task = bar.add_task(name, total=total)

                def step(_: str, handled: int, task: TaskID = task) -> None:
                    bar.advance(task, handled)

                report.entities.append(await runner.sync_entity(name, full=full, progress=step))
                done = bar.tasks[task].completed
                bar.update(task, total=max(done, 1) if total is None else max(total, done))
        if embed and retriever.embedder is not None:
            await _embed_now(Backfill(retriever.index, retriever.embedder, tenant=tenant))
        return report

    try:
        report = run_async(settings, work)
        waiting = retriever.keyword_only(rsettings.index_tenant)
    finally:
        retriever.index.close()
    table = Table("entity", "upserted", "removed", "watermark", title="Sync summary")
    for item in report.entities:
        if item.upserted or item.deleted:
            table.add_row(item.entity, str(item.upserted), str(item.deleted), item.watermark or "")
    console.print(table)
    console.print(
        f"{report.upserted} cards upserted, {report.deleted} removed, "
        f"{sum(1 for e in report.entities if not e.upserted and not e.deleted)} entities unchanged."
    )
    if waiting:
        console.print(
            f"Search is ready; keyword-only for {waiting:,} cards until they are embedded: the "
            "server (`erp-agent serve`) embeds them in the background, or run "
            "`erp-agent sync --embed`."
        )


async def _count(connector: Connector, cred: Credential, entity: str) -> int | None:
    try:
        return await connector.count(cred, entity)
    except ErpAgentError:
        return None  # no total: the bar still counts, without an ETA


async def _embed_now(job: Backfill) -> None:
    """Embed every pending card with a progress bar (rate, time left)."""
    import asyncio

    with _bar() as bar:
        task: TaskID | None = None

        def show(phase: Phase) -> None:
            nonlocal task
            if task is None:
                task = bar.add_task("embedding", total=phase.total)
            bar.update(task, completed=phase.done)

        job.progress = JobProgress(listeners=[show])
        await asyncio.to_thread(job.run)


def shared_cache_invalidation(settings: Settings) -> Any:
    """With a shared response cache (Redis), changed records drop the answers that read them."""
    if not (settings.redis_url and settings.response_cache_seconds):
        return None
    from erp_agent.coordination.redis_link import RedisLink
    from erp_agent.coordination.response_cache import ResponseCache

    cache = ResponseCache(RedisLink(settings.redis_url, prefix=settings.redis_prefix))
    return cache.invalidate
