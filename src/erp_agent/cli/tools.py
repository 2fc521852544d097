"""`erp-agent tools --as USER`: the tools a user is offered, grouped by module."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.cli._common import console, load_settings, password_for, run_async
from erp_agent.connectors.base import Connector
from erp_agent.connectors.profile import connector_catalog
from erp_agent.gateway.policy import load_policy
from erp_agent.gateway.signin import sign_in
from erp_agent.tools.base import ToolRegistry
from erp_agent.tools.factories import catalog_tools


def build_registry(connector: Connector | None = None) -> ToolRegistry:
    """The catalog's tools, as ``connector`` can serve them when one is given."""
    catalog = load_catalog() if connector is None else connector_catalog(connector)
    return ToolRegistry(catalog_tools(catalog))


def tools(
    user: Annotated[
        str, typer.Option("--as", help="ERP user (password: ERP_AGENT_PASSWORD or a prompt).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="As a read-only workspace would.")
    ] = False,
) -> None:
    """Sign in as USER and list the tools they are offered (role policy ∩ what the ERP grants)."""
    settings = load_settings()
    password = password_for(user, settings)
    registry = ToolRegistry()

    async def work(connector: Connector) -> Session:
        registry.extend(build_registry(connector))
        return await sign_in(
            connector, registry, load_policy(), user, password, read_only=read_only
        )

    session = run_async(settings, work)
    offered = [t for t in registry if t.name in session.allowed_tools]
    grouped: dict[str, list[str]] = {}
    for tool in offered:
        grouped.setdefault(tool.module, []).append(tool.name)
    if as_json:
        payload = {
            "user": user,
            "roles": sorted(session.roles),
            "count": len(offered),
            "modules": {m: sorted(names) for m, names in sorted(grouped.items())},
        }
        typer.echo(json.dumps(payload, indent=2))
        return
    console.print(
        f"[bold]{user}[/] — {len(offered)} of {len(registry)} tools — roles: {', '.join(sorted(session.roles))}"
    )
    table = Table("Module", "Tools", title="Tools offered", show_lines=True)
    for module, names in sorted(grouped.items()):
        table.add_row(module, ", ".join(sorted(names)))
    console.print(table)
