"""`erp-agent connector check --as USER`: what this user can read and write, asked of the ERP."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field
from typing import Annotated

import typer
from rich.table import Table

from erp_agent.cli._common import console, run_as_user
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.profile import connector_catalog

app = typer.Typer(help="Check the connection to the ERP.", no_args_is_help=True)
_CONCURRENCY = 8


@dataclass
class AccessReport:
    user: str
    roles: list[str]
    entities: dict[str, dict[str, bool]] = field(default_factory=dict)
    reports: dict[str, bool] = field(default_factory=dict)


async def probe(
    connector: Connector, cred: Credential, catalog_entities: list[str], reports: list[str]
) -> AccessReport:
    """Ask the ERP, as the user, about every catalogued entity and report."""
    gate = asyncio.Semaphore(_CONCURRENCY)

    async def entity_access(name: str) -> tuple[str, dict[str, bool]]:
        async with gate:
            return name, await connector.access(cred, name)

    async def report_access(name: str) -> tuple[str, bool]:
        async with gate:
            return name, await connector.report_access(cred, name)

    roles = await connector.roles(cred)
    entities = await asyncio.gather(*(entity_access(e) for e in catalog_entities))
    report_rows = await asyncio.gather(*(report_access(r) for r in reports))
    return AccessReport(cred.user, sorted(roles), dict(entities), dict(report_rows))


@app.command()
def check(
    user: Annotated[
        str,
        typer.Option(
            "--as", help="ERP user to sign in as (password: ERP_AGENT_PASSWORD or a prompt)."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Sign in as USER and print which entities and reports that user can read and write."""

    async def work(connector: Connector, cred: Credential) -> AccessReport:
        catalog = connector_catalog(connector)  # what this connector maps, reports included
        return await probe(connector, cred, sorted(catalog.entities), sorted(catalog.reports))

    report = run_as_user(user, work)
    if as_json:
        typer.echo(json.dumps(asdict(report), indent=2))
        return
    console.print(f"[bold]{report.user}[/] — roles: {', '.join(report.roles)}")
    ops = ["read", "create", "update", "submit", "cancel", "delete"]
    table = Table("Entity", *ops, title="Entities (as the ERP answers for this user)")
    for name, access in sorted(report.entities.items()):
        if not any(access.values()):
            continue
        table.add_row(name, *(_mark(access.get(op)) for op in ops))
    console.print(table)
    hidden = sorted(n for n, a in report.entities.items() if not any(a.values()))
    if hidden:
        console.print(f"No access: {', '.join(hidden)}")
    reports = Table("Report", "can run", title="Reports")
    for name, allowed in sorted(report.reports.items()):
        reports.add_row(name, _mark(allowed))
    console.print(reports)


def _mark(value: bool | None) -> str:
    if value is None:
        return "·"
    return "[green]yes[/]" if value else "[red]no[/]"
