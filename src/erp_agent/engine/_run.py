"""The mutable state of one turn while it runs (the loop in ``turn.py`` owns it)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.engine import guards
from erp_agent.engine.conversation import ConversationState, QueryRecord
from erp_agent.engine.response import ToolCalled
from erp_agent.models.base import Message, Usage
from erp_agent.results.blocks import Block, Citation
from erp_agent.store.records import LogStep, Turn


@dataclass
class Run:
    """Mutable state of one turn; ``save`` persists what another process needs to continue."""

    turn: Turn
    session: Session
    messages: list[Message]  # history + this turn (without the system prompt)
    offered: list[str]
    modules: list[str]
    usage: Usage = field(default_factory=Usage)
    blocks: list[Block] = field(default_factory=list)
    tools_called: list[ToolCalled] = field(default_factory=list)
    sources: list[Any] = field(default_factory=list)  # every tool result of this turn
    citations: list[Citation] = field(default_factory=list)
    log_steps: list[LogStep] = field(default_factory=list)
    guard: guards.GuardState = field(default_factory=guards.GuardState)
    provenance_retry_done: bool = False
    model_name: str = ""
    waiting_for: str = ""  # what the turn is doing now, for the message when time runs out
    conversation: ConversationState = field(default_factory=ConversationState)  # at its start
    previous_prefix: str | None = None  # the previous turn's prefix_hash (see Engine._prompt)
    context_since: int = 0  # earlier turns' context messages before this seq are left out
    queries: list[QueryRecord] = field(default_factory=list)  # figure-bearing calls, in order
    shown: str | None = None  # the result id last shown as a table or chart
    said: list[str] = field(default_factory=list)  # the user's words: earlier messages, this one
    # Each offered tool's definition as sent (this user's view), in the conversation's order.
    shown_tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The conversation's earlier turns (their history may be cut when tools are appended).
    past: list[Turn] = field(default_factory=list)
    # The user's data scope (what their ERP permissions restrict their reads to).
    scope: tuple[tuple[str, tuple[str, ...]], ...] = ()
    started: float = field(default_factory=time.perf_counter)
