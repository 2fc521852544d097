"""Pieces of a turn that read like the loop's footnotes: the progress event for a tool call,
the check of where a write came from, the context text, and what the user is told when the
model or the tools fail."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.engine import conversation as conv
from erp_agent.engine import guards, prompt
from erp_agent.engine._run import Run
from erp_agent.errors import (
    ModelAuthError,
    ModelContextTooLong,
    ModelError,
    ModelOutputInvalid,
    ModelRateLimited,
    ModelTimeout,
    TokenBudgetExceeded,
)
from erp_agent.events import Calculating, Event, PreparingProposal, RunningTool
from erp_agent.gateway.origin import CONTEXT_SOURCE, Read, Request, WriteOrigin, read_of
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


def write_origin(registry: ToolRegistry, catalog: Catalog, run: Run) -> WriteOrigin:
    """The check of where a write came from: the user's words (this message and their earlier
    ones) against everything the model has read — tool results and the context tier."""
    calls = {c.id: c for m in run.messages if m.role == "assistant" for c in m.tool_calls}
    reads: list[Read] = []
    for message in run.messages:
        if prompt.is_context(message):
            reads.append(Read(CONTEXT_SOURCE, message.content or ""))
            continue
        tool = registry.get(message.name or "") if message.role == "tool" else None
        call = calls.get(message.tool_call_id or "")
        if tool is None or call is None:
            continue
        read = read_of(catalog, tool, _json(call.arguments), _json(message.content or ""))
        if read is not None:
            reads.append(read)
    request = Request(
        said=tuple(run.said or [run.turn.user_message]),
        entities=frozenset(run.turn.state.get("entities") or ()),
        asks_for_change=bool(run.turn.state.get("asked_for_change", True)),
    )
    session = run.session
    known = (session.company, session.default_company, session.currency, session.user)
    return WriteOrigin(catalog, request, reads, known)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


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
