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


def error_response(exc: FrappeError, allow_traceback: bool) -> FrappeJSON:
    return FrappeJSON(error_body(exc, allow_traceback), status_code=exc.http_status)


def unexpected_error(exc: Exception, allow_traceback: bool) -> FrappeJSON:
    """Anything that is not a Frappe exception: a 500 with the class name, like Frappe."""
    body: dict[str, Any] = {"exc_type": type(exc).__name__}
    if allow_traceback:
        body["exception"] = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
        body["exc"] = json.dumps(["".join(traceback.format_exception(exc))])
    return FrappeJSON(body, status_code=500)


def no_nulls(doc: Any) -> Any:
    """``as_dict(no_nulls=True)``: the v1 document read omits keys whose value is null."""
    if isinstance(doc, dict):
        return {k: no_nulls(v) for k, v in doc.items() if v is not None}
    if isinstance(doc, list):
        return [no_nulls(v) for v in doc]
    return doc
