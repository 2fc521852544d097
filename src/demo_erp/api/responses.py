"""Frappe-shaped JSON bodies: envelopes on success, exc_type/_server_messages on error."""

from __future__ import annotations

import json
import secrets
import traceback
from typing import Any

from starlette.responses import JSONResponse

from demo_erp.exceptions import FrappeError


def _default(value: Any) -> Any:
    return str(value)


class FrappeJSON(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, default=_default, separators=(",", ":")).encode()


def error_body(exc: FrappeError, allow_traceback: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"exc_type": exc.exc_type}
    messages = list(exc.extra_messages)
    if exc.message:
        message: dict[str, Any] = {"message": exc.message, "title": exc.title}
        if exc.indicator:
            message["indicator"] = exc.indicator
        message["raise_exception"] = 1
        message["__frappe_exc_id"] = secrets.token_hex(8)
        messages.append(message)
    if allow_traceback and exc.http_status != 404:
        text = exc.message or exc.error_message or ""
        body["exception"] = f"{exc.exc_module}.{exc.exc_type}: {text}"
        body["exc"] = json.dumps(["".join(traceback.format_exception(exc))])
    if messages:
        body["_server_messages"] = json.dumps([json.dumps(m) for m in messages])
    if exc.error_message:
        body["_error_message"] = exc.error_message
    return body


def error_body_v2(exc: FrappeError, allow_traceback: bool) -> dict[str, Any]:
    """API v2's error body (``report_error`` + ``_make_logs_v2``): one ``errors`` entry with the
    class name, the traceback when allowed, and the raised message merged in; other msgprints
    stay in ``messages``. There is no ``_error_message`` in v2."""
    error: dict[str, Any] = {"type": exc.exc_type}
    if allow_traceback and exc.http_status != 404:
        error["exception"] = "".join(traceback.format_exception(exc))
    if exc.message:
        error.update(message=exc.message, title=exc.title)
        if exc.indicator:
            error["indicator"] = exc.indicator
    body: dict[str, Any] = {"errors": [error]}
    if exc.extra_messages:
        body["messages"] = list(exc.extra_messages)
    return body


def error_response(exc: FrappeError, allow_traceback: bool, v2: bool = False) -> FrappeJSON:
    body = error_body_v2(exc, allow_traceback) if v2 else error_body(exc, allow_traceback)
    return FrappeJSON(body, status_code=exc.http_status)


def unexpected_error(exc: Exception, allow_traceback: bool, v2: bool = False) -> FrappeJSON:
    """Anything that is not a Frappe exception: a 500 with the class name, like Frappe."""
    trace = "".join(traceback.format_exception(exc))
    if v2:
        error: dict[str, Any] = {"type": type(exc).__name__}
        if allow_traceback:
            error["exception"] = trace
        return FrappeJSON({"errors": [error]}, status_code=500)
    body: dict[str, Any] = {"exc_type": type(exc).__name__}
    if allow_traceback:
        body["exception"] = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
        body["exc"] = json.dumps([trace])
    return FrappeJSON(body, status_code=500)


def with_messages(body: dict[str, Any], messages: list[dict[str, Any]], v2: bool) -> dict[str, Any]:
    """A successful reply with the msgprints the call made: ``_server_messages`` (a JSON string
    of JSON strings) in v1, a ``messages`` list in v2."""
    if messages:
        if v2:
            body["messages"] = messages
        else:
            body["_server_messages"] = json.dumps([json.dumps(m) for m in messages])
    return body


def no_nulls(doc: Any) -> Any:
    """``as_dict(no_nulls=True)``: the v1 document read omits keys whose value is null."""
    if isinstance(doc, dict):
        return {k: no_nulls(v) for k, v in doc.items() if v is not None}
    if isinstance(doc, list):
        return [no_nulls(v) for v in doc]
    return doc
