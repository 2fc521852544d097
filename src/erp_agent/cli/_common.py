"""Helpers shared by the `erp-agent` commands: settings, sign-in as a user, async running."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer
from rich.console import Console

from erp_agent.config import Settings, load_settings
from erp_agent.connectors import registry
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ErpAgentError

T = TypeVar("T")
console = Console()
err_console = Console(stderr=True)


def password_for(user: str, settings: Settings) -> str:
    if settings.password is not None:
        return settings.password.get_secret_value()
    return str(typer.prompt(f"ERP password for {user}", hide_input=True))


def connector_from(settings: Settings) -> Connector:
    service = None
    if settings.service_user and settings.service_api_key and settings.service_api_secret:
        service = Credential.token(
            settings.service_user,
            settings.service_api_key.get_secret_value(),
            settings.service_api_secret.get_secret_value(),
        )
    return registry.create(
        settings.connector, base_url=settings.erp_url, service=service, timeout=settings.erp_timeout
    )


def run_async(settings: Settings, work: Callable[[Connector], Awaitable[T]]) -> T:
    """Run ``work`` with a connector; errors become one clear line and exit code 1."""

    async def main() -> T:
        connector = connector_from(settings)
        try:
            return await work(connector)
        finally:
            await connector.aclose()

    try:
        return asyncio.run(main())
    except ErpAgentError as exc:
        err_console.print(f"[red]Error:[/] {exc}")
        raise typer.Exit(1) from exc


def run_as_user(user: str, work: Callable[[Connector, Credential], Awaitable[T]]) -> T:
    """Sign in as ``user`` and run ``work``; errors become one clear line and exit code 1."""
    settings = load_settings()
    password = password_for(user, settings)

    async def signed_in(connector: Connector) -> T:
        return await work(connector, await connector.login(user, password))

    return run_async(settings, signed_in)


__all__ = ["console", "load_settings", "password_for", "run_as_user", "run_async"]
