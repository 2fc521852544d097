"""Pieces of a turn that read like the loop's footnotes: the progress event for a tool call,
where an unrequested write came from, the context text, and what the user is told when the
model or the tools fail."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.engine import conversation as conv
from erp_agent.engine import guards
from erp_agent.engine.events import Calculating, Event, PreparingProposal, RunningTool
from erp_agent.errors import (
    ModelAuthError,
    ModelContextTooLong,
    ModelError,
    ModelOutputInvalid,
    ModelRateLimited,
    ModelTimeout,
    TokenBudgetExceeded,
)
from erp_agent.models.base import Message
from erp_agent.tools.base import Effect, Shape, ToolRegistry


def progress_event(
    registry: ToolRegistry, catalog: Catalog, turn_id: str, name: str, arguments: Any
) -> Event:
    tool = registry.get(name)
    if tool is not None and tool.effect is Effect.WRITE:
        return PreparingProposal(turn_id, tool=name)
    if tool is not None and tool.shape is Shape.WHOLE:
        return Calculating(turn_id)
    if tool is not None and tool.shape is Shape.REPORT:
        report = catalog.reports.get(tool.action)
        return RunningTool(
            turn_id, tool=name, description=f"Running {report.label if report else name}…"
        )
    if tool is not None and tool.entity and tool.action == "get" and isinstance(arguments, dict):
        label = catalog.entity(tool.entity).label
        return RunningTool(
            turn_id, tool=name, description=f"Fetching {label} {arguments.get('id', '')}…"
        )
    return RunningTool(turn_id, tool=name)


def suggested_by(
    registry: ToolRegistry, catalog: Catalog, tools_called: Sequence[Mapping[str, Any]]
) -> str:
    """The content a write suggestion most likely came from: the last thing read."""
    for call in reversed(tools_called[:-1]):
        tool = registry.get(str(call.get("name")))
        if tool is None or tool.effect is Effect.WRITE or tool.shape is Shape.TOOL_SEARCH:
            continue  # writes and our own tool catalogue are not content
        args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        assert isinstance(args, dict)
        if tool.entity and args.get("id"):
            return f"{catalog.entity(tool.entity).label} {args['id']}"
        if tool.shape is Shape.PASSAGES:
            return "the knowledge base"
        return f"the result of {tool.name}"
    return "the reference data given with your question"


def context_text(
    turn_state: Mapping[str, Any], conversation: Mapping[str, Any], provided: Sequence[str]
) -> str:
    """The delimited context message: the conversation's state first, then what it refers to."""
    parts: list[str] = []
    mentioned = turn_state.get("document_ids") or []
    if mentioned:
        parts.append(
            "Documents mentioned: "
            + ", ".join(f"{doc_id} ({entity})" for entity, doc_id in mentioned)
        )
    recent = turn_state.get("recent_documents") or []
    if recent:
        parts.append(
            "Discussed earlier in this conversation: "
            + ", ".join(f"{doc_id} ({entity})" for entity, doc_id in recent)
        )
    topics = turn_state.get("recent_entities") or []
    if topics:
        parts.append("Earlier topics: " + ", ".join(topics))
    parts.extend(text for text in provided if text)
    if parts or conversation:
        # The state line always comes first (even empty when passages follow), so a line
        # inside a passage can never pass for the conversation's state.
        state = conv.context_block(conversation) or conv.CONTEXT_PREFIX + "{}"
        parts.insert(0, state)
    return "\n\n".join(p for p in parts if p)


def too_many_failures() -> str:
    return (
        f"I stopped after {guards.MAX_CONSECUTIVE_FAILURES} failed tool calls in a row. The ERP or "
        "the request may need attention; try rephrasing, or ask an administrator if it persists."
    )


def model_error_text(exc: ModelError) -> str:
    if isinstance(exc, ModelAuthError):
        return "The AI provider rejected this service's credentials. An administrator must update the model settings."
    if isinstance(exc, (ModelTimeout, ModelOutputInvalid)):
        return str(exc)  # says what was waited for or wrong, and which setting helps
    if isinstance(exc, ModelRateLimited):
        return "The AI service is busy or slow right now and did not answer after several tries. Please try again shortly."
    if isinstance(exc, ModelContextTooLong):
        return "This conversation has grown too long for the model. Start a new conversation."
    if isinstance(exc, TokenBudgetExceeded):
        return str(exc)
    return f"The AI service failed: {exc}"


def tool_results(messages: Iterable[Message]) -> list[Any]:
    """The tool results in these messages (figures in them may be quoted again)."""
    out: list[Any] = []
    for message in messages:
        if message.role == "tool" and message.content:
            try:
                out.append(json.loads(message.content))
            except json.JSONDecodeError:
                continue
    return out
