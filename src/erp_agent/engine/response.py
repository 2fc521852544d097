"""What a turn returns to a channel: blocks, the tools called, usage, the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from erp_agent.models.base import Usage


@dataclass
class TurnResponse:
    turn_id: str
    conversation_id: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    tools_called: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    outcome: str = "answered"  # answered | proposal | stopped | error

    def as_dict(self) -> dict[str, Any]:
        return {
            "turn_id": self.turn_id,
            "conversation_id": self.conversation_id,
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
