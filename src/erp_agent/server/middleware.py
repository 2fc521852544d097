"""Plain ASGI middleware (no buffering, so SSE streams pass straight through)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from erp_agent.server.prometheus import Metrics
from erp_agent.server.proxy import route_path

# Our pages load only their own scripts and styles; the API docs (/docs) keep FastAPI's CDN.
_PAGE_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            # The route template, not the raw path: ids must not explode the label set.
            path = getattr(route, "path", None) or (
                "/static" if route_path(scope).startswith("/static/") else "other"
            )
            self.metrics.requests.labels(scope["method"], path, str(status)).inc()


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = route_path(scope)  # below ERP_AGENT_ROOT_PATH: /agent/admin is the admin page
        is_page = path in ("/", "/admin") or path.startswith("/static/")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                headers.append((b"referrer-policy", b"same-origin"))
                if is_page:
                    headers.append((b"content-security-policy", _PAGE_CSP.encode()))
                    headers.append((b"x-frame-options", b"DENY"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
