"""MCP over streamable HTTP at ``/mcp`` on the server, with a bearer API key per user."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.types import ASGIApp, Receive, Scope, Send

from erp_agent.channels.keys import KeyRing
from erp_agent.channels.mcp_server import McpChannel
from erp_agent.errors import ApiKeyInvalid
from erp_agent.gateway.session import Session
from erp_agent.runtime import Runtime

KEY_SCOPE = "erp_agent_api_key"


class BearerGate:
    """Only a request with an active user API key reaches the MCP endpoint; anything else gets
    401 with a JSON-RPC error saying what to send."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []
        }
        scheme, _, key = headers.get("authorization", "").partition(" ")
        problem = "Send your erp-agent API key as 'Authorization: Bearer <key>'."
        if scheme.lower() == "bearer" and key.strip():
            try:
                await self.keys.record(key, "user")
                problem = ""
            except ApiKeyInvalid as exc:
                problem = str(exc)
        if problem:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": problem}}
            )
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})  # fmt: skip
            await send({"type": "http.response.body", "body": body.encode()})
            return
        scope.setdefault("state", {})[KEY_SCOPE] = key.strip()
        await self.app(scope, receive, send)


def mcp_over_http(
    runtime: Runtime, keys: KeyRing
) -> tuple[BearerGate, StreamableHTTPSessionManager]:
    """The ASGI app for ``/mcp`` and its session manager (run it in the server's lifespan)."""

    async def session(ctx: ServerRequestContext[Any, Any]) -> Session:
        request = ctx.request
        key = getattr(getattr(request, "state", None), KEY_SCOPE, None)
        if not isinstance(key, str):
            raise ApiKeyInvalid("This MCP request carries no API key.")
        return await keys.session(key)

    channel = McpChannel(runtime, session, web_url=runtime.settings.public_url or "")
    # Stateless: any worker answers any request (a call may name any tool the user is allowed;
    # the gateway checks it), and no MCP session needs to stick to one process.
    manager = StreamableHTTPSessionManager(app=channel.server, stateless=True, json_response=True)
    return BearerGate(StreamableHTTPASGIApp(manager), keys), manager
