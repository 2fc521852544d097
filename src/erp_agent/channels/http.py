"""MCP over streamable HTTP at ``/mcp`` on the server, with a bearer API key per user.

There is no OAuth for MCP here: a missing or wrong key is 401 with the reason in words (a
JSON-RPC error, which MCP clients show) and a bare ``Bearer`` challenge naming no authorization
server, and the OAuth discovery documents answer 404 saying to send an API key, so a client is
not sent through a sign-in flow that cannot succeed."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from erp_agent.calls.session import Session
from erp_agent.channels.keys import KeyRing
from erp_agent.channels.mcp_server import McpChannel
from erp_agent.errors import ApiKeyInvalid
from erp_agent.runtime import Runtime

KEY_SCOPE = "erp_agent_api_key"


NO_OAUTH = (
    "erp-agent offers no OAuth for MCP: send your erp-agent API key (admin console, API keys) "
    "as 'Authorization: Bearer <key>'."
)
# Where OAuth clients look for an authorization server (RFC 9728, RFC 8414, OpenID discovery).
OAUTH_DISCOVERY = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)


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
        challenge = b'Bearer realm="erp-agent"'
        if scheme.lower() == "bearer" and key.strip():
            try:
                await self.keys.record(key, "user")
                problem = ""
            except ApiKeyInvalid as exc:
                problem = str(exc)
                challenge += b', error="invalid_token"'
        if problem:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": problem}}
            )
            # No resource_metadata: there is no authorization server to send the client to.
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", challenge)]})  # fmt: skip
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


async def no_oauth(_: Request) -> JSONResponse:
    """The OAuth discovery documents: 404, in words, so a client stops looking for a sign-in."""
    return JSONResponse({"error": "not_found", "error_description": NO_OAUTH}, status_code=404)
