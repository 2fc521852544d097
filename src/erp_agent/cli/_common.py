"""Helpers shared by the `erp-agent` commands: settings, sign-in as a user, async running."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer
from rich.console import Console

from erp_agent.config import Settings, load_settings
from erp_agent.connectors import registry
from erp_agent.connectors.base import Connector
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ConfigError, ErpAgentError, ErpUnavailable

T = TypeVar("T")
console = Console()
err_console = Console(stderr=True)
ERP_FAULT_EXIT = 2  # the ERP is down or not answering its API: scripts can tell it from misuse


def fail(exc: ErpAgentError) -> typer.Exit:
    """Print ``exc`` as one line on stderr; the exit to raise (2 for ERP faults, else 1)."""
    err_console.print(f"[red]Error:[/] {' '.join(str(exc).split())}", soft_wrap=True)
    return typer.Exit(ERP_FAULT_EXIT if isinstance(exc, ErpUnavailable) else 1)


def password_for(user: str, settings: Settings) -> str:
    if settings.password is not None:
        return settings.password.get_secret_value()
    return str(typer.prompt(f"ERP password for {user}", hide_input=True))


def connector_from(settings: Settings) -> Connector:
    return registry.from_settings(settings)


def run_async(settings: Settings, work: Callable[[Connector], Awaitable[T]]) -> T:
    """Run ``work`` with a connector; errors become one clear line and exit code 1 (2 when
    the ERP is down or answers something that is not its API)."""

    async def main() -> T:
        connector = connector_from(settings)
        try:
            return await work(connector)
        finally:
            await connector.aclose()

    try:
        return asyncio.run(main())
    except ErpAgentError as exc:
        raise fail(exc) from exc


def run_as_user(user: str, work: Callable[[Connector, Credential], Awaitable[T]]) -> T:
    """Sign in as ``user`` and run ``work``; errors become one clear line and exit code 1."""
    settings = load_settings()
    password = password_for(user, settings)

    async def signed_in(connector: Connector) -> T:
        return await work(connector, await connector.login(user, password))

    return run_async(settings, signed_in)


def ensure_port_free(host: str, port: int, flag: str) -> None:
    """Refuse, in one line, to start on a port something else already listens on.

    The probe binds as the server will (SO_REUSEADDR, as uvicorn and asyncio do): the
    connections of a server that just died linger in TIME_WAIT for a minute or more and must
    not keep its successor from starting; a live listener still refuses the bind."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigError(
                f"Port {port} on {host} is already in use; choose another with {flag} PORT."
            ) from exc


__all__ = [
    "console",
    "ensure_port_free",
    "fail",
    "load_settings",
    "password_for",
    "run_as_user",
    "run_async",
]
