"""Typed progress events, emitted before each step; the HTTP stream, the CLI and the log subscribe."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    turn_id: str
    at: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat())

    @property
    def kind(self) -> str:
        return type(self).__name__

    @property
    def label(self) -> str:
        return ""

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "label": self.label, **asdict(self)}


@dataclass(frozen=True)
class Thinking(Event):
    round: int = 0

    @property
    def label(self) -> str:
        return "Thinking…"


@dataclass(frozen=True)
class RunningTool(Event):
    tool: str = ""
    description: str = ""

    @property
    def label(self) -> str:
        return self.description or f"Running {self.tool}…"


@dataclass(frozen=True)
class ToolFinished(Event):
    tool: str = ""
    status: str = ""
    latency_ms: float = 0.0


@dataclass(frozen=True)
class Calculating(Event):
    @property
    def label(self) -> str:
        return "Calculating…"


@dataclass(frozen=True)
class PreparingProposal(Event):
    tool: str = ""

    @property
    def label(self) -> str:
        return "Preparing a proposal…"


@dataclass(frozen=True)
class GuardTriggered(Event):
    guard: str = ""
    detail: str = ""


@dataclass(frozen=True)
class TextDelta(Event):
    text: str = ""


@dataclass(frozen=True)
class TurnFinished(Event):
    outcome: str = ""


Listener = Callable[[Event], None]


class EventBus:
    """Synchronous fan-out; a failing listener never breaks the turn."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, event: Event) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                continue
