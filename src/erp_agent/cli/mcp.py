"""`erp-agent mcp --as USER`: the MCP server over stdio, for Claude Desktop and other MCP clients.

The password comes from ERP_AGENT_PASSWORD (as for `ask`), or a user API key from
ERP_AGENT_API_KEY (issued in the admin console; then ERP_AGENT_SESSION_KEY must be the server's).
Standard output is the protocol: nothing else is printed there, and nothing is asked.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from erp_agent.channels.keys import KeyRing
from erp_agent.channels.mcp_server import McpChannel
from erp_agent.cli._agent import settings_for
from erp_agent.cli._common import fail
from erp_agent.config import Settings
from erp_agent.errors import ApiKeyInvalid, ConfigError, ErpAgentError
from erp_agent.gateway.session import Session
from erp_agent.runtime import Runtime
from erp_agent.server.security import Vault


async def _session(runtime: Runtime, settings: Settings, user: str) -> Session:
    if settings.password is not None:
        return await runtime.sign_in(user, settings.password.get_secret_value())
    if settings.api_key is not None:
        key = settings.session_key.get_secret_value() if settings.session_key else None
        if key is None:
            raise ConfigError(
                "ERP_AGENT_API_KEY needs ERP_AGENT_SESSION_KEY: the server's key that encrypts "
                "the ERP credential kept with the API key."
            )
        session = await KeyRing(runtime, Vault(key)).session(settings.api_key.get_secret_value())
        if session.user != user:
            raise ApiKeyInvalid(f"This API key acts as {session.user}, not {user}.")
        return session
    raise ConfigError(
        f"Set ERP_AGENT_PASSWORD (the ERP password of {user}) or ERP_AGENT_API_KEY (a key from "
        "the admin console): an MCP server on stdio cannot ask for one."
    )


async def _serve(user: str, erp_url: str | None) -> None:
    settings = settings_for(erp_url)
    runtime = await Runtime.create(settings)
    try:
        session = await _session(runtime, settings, user)

        async def same(_: ServerRequestContext[Any, Any]) -> Session:
            return session

        channel = McpChannel(runtime, same, web_url=settings.public_url or "")
        server = channel.server
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await runtime.aclose()


def mcp(
    user: Annotated[str, typer.Option("--as", help="The ERP user the MCP client acts as.")],
    erp_url: Annotated[
        str | None, typer.Option("--erp-url", help="The ERP's address (default: configured).")
    ] = None,
) -> None:
    """Serve MCP over stdio as USER: the user's tools, through the gateway; writes only as
    proposals the user confirms."""
    try:
        asyncio.run(_serve(user, erp_url))
    except ErpAgentError as exc:
        raise fail(exc) from exc
