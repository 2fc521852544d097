"""`erp-agent demo --system sql`: the whole product on the bespoke demo database (SQLite), a
system of record that is not ERPNext, through the sql connector and its mapping file."""

from __future__ import annotations

import asyncio
import time
from importlib import resources
from pathlib import Path

from erp_agent.cli._common import console
from erp_agent.cli._demo_agent import DEMO_PASSWORD, serve_agent
from erp_agent.config import Settings

INDEX_AS = "owner@savanna.test"  # the background record sync reads as the demo's owner


def mapping_path() -> Path:
    """The packaged mapping of the bespoke demo database."""
    return Path(str(resources.files("demo_erp.bespoke").joinpath("mapping.yaml")))


def _seed(path: Path) -> None:
    from demo_erp.bespoke.seed import seed  # noqa: TID251 - the demo command seeds its own data

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".seeding")  # renamed when complete: no half-seeded demo
    partial.unlink(missing_ok=True)
    seed(f"sqlite:///{partial}")
    partial.replace(path)


async def serve_sql(
    db_file: Path,
    host: str,
    port: int,
    model: str | None,
    configured: Settings,
    index: bool,
    started: float,
) -> None:
    from erp_agent.runtime import Runtime

    if not db_file.exists():
        console.print(f"Seeding the bespoke demo database into {db_file} (first run only)…")
        await asyncio.to_thread(_seed, db_file)
    settings = configured.model_copy(update={
        "connector": "sql", "erp_url": f"sqlite:///{db_file}", "sql_mapping": str(mapping_path()),
    })  # fmt: skip
    runtime = await Runtime.create(settings)
    await serve_agent(
        runtime, settings, host, port, model, index,
        lambda name: _announce(host, port, db_file, name, time.monotonic() - started),
        index_as=INDEX_AS,
    )  # fmt: skip


def _announce(host: str, port: int, db_file: Path, model: str, seconds: float) -> None:
    from demo_erp.bespoke.seed import USERS  # noqa: TID251 - the demo's own user list

    url = f"http://{host}:{port}"
    console.print(f"\n[bold green]erp-agent is ready[/] in {seconds:.1f} s: [bold]{url}/[/]")
    console.print(f"  database:      sqlite:///{db_file} (sql connector)   model: {model}")
    console.print(
        f"\nSign in as a user of the bespoke database (password [bold]{DEMO_PASSWORD}[/]):"
    )
    for email, name, tenant, branches, roles in USERS:
        if branches:
            console.print(f"  {email:<24} {name}, {tenant} — {branches} ({roles})", soft_wrap=True)
    console.print("\nCtrl-C stops the demo.")
