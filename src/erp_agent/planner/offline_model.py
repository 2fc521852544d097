"""OfflinePlanner: a ChatModel that needs no LLM. It reads the request with the catalog, calls
the offered tools and answers from their results, so the agent works with zero model services
and every figure it states comes from a tool result."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from erp_agent.catalog import Catalog, load_catalog
from erp_agent.models.base import ChatModel, Completion, Message, ModelProfile, ToolCall, Usage
from erp_agent.planner import context
from erp_agent.planner.dispatch import next_step

MODEL_NAME = "offline-planner"


def _offered(tools: Sequence[dict[str, Any]]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        fn = tool.get("function", tool)
        if isinstance(fn, dict) and fn.get("name"):
            out[str(fn["name"])] = dict(fn.get("parameters") or {})
    return out


class OfflinePlanner(ChatModel):
    """Deterministic planner over whatever tools the engine offers; never calls others."""

    profile = ModelProfile(
        name=MODEL_NAME,
        supports_streaming=False,
        context_window=1_000_000,
        reads_every_tool=True,
    )

    def __init__(self, catalog: Catalog | None = None, connector: str = "erpnext") -> None:
        self.catalog = catalog or load_catalog()
        self.connector = connector
        self._ids = itertools.count(1)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        view = context.read(messages)
        offered = _offered(tools)
        if view.answered is not None:
            # The engine asked us to check our answer: it was built from tool results only, so
            # say it again rather than alter a figure.
            return Completion(view.answered, model=MODEL_NAME, finish_reason="stop")
        step = next_step(self.catalog, self.connector, view, offered)
        calls = [c for c in step.calls if c.name in offered]
        usage = Usage()  # no model ran: nothing is billed, nothing counts against a budget
        if calls:
            tool_calls = [
                ToolCall(f"call_{next(self._ids)}", c.name, json.dumps(c.args, default=str))
                for c in calls
            ]
            return Completion(None, tool_calls, usage, MODEL_NAME, "tool_calls")
        text = step.text or "I can't answer that from the ERP data available to you."
        return Completion(text, [], usage, MODEL_NAME, "stop")
