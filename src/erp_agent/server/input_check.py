"""Text no layer below can store or forward is refused at the door, naming where it is.

U+0000 cannot be stored in PostgreSQL text or jsonb; a lone surrogate ("\\ud800") decodes to
text UTF-8 cannot encode; the other C0 controls (all but tab, newline and carriage return) have
no business in an id, a parameter or a message and break logs, CSV exports and the ERP's own
filters. Each once became an HTTP 500 deep in the store or an ERP call; now the path, every
path and query parameter and every string (and key) of a JSON body are checked before routing,
and the answer is 400 naming the field, in the client's protocol (``server.failures``).

Relay results are the ERP's own records, passed through unchanged: only what cannot be encoded
(a lone surrogate) is refused there; the store replaces any NUL they carry.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from erp_agent.channels.faults import Fault
from erp_agent.server.failures import fault_response

MAX_JSON_BODY = 4_000_000  # bytes; the largest legitimate body is a knowledge upload (2 MB text)
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_RELAY_RESULTS = re.compile(r"^/api/relay/turns/[^/]+/results$")


def _describe(char: str) -> str:
    point = f"U+{ord(char):04X}"
    if char == "\x00":
        return f"a NUL character ({point})"
    if "\ud800" <= char <= "\udfff":
        return f"a lone surrogate ({point}), text that UTF-8 cannot encode"
    return f"a control character ({point})"


def first_bad(
    value: Any, field: str = "", pattern: re.Pattern[str] = _FORBIDDEN
) -> tuple[str, str] | None:
    """(the field, e.g. ``messages[0].content``, and what is wrong) for the first forbidden
    character in a JSON value (keys included), else None. The field of the whole value is ""."""
    if isinstance(value, str):
        found = pattern.search(value)
        return (field, _describe(found.group())) if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{field}.{key}" if field else str(key)
            found_key = pattern.search(str(key))
            if found_key:
                return (inner, _describe(found_key.group()) + " in its name")
            bad = first_bad(item, inner, pattern)
            if bad:
                return bad
    if isinstance(value, list):
        for index, item in enumerate(value):
            bad = first_bad(item, f"{field}[{index}]", pattern)
            if bad:
                return bad
    return None


def _refusal(where: str, what: str) -> Fault:
    return Fault(
        400,
        "invalid_characters",
        f"{where[0].upper()}{where[1:]} contains {what}, which is not allowed; remove it and "
        "send the request again.",
    )


_Template = tuple[re.Pattern[str], int]


def _templates(app: Any) -> list[_Template]:
    """The app's path templates as patterns, the most literal first (``…/api-keys/org``
    before ``…/api-keys/{key_id}``), from its OpenAPI document: the one public list of routes
    with their parameters' names."""
    try:
        paths = list((app.openapi().get("paths") or {}).keys())
    except Exception:
        return []
    compiled: list[_Template] = []
    for template in paths:
        pattern = re.sub(r"\\\{(\w+)(?::path)?\\\}", r"(?P<\1>[^/]+)", re.escape(template))
        compiled.append((re.compile(f"^{pattern}$"), template.count("{")))
    return sorted(compiled, key=lambda t: t[1])


def _path_params(scope: Scope, templates: list[_Template]) -> dict[str, str]:
    root = str(scope.get("root_path") or "")
    path = str(scope.get("path") or "")
    path = path[len(root) :] if root and path.startswith(root) else path
    for pattern, _ in templates:
        found = pattern.match(path)
        if found:
            return found.groupdict()
    return {}


def _url_problem(scope: Scope, templates: list[_Template]) -> tuple[str, str, str] | None:
    """(the parameter, how to name it, what is wrong) for the path and the query string."""
    in_path = _FORBIDDEN.search(str(scope.get("path") or ""))
    if in_path:
        for name, value in _path_params(scope, templates).items():
            bad = first_bad(str(value))
            if bad:
                return name, f"the path parameter '{name}'", bad[1]
        return "", "the request path", _describe(in_path.group())
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True, errors="replace"):
        bad = first_bad(name) or first_bad(value)
        if bad:
            return name, f"the query parameter '{name}'", bad[1]
    return None


def _json_like(content_type: bytes, first: bytes) -> bool:
    if b"json" in content_type:
        return True
    # FastAPI reads a body sent without a Content-Type as JSON.
    return not content_type and first.lstrip()[:1] in (b"{", b"[")


class CleanInput:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._templates: list[_Template] | None = None  # read from the app at first use

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._templates is None:
            self._templates = _templates(scope.get("app"))
        in_url = _url_problem(scope, self._templates)
        if in_url:
            name, where, what = in_url
            await fault_response(scope, _refusal(where, what), param=name or None)(
                scope, receive, send
            )
            return
        headers = dict(scope.get("headers") or [])
        content_type = headers.get(b"content-type", b"").lower()
        first = await receive()
        chunks = [first.get("body", b"")] if first["type"] == "http.request" else []
        more = first["type"] == "http.request" and first.get("more_body", False)
        if not _json_like(content_type, chunks[0] if chunks else b""):
            await self.app(scope, _replay([first], receive), send)
            return
        size = len(chunks[0]) if chunks else 0
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_JSON_BODY:
                too_large = Fault(413, "too_large", "The request body is too large.")
                await fault_response(scope, too_large)(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            document = json.loads(body, strict=False) if body else None
        except (ValueError, RecursionError):
            document = None  # FastAPI answers malformed JSON with its own 422
        lenient = _RELAY_RESULTS.match(str(scope.get("path") or "")) is not None
        bad = first_bad(document, "", _SURROGATE if lenient else _FORBIDDEN)
        if bad:
            field, what = bad
            where = f"the field '{field}'" if field else "the request body"
            rpc_id = document.get("id") if isinstance(document, dict) else None
            response = fault_response(
                scope, _refusal(where, what), param=field or None, rpc_id=rpc_id
            )
            await response(scope, receive, send)
            return
        await self.app(scope, _replay([{"type": "http.request", "body": body}], receive), send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """The messages already read, then the rest from the client."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
