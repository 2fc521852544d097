"""Plain ASGI middleware (no buffering, so SSE streams pass straight through)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from erp_agent.server.metrics import Metrics

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
                "/static" if scope["path"].startswith("/static/") else "other"
            )
            self.metrics.requests.labels(scope["method"], path, str(status)).inc()


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        is_page = scope["path"] in ("/", "/admin") or scope["path"].startswith("/static/")

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


_SURROGATE = re.compile(r"[\ud800-\udfff]")
MAX_JSON_BODY = 4_000_000  # bytes; the largest legitimate body is a knowledge upload (2 MB text)


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


class CleanJSONBodies:
    """Refuse, up front and in words, JSON bodies no layer below could store or forward: a lone
    surrogate ("\\ud800") decodes to text that UTF-8 cannot encode, so it would fail deep in
    the store or the ERP call as an HTTP 500. Too large or undecodable bodies are refused too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] != "http" or b"json" not in headers.get(b"content-type", b""):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_JSON_BODY:
                await _refuse(scope, receive, send, 413, "The request body is too large.")
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        problem = None
        if body:
            try:
                if _has_lone_surrogate(json.loads(body)):
                    problem = (
                        "The request contains text that is not valid Unicode (a lone surrogate "
                        "such as \\ud800); remove that character and send it again."
                    )
            except (ValueError, RecursionError):
                pass  # FastAPI answers malformed JSON with its own 422
        if problem:
            await _refuse(scope, receive, send, 422, problem)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, text: str) -> None:
    await JSONResponse({"detail": text}, status_code=status)(scope, receive, send)
