"""What a turn returns to a channel: blocks, the tools called, usage, the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from erp_agent.models.base import Usage
from erp_agent.results.blocks import Block
from erp_agent.results.shaping import ShapedDefinition
from erp_agent.store.records import TokenCounts

READ_AS = "Read as: "  # how an answer that says how it read the question begins


class ToolCalled(TypedDict):
    """One tool call of the turn, as the response lists it (the API, the CLI's ``--json``)."""

    name: str
    arguments: Any  # as the model sent them, the tool's defaults filled in (JSON)
    definition: NotRequired[ShapedDefinition]  # how its figures were computed, when it has any


class ResponseJSON(TypedDict):
    """A turn's response as every channel receives it and the turn's state stores it."""

    turn_id: str
    conversation_id: str
    reading: str | None
    blocks: list[Block]
    tools_called: list[ToolCalled]
    usage: TokenCounts
    model: str
    outcome: str


@dataclass
class TurnResponse:
    turn_id: str
    conversation_id: str
    blocks: list[Block] = field(default_factory=list)
    tools_called: list[ToolCalled] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    outcome: str = "answered"  # answered | proposal | stopped | error

    @property
    def reading(self) -> str | None:
        """How the question was read ("Read as: revenue by branch, Q3 2026"), when the answer
        begins with its reading (the offline planner's answers always do)."""
        for block in self.blocks:
            if block["type"] == "text":
                first = str(block.get("markdown") or "").split("\n", 1)[0]
                return (
                    first.removeprefix(READ_AS).rstrip(".") if first.startswith(READ_AS) else None
                )
        return None

    def as_dict(self) -> ResponseJSON:
        return {
            "turn_id": self.turn_id,
            "conversation_id": self.conversation_id,
            "reading": self.reading,
            "blocks": self.blocks,
            "tools_called": self.tools_called,
            "usage": {
                "prompt": self.usage.prompt_tokens,
                "cached": self.usage.cached_tokens,
                "completion": self.usage.completion_tokens,
            },
            "model": self.model,
            "outcome": self.outcome,
        }
