"""`erp-agent subscriptions`: list, run, pause, resume and delete subscriptions, and enable a
user's subscriptions (the ERP issues the user an API key pair their runs use while they are
away). `run` is one tick: for a deployment without a queue worker, put it in cron."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table

from erp_agent.cli._common import console, fail, load_settings, password_for
from erp_agent.errors import ConfigError, ErpAgentError
from erp_agent.runtime import Runtime
from erp_agent.subscriptions.models import Status
from erp_agent.subscriptions.runner import SubscriptionRunner
from erp_agent.subscriptions.service import SubscriptionService

T = TypeVar("T")
app = typer.Typer(
    help="Subscriptions: list, run due ones now, pause, resume, delete; enable a user.",
    no_args_is_help=True,
)


def _with_service(work: Callable[[SubscriptionService], Awaitable[T]]) -> T:
    async def main() -> T:
        runtime = await Runtime.create(load_settings())
        try:
            if runtime.subscriptions is None:
                raise ConfigError("Subscriptions need the agent's SQL store.")
            return await work(runtime.subscriptions)
        finally:
            await runtime.aclose()

    try:
        return asyncio.run(main())
    except ErpAgentError as exc:
        raise fail(exc) from exc


@app.command("list")
def list_(
    user: Annotated[str | None, typer.Option("--user", help="Only this user's.")] = None,
) -> None:
    """Every subscription (or one user's): schedule, status and last result."""

    async def work(service: SubscriptionService) -> list[dict[str, Any]]:
        return [{**service.view(s), "user": s.user} for s in await service.store.listing(user=user)]

    found = _with_service(work)
    table = Table("id", "user", "title", "when", "status", "next run", "last result")
    for s in found:
        status = s["status"] + (f": {s['status_message']}" if s["status_message"] else "")
        when = s["schedule"] + (f", {s['condition']}" if s["condition"] else "")
        table.add_row(s["id"], s["user"], s["title"], when, status, s["next_run"] or "—",
                      s["last_value"] or s["last_outcome"] or "—")  # fmt: skip
    console.print(table if found else "No subscriptions.")


@app.command()
def run() -> None:
    """Run every due subscription and retry due deliveries now (one tick)."""

    async def work(service: SubscriptionService) -> dict[str, int]:
        return await SubscriptionRunner(service).tick()

    report = _with_service(work)
    console.print(
        f"Ran {report['ran']} subscription(s); retried {report['retried']} delivery(ies)."
    )


def _status(sub_id: str, status: Status) -> None:
    async def work(service: SubscriptionService) -> dict[str, Any]:
        sub = await service.store.get(sub_id)
        if sub is None:
            raise ConfigError(f"There is no subscription {sub_id}.")
        return await service.set_status(sub.user, sub.id, status)

    console.print(_with_service(work)["message"])


@app.command()
def pause(sub_id: Annotated[str, typer.Argument(help="The subscription's id.")]) -> None:
    """Pause a subscription."""
    _status(sub_id, Status.PAUSED)


@app.command()
def resume(sub_id: Annotated[str, typer.Argument(help="The subscription's id.")]) -> None:
    """Resume a paused subscription."""
    _status(sub_id, Status.ACTIVE)


@app.command()
def delete(sub_id: Annotated[str, typer.Argument(help="The subscription's id.")]) -> None:
    """Delete a subscription."""

    async def work(service: SubscriptionService) -> dict[str, Any]:
        sub = await service.store.get(sub_id)
        if sub is None:
            raise ConfigError(f"There is no subscription {sub_id}.")
        return await service.delete(sub.user, sub.id)

    console.print(_with_service(work)["message"])


@app.command()
def enable(
    user: Annotated[str, typer.Argument(help="The ERP user whose subscriptions will run.")],
    admin: Annotated[
        str, typer.Option("--as", help="An ERP System Manager (asked for a password).")
    ],
) -> None:
    """Enable USER's subscriptions: the ERP issues them an API key pair, kept sealed."""
    password = password_for(admin, load_settings())

    async def work(service: SubscriptionService) -> str:
        cred = await service.runtime.connector.login(admin, password)
        return await service.enable_user(cred, admin, user)

    source = _with_service(work)
    console.print(f"Subscriptions of {user} run with an API key pair {source} ({dt.date.today()}).")


@app.command()
def disable(user: Annotated[str, typer.Argument(help="The ERP user.")]) -> None:
    """Forget USER's standing credential: their subscriptions stop delivering."""

    async def work(service: SubscriptionService) -> bool:
        return await service.store.forget_credential(user)

    console.print(f"Forgot {user}'s credential." if _with_service(work) else f"{user} had none.")
