"""`erp-agent mcp --as USER`: the MCP server over stdio, for Claude Desktop and other MCP clients.

The password comes from ERP_AGENT_PASSWORD (as for `ask`), or a user API key from
ERP_AGENT_API_KEY (issued in the admin console; then ERP_AGENT_SESSION_KEY must be the server's).
Standard output is the protocol: nothing else is printed there, and nothing is asked.

MCP clients give a server a fixed time to answer ``initialize`` (the MCP Inspector 15 s) and
then give up. So the handshake is answered as soon as the MCP library is loaded, while the agent
(its modules, the runtime, the sign-in) is assembled beside it, off the loop that answers; the
first tool or resource request waits for it, reporting progress every two seconds to a client
that asked for it (so a client that resets its timeout on progress keeps waiting). A failure to
assemble (a wrong password, an ERP that does not answer) is that request's error, in words, and
a line on standard error. benchmarks/mcp_start.py measures the start.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from erp_agent.calls.session import Session
    from erp_agent.config import Settings
    from erp_agent.runtime import Runtime

# What the channel serves; each is answered by the channel once it is assembled.
SERVED = ("tools/list", "tools/call", "resources/list", "resources/read")
PROGRESS_SECONDS = 2.0  # a request waiting for the start reports progress this often
STARTING = "erp-agent is starting: loading and signing in to the ERP"


async def _session(runtime: Runtime, settings: Settings, user: str) -> Session:
    from erp_agent.errors import ApiKeyInvalid, ConfigError

    if settings.password is not None:
        return await runtime.sign_in(user, settings.password.get_secret_value())
    if settings.api_key is not None:
        from erp_agent.channels.keys import KeyRing
        from erp_agent.server.security import Vault

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


def _load(erp_url: str | None) -> Settings:
    """The agent's modules and settings: seconds of imports, run in a thread."""
    import erp_agent.channels.mcp_server
    import erp_agent.runtime  # noqa: F401
    from erp_agent.cli._agent import settings_for

    return settings_for(erp_url)


async def _assemble(user: str, erp_url: str | None) -> tuple[Runtime, Server[Any]]:
    """The runtime, the user's session and the channel's server."""
    settings = await asyncio.to_thread(_load, erp_url)
    from erp_agent.channels.mcp_server import McpChannel
    from erp_agent.runtime import Runtime

    runtime = await Runtime.create(settings)
    try:
        session = await _session(runtime, settings, user)
    except BaseException:
        await runtime.aclose()
        raise

    async def same(_: Any) -> Session:
        return session

    channel = McpChannel(runtime, same, web_url=settings.public_url or "")
    return runtime, channel.server


async def _serve(user: str, erp_url: str | None) -> None:
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import INVALID_REQUEST

    from erp_agent.channels.mcp_about import INSTRUCTIONS, NAME, VERSION

    assembling = asyncio.create_task(_assemble(user, erp_url))
    assembling.add_done_callback(_say_why)

    async def channel(ctx: Any) -> Server[Any]:
        beats = 0
        while not assembling.done():
            await asyncio.wait({assembling}, timeout=PROGRESS_SECONDS)
            if not assembling.done():  # a client that counts progress waits on (a no-op for
                beats += 1  # one that sent no progress token)
                with contextlib.suppress(Exception):
                    await ctx.session.report_progress(beats, None, STARTING)
        try:
            return assembling.result()[1]
        except Exception as exc:  # the client shows this request's error: say why, in words
            raise MCPError(INVALID_REQUEST, " ".join(str(exc).split())) from exc

    def forward(method: str) -> Any:
        async def handler(ctx: Any, params: Any) -> Any:
            entry = (await channel(ctx)).get_request_handler(method)
            if entry is None:  # pragma: no cover - the channel serves every method in SERVED
                raise MCPError(INVALID_REQUEST, f"{method} is not served")
            return await entry.handler(ctx, params)

        return handler

    # The same name, instructions and capabilities as the channel's own server.
    front: Server[Any] = Server(
        NAME,
        version=VERSION,
        instructions=INSTRUCTIONS,
        on_list_tools=forward(SERVED[0]),
        on_call_tool=forward(SERVED[1]),
        on_list_resources=forward(SERVED[2]),
        on_read_resource=forward(SERVED[3]),
    )
    try:
        async with stdio_server() as (read, write):
            await front.run(read, write, front.create_initialization_options())
    finally:
        if not assembling.done():
            assembling.cancel()
        with contextlib.suppress(BaseException):
            runtime, _ = await assembling
            await runtime.aclose()


def _say_why(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        from erp_agent.cli._common import err_console

        exc = task.exception()
        err_console.print(f"[red]Error:[/] {' '.join(str(exc).split())}", soft_wrap=True)


def mcp(
    user: Annotated[str, typer.Option("--as", help="The ERP user the MCP client acts as.")],
    erp_url: Annotated[
        str | None, typer.Option("--erp-url", help="The ERP's address (default: configured).")
    ] = None,
) -> None:
    """Serve MCP over stdio as USER: the user's tools, through the gateway; writes only as
    proposals the user confirms."""
    from erp_agent.cli._common import fail
    from erp_agent.errors import ErpAgentError

    try:
        asyncio.run(_serve(user, erp_url))
    except ErpAgentError as exc:
        raise fail(exc) from exc
