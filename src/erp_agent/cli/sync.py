"""`erp-agent sync`: bring the records index up to date with the ERP (delta on `modified`).

Register with ``app.command(name="sync")(sync.sync)``.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from erp_agent.catalog import load_catalog
from erp_agent.cli._common import console, err_console, load_settings, run_async
from erp_agent.connectors.base import Connector
from erp_agent.retrieval.settings import make_retriever
from erp_agent.retrieval.sync import RecordSync, SyncReport, syncable


def sync(
    entity: Annotated[
        list[str] | None, typer.Option("--entity", "-e", help="Only this entity (repeatable).")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Re-read everything and drop cards of vanished records.")
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
    catalog = load_catalog()
    entities = entity or syncable(catalog)
    unknown = [e for e in entities if e not in catalog.entities]
    if unknown:
        err_console.print(f"[red]Error:[/] unknown entities: {', '.join(unknown)}")
        raise typer.Exit(1)
    retriever = make_retriever(settings)  # the index serve uses
    password = rsettings.sync_password.get_secret_value()

    async def work(connector: Connector) -> SyncReport:
        cred = await connector.login(rsettings.sync_user or "", password)
        runner = RecordSync(
            connector, catalog, retriever.index, retriever.embedder, cred,
            tenant=rsettings.index_tenant,
        )  # fmt: skip
        report = SyncReport()
        columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
        with Progress(*columns, console=console) as bar:
            overall = bar.add_task("entities", total=len(entities))
            for name in entities:
                task = bar.add_task(f"{name}: 0 changes", total=None)
                seen = 0

                def step(entity_name: str, handled: int, task: TaskID = task) -> None:
                    nonlocal seen
                    seen += handled
                    bar.update(task, description=f"{entity_name}: {seen} changes")

                report.entities.append(await runner.sync_entity(name, full=full, progress=step))
                bar.update(task, completed=1, total=1)
                bar.update(overall, advance=1)
        return report

    try:
        report = run_async(settings, work)
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
