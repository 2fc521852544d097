"""Tools that fit a small context window (a self-hosted model with 8k tokens).

Below ``COMPACT_BELOW`` tokens of context (or whenever the model's ``compact_tools`` setting
says so) every tool is sent compact (see ``_schemas.compact``: descriptions cut to their first
sentence, every enum kept) — always, so the bytes stay the same from request to request and a
prefix cache holds.

What is sent depends on the tools alone, never on the messages: a conversation's tools array
only grows at its end (the engine appends), so the tools sent for it only grow at their end
too, and a later round never drops a tool an earlier one sent. If the tools take more than
their share of the window, the ones at the end that do not fit are left out (``tools.search``
names them again); a conversation too long for the rest is trimmed by the engine, which keeps
the newest turns.
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
TOOLS_SHARE = 0.5  # of the window (less the answer's reserve), what the tools may take


def request_tokens(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> int:
    """About four characters a token, counted over the JSON a server receives."""
    text = json.dumps([m.to_openai() for m in messages]) + json.dumps(list(tools))
    return math.ceil(len(text) / 4)


def tool_tokens(tool: dict[str, Any]) -> int:
    return math.ceil(len(json.dumps(tool)) / 4)


def fit(
    tools: Sequence[dict[str, Any]], window: int, compact_tools: bool | None = None
) -> list[dict[str, Any]]:
    """``tools`` as sent to a model reading ``window`` tokens; ``compact_tools`` None chooses
    compact schemas below ``COMPACT_BELOW``. The result for a list is a prefix-preserving
    function of it: ``fit(a + b)`` begins with ``fit(a)``."""
    small = window < COMPACT_BELOW if compact_tools is None else compact_tools
    fitted = [compact(t) for t in tools] if small else list(tools)
    budget = int((window - min(ANSWER_RESERVE, window // 8)) * TOOLS_SHARE)
    kept: list[dict[str, Any]] = []
    used = 0
    for tool in fitted:
        size = tool_tokens(tool)
        if used + size > budget and kept:
            continue  # one that does not fit; a smaller one after it may
        kept.append(tool)
        used += size
    return kept
