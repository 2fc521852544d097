"""Requests that fit a small context window (a self-hosted model with 8k tokens).

Tool schemas are most of a first request (26 tools ≈ 11k tokens). Below ``COMPACT_BELOW``
tokens of context (or whenever the model's ``compact_tools`` setting says so) every tool is
sent compact (see ``_schemas.compact``, ≈ 5k tokens for the same tools) — always, so the bytes
stay the same from request to request and a prefix cache holds. If the request still does not
fit, tools are left off: first a few always-offered ones a small model rarely needs, then from
the end of the list; ``tools.search`` can offer them again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from erp_agent.models._schemas import compact
from erp_agent.models.base import Message

# Rarely needed always-offered tools, in the order they are left off when a request is too long.
FIRST_TO_LEAVE = (
    "workflow.pending",
    "workflow.describe",
    "display.cards",
    "records.search",
    "metrics.catalog",
    "display.choices",
)
COMPACT_BELOW = 32_768  # tokens of context under which tool schemas are sent compact
ANSWER_RESERVE = 1024  # tokens left for the answer


def request_tokens(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> int:
    """About four characters a token, counted over the JSON a server receives."""
    text = json.dumps([m.to_openai() for m in messages]) + json.dumps(list(tools))
    return math.ceil(len(text) / 4)


def fit(
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]],
    window: int,
    compact_tools: bool | None = None,
) -> list[dict[str, Any]]:
    """``tools`` as sent to a model reading ``window`` tokens; ``compact_tools`` None chooses
    compact schemas below ``COMPACT_BELOW``."""
    small = window < COMPACT_BELOW if compact_tools is None else compact_tools
    if not tools or (not small and window >= COMPACT_BELOW):
        return list(tools)
    fitted = [compact(t) for t in tools] if small else list(tools)
    budget = window - min(ANSWER_RESERVE, window // 8)
    while len(fitted) > 1 and request_tokens(messages, fitted) > budget:
        fitted.pop(_next_to_leave(fitted))
    return fitted


def _next_to_leave(tools: list[dict[str, Any]]) -> int:
    """The always-offered tools a small model can best do without go first (each is reachable
    through tools.search), then the last of the list: the request's own tools stay longest."""
    names = [str(t.get("function", {}).get("name", "")) for t in tools]
    for name in FIRST_TO_LEAVE:
        if name in names:
            return names.index(name)
    return len(tools) - 1
