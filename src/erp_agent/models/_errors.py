"""Provider SDK exceptions → the ModelError family.

Both official SDKs (openai, anthropic) share one exception layout (APIStatusError with a status
and a response, APITimeoutError, APIConnectionError), so one mapper serves both.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping

import anthropic
import openai

from erp_agent.errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelContextTooLong,
    ModelError,
    ModelRateLimited,
    ModelRequestBlocked,
    ModelTimeout,
    ModelUnavailable,
)

# Phrases providers use for an over-long prompt when they send no machine-readable code:
# vLLM/llama.cpp ("maximum context length"), Anthropic ("prompt is too long"), Ollama.
_CONTEXT_PHRASES = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "prompt is too long",
    "too many tokens",
    "exceeds the context",
)

_TIMEOUTS = (openai.APITimeoutError, anthropic.APITimeoutError)
_CONNECTION = (openai.APIConnectionError, anthropic.APIConnectionError)
_STATUS = (openai.APIStatusError, anthropic.APIStatusError)


def map_sdk_error(exc: Exception) -> ModelError | ModelRequestBlocked:
    """The error to raise for an SDK exception."""
    blocked = _blocked_cause(exc)
    if blocked is not None:
        return blocked
    if isinstance(exc, _TIMEOUTS):  # a subclass of APIConnectionError: test it first
        return ModelTimeout(detail=str(exc))
    if isinstance(exc, _CONNECTION):
        return ModelUnavailable(detail=f"could not connect: {exc}")
    if isinstance(exc, _STATUS):
        return from_status(exc.status_code, exc.message, exc.response.headers, exc.body)
    return ModelError(detail=f"{type(exc).__name__}: {exc}")  # e.g. an unreadable response


def from_status(
    status: int, message: str, headers: Mapping[str, str], body: object = None
) -> ModelError:
    """Map one HTTP error answer; ``body`` is the decoded error JSON, when there was one."""
    code = _error_code(body)
    text = f"{message} {code}".lower()
    if status == 429:
        return ModelRateLimited(retry_after=retry_after_seconds(headers), detail=message)
    if status in (401, 403):
        return ModelAuthError(detail=message, status=status)
    if status == 413 or (status == 400 and any(p in text for p in _CONTEXT_PHRASES)):
        return ModelContextTooLong(detail=message, status=status)
    if status == 408:
        return ModelTimeout(detail=message, status=status)
    if status >= 500:  # includes Anthropic's 529 "overloaded"
        return ModelUnavailable(detail=message, status=status)
    return ModelBadRequest(detail=message, status=status)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds the provider asked us to wait: retry-after-ms, or retry-after (seconds or a date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


def _error_code(body: object) -> str:
    """The error's code or type: OpenAI puts it in error.code, Anthropic in error.type."""
    if not isinstance(body, Mapping):
        return ""
    inner = body.get("error", body)
    if not isinstance(inner, Mapping):
        return ""
    return " ".join(str(inner[k]) for k in ("code", "type") if inner.get(k))


def _blocked_cause(exc: BaseException) -> ModelRequestBlocked | None:
    """The SDKs wrap transport errors in APIConnectionError; the test guard's error must surface."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ModelRequestBlocked):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
