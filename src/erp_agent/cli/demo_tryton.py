"""`erp-agent demo --system tryton`: the whole product on a real Tryton (trytond from PyPI, the
project's optional `tryton` group), a system of record this project did not write.

First run: a database is created in `<data>/tryton` and seeded through Tryton's own client
(two companies in two currencies, invoices in every state, a sale, a purchase, stock moves,
users with different rights); deterministic for `--seed` and `--today`. Then trytond serves it
on a free loopback port and the agent signs every user in to it with their own password.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from pathlib import Path

from erp_agent.cli._common import console
from erp_agent.cli._demo_agent import serve_agent
from erp_agent.config import Settings
from erp_agent.errors import ConfigError, ErpAgentError

INDEX_AS = "accountant"  # the background record sync reads as the demo's accountant


def _require() -> None:
    from demo_erp.tryton.instance import available  # noqa: TID251 - the demo runs its own ERP

    if not available():
        raise ConfigError(
            "Tryton is not installed. Install the project's optional group: "
            "uv sync --extra tryton (then run `erp-agent demo --system tryton` again)."
        )


async def serve_tryton(
    folder: Path,
    host: str,
    port: int,
    model: str | None,
    configured: Settings,
    index: bool,
    started: float,
    today: dt.date | None = None,
) -> None:
    from demo_erp.tryton.instance import (  # noqa: TID251 - see _require
        DATABASE,
        Server,
        TrytonError,
        build,
    )
    from erp_agent.runtime import Runtime

    _require()
    if not (folder / "seeded.json").exists():
        console.print(f"Creating and seeding a Tryton database in {folder} (first run only)…")
    try:
        built = await asyncio.to_thread(build, folder, today=today, reuse=True)
        erp = Server(folder)
        await asyncio.to_thread(erp.wait)
    except TrytonError as exc:
        raise ErpAgentError(str(exc)) from exc
    settings = configured.model_copy(update={
        "connector": "tryton", "erp_url": erp.url, "tryton_database": DATABASE,
    })  # fmt: skip
    try:
        runtime = await Runtime.create(settings)
        await serve_agent(
            runtime, settings, host, port, model, index,
            lambda name: _announce(
                host, port, erp.url, name, time.monotonic() - started, built.timings
            ),
            index_as=INDEX_AS,
        )  # fmt: skip
    finally:
        erp.stop()


def _announce(
    host: str, port: int, erp_url: str, model: str, seconds: float, timings: dict[str, float]
) -> None:
    from demo_erp.tryton.seed import PASSWORD, USERS  # noqa: TID251 - the demo's own users

    url = f"http://{host}:{port}"
    console.print(f"\n[bold green]erp-agent is ready[/] in {seconds:.1f} s: [bold]{url}/[/]")
    built = ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())
    console.print(f"  Tryton:        {erp_url} (database erp; {built})   model: {model}")
    console.print(f"\nSign in as a Tryton user (password [bold]{PASSWORD}[/]):", soft_wrap=True)
    for login, name, groups, companies, _filter in USERS:
        console.print(
            f"  {login:<12} {name}: {', '.join(groups)}; {' and '.join(companies)}",
            soft_wrap=True,
        )
    console.print("\nCtrl-C stops the demo.")
