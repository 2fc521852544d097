"""Requests that fit a small context window (a self-hosted model with 8k tokens).

Tool schemas are most of a first request (24 tools ≈ 11k tokens). Below ``COMPACT_BELOW``
tokens of context every tool is sent compact (see ``_schemas.compact``) — always, so the bytes
stay the same from request to request and a prefix cache holds. If the request still does not
fit, tools are left off from the end of the list (the router puts the always-offered ones
first); ``tools.search`` can offer them again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from erp_agent.models._schemas import compact
from erp_agent.models.base import Message

COMPACT_BELOW = 32_768  # tokens of context under which tool schemas are sent compact
ANSWER_RESERVE = 1024  # tokens left for the answer


def request_tokens(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> int:
    """About four characters a token, counted over the JSON a server receives."""
    text = json.dumps([m.to_openai() for m in messages]) + json.dumps(list(tools))
    return math.ceil(len(text) / 4)


def fit(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], window: int
) -> list[dict[str, Any]]:
    if window >= COMPACT_BELOW or not tools:
        return list(tools)
    fitted = [compact(t) for t in tools]
    budget = window - min(ANSWER_RESERVE, window // 8)
    while len(fitted) > 1 and request_tokens(messages, fitted) > budget:
        fitted.pop()
    return fitted
