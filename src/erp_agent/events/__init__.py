"""The one typed event stream, below the gateway and the engine that both publish to it.

``stream.py`` holds the events (progress, model calls, tool decisions, proposals, a turn's
end) and the bus; ``subscribers.py`` the store's two subscribers: ``AuditLog`` (the required
one, the only writer of audit rows) and ``InteractionLog`` (one row per finished turn). This
package imports only the store's models and the price table: never the engine, the gateway,
tools, channels or the server (a contract in ``pyproject.toml`` checks it).
"""

from erp_agent.events.stream import (
    ANSWERED,
    FAILED,
    INTERRUPTED,
    REFUSED,
    AsyncListener,
    Audited,
    Calculating,
    Event,
    EventBus,
    GuardTriggered,
    Listener,
    ModelCalled,
    PreparingProposal,
    ProposalDecided,
    ProposalMade,
    RunningTool,
    TextDelta,
    Thinking,
    ToolDecided,
    ToolFinished,
    TurnFinished,
    true_outcome,
)
from erp_agent.events.subscribers import AuditLog, InteractionLog

__all__ = [
    "ANSWERED",
    "FAILED",
    "INTERRUPTED",
    "REFUSED",
    "AsyncListener",
    "AuditLog",
    "Audited",
    "Calculating",
    "Event",
    "EventBus",
    "GuardTriggered",
    "InteractionLog",
    "Listener",
    "ModelCalled",
    "PreparingProposal",
    "ProposalDecided",
    "ProposalMade",
    "RunningTool",
    "TextDelta",
    "Thinking",
    "ToolDecided",
    "ToolFinished",
    "TurnFinished",
    "true_outcome",
]
