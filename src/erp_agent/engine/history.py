"""Conversation history trimmed to a token budget without ever separating an assistant
``tool_calls`` message from the tool messages that answer it (providers reject that)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from erp_agent.engine.prompt import is_context
from erp_agent.models.base import Message

if TYPE_CHECKING:
    from erp_agent.store.records import Turn


def estimate_tokens(message: Message) -> int:
    """A cheap, conservative estimate (≈ 4 characters a token, plus per-message overhead)."""
    size = len(message.content or "")
    for call in message.tool_calls:
        size += len(call.name) + len(call.arguments) + 16
    return size // 4 + 6


def units(messages: Sequence[Message]) -> list[list[Message]]:
    """Group messages into atoms: a tool-calling assistant message with all its answers is one.

    Tool messages that answer nothing before them, and tool calls left unanswered, are dropped:
    a provider would reject either.
    """
    out: list[list[Message]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.role == "tool":
            i += 1  # orphan answer
            continue
        if message.role == "assistant" and message.tool_calls:
            wanted = {c.id for c in message.tool_calls}
            answers: list[Message] = []
            j = i + 1
            while j < len(messages) and messages[j].role == "tool":
                if messages[j].tool_call_id in wanted and messages[j].tool_call_id not in {
                    a.tool_call_id for a in answers
                }:
                    answers.append(messages[j])
                j += 1
            if {a.tool_call_id for a in answers} == wanted:
                out.append([message, *answers])
            i = j
            continue
        out.append([message])
        i += 1
    return out


def trim(
    messages: Sequence[Message], budget_tokens: int, *, keep_last_context: bool = False
) -> list[Message]:
    """The newest whole units that fit the budget; the newest unit is always kept.

    Over the budget, earlier turns' context messages are dropped first, oldest first (the
    last one stays with ``keep_last_context``: the running turn's own); then the oldest units.
    Within the budget nothing is dropped, so the next turn's prompt begins with this one's."""
    groups = units([m for m in messages if m.role != "system"])
    used = sum(estimate_tokens(m) for group in groups for m in group)
    contexts = [i for i, group in enumerate(groups) if is_context(group[0])]
    if keep_last_context:
        contexts = contexts[:-1]
    dropped: set[int] = set()
    for i in contexts:
        if used <= budget_tokens:
            break
        used -= sum(estimate_tokens(m) for m in groups[i])
        dropped.add(i)
    groups = [group for i, group in enumerate(groups) if i not in dropped]
    kept: list[list[Message]] = []
    used = 0
    for group in reversed(groups):
        cost = sum(estimate_tokens(m) for m in group)
        if kept and used + cost > budget_tokens:
            break
        kept.append(group)
        used += cost
    kept.reverse()
    # A history must not start with a bare tool exchange's answer or an assistant turn.
    while len(kept) > 1 and kept[0][0].role != "user":
        kept.pop(0)
    return [m for group in kept for m in group]


def to_state(messages: Sequence[Message]) -> list[dict[str, object]]:
    return [
        {
            "role": m.role,
            "content": m.content,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls
            ],
            "tool_call_id": m.tool_call_id,
            "name": m.name,
        }
        for m in messages
    ]


def from_state(raw: Sequence[dict[str, object]]) -> list[Message]:
    from erp_agent.models.base import ToolCall

    out = []
    for item in raw:
        calls = item.get("tool_calls") or []
        assert isinstance(calls, list)
        out.append(
            Message(
                role=str(item["role"]),  # type: ignore[arg-type]
                content=item.get("content") if isinstance(item.get("content"), str) else None,  # type: ignore[arg-type]
                tool_calls=tuple(
                    ToolCall(str(c["id"]), str(c["name"]), str(c["arguments"])) for c in calls
                ),
                tool_call_id=str(item["tool_call_id"]) if item.get("tool_call_id") else None,
                name=str(item["name"]) if item.get("name") else None,
            )
        )
    return out


def dumps(messages: Sequence[Message]) -> str:
    return json.dumps(to_state(messages))


def window_size(past: Sequence[Turn]) -> int:
    """Tokens of the turns since the history's start (``window_start``)."""
    since = max((int(t.state.get("history_since", 0)) for t in past), default=0)
    return sum(
        estimate_tokens(m)
        for t in past
        if t.seq >= since
        for m in from_state(t.state.get("messages", []))
    )


def window_start(past: Sequence[Turn], budget: int) -> int:
    """The first turn whose messages go with the next request. It moves only when the turns
    since it outgrow ``budget``, and then far (to half of it): the history's start, right after
    the system messages and the tools, stays the same for several turns, so a prefix cache
    holds through them, instead of sliding (and breaking the cache) at every turn."""
    since = max((int(t.state.get("history_since", 0)) for t in past), default=0)
    context_since = max((int(t.state.get("context_since", 0)) for t in past), default=0)
    sizes = [
        (
            t.seq,
            sum(
                estimate_tokens(m)
                for m in from_state(t.state.get("messages", []))
                if t.seq >= context_since or not is_context(m)
            ),
        )
        for t in past
        if t.seq >= since
    ]
    if sum(size for _, size in sizes) <= budget:
        return since
    kept = 0
    for seq, size in reversed(sizes):
        if kept + size > budget // 2:
            break
        kept += size
        since = seq
    return max(since, sizes[-1][0]) if kept == 0 else since
