"""The one typed event stream of a turn: progress, model calls, tool decisions, proposals and
the turn's end, each with its turn, conversation, user and organisation.

Everything that watches turns subscribes here instead of keeping a log of its own: the SSE
stream and the CLI (progress), the interaction log and usage (``TurnFinished``), the audit log
(every ``Audited`` event: the gateway's decisions, proposals made and decided), Prometheus
metrics, and the fan-out to other workers. The engine binds the turn's context once
(``EventBus.bind``); events emitted before that carry only the turn id. A decision outside any
turn (a confirm from the web app, the CLI or MCP) goes to a bus of its own with the same
subscribers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from erp_agent.errors import RefusalView
from erp_agent.store.records import Decision

log = logging.getLogger(__name__)

# The outcomes a finished turn is logged with (``TurnFinished.outcome``).
ANSWERED, FAILED, REFUSED, INTERRUPTED = "answered", "failed", "refused", "interrupted"


@dataclass(frozen=True)
class Event:
    turn_id: str
    at: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat())
    conversation_id: str = ""
    user: str = ""
    org: str = ""

    @property
    def kind(self) -> str:
        return type(self).__name__

    @property
    def label(self) -> str:
        return ""

    @property
    def progress(self) -> bool:
        """Shown to the user while the turn runs (the SSE stream's ``progress`` events)."""
        return True

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "label": self.label, **asdict(self)}


@dataclass(frozen=True)
class Thinking(Event):
    round: int = 0

    @property
    def label(self) -> str:
        return "Thinking…"


@dataclass(frozen=True)
class ModelCalled(Event):
    """One model call: the provider's own token counts and how long it took."""

    model: str = ""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    tool_calls: int = 0

    @property
    def progress(self) -> bool:
        return False


@dataclass(frozen=True)
class RunningTool(Event):
    tool: str = ""
    description: str = ""

    @property
    def label(self) -> str:
        return self.description or f"Running {self.tool}…"


@dataclass(frozen=True)
class ToolFinished(Event):
    """One tool call of the loop done: the gateway's status (ok, refused, invalid, proposal,
    erp_refused, error) and how long the step took."""

    tool: str = ""
    status: str = ""
    latency_ms: float = 0.0


@dataclass(frozen=True)
class Audited(Event):
    """One gateway decision, exactly what the audit log records: who (user, session), which
    tool, the arguments' digest, the decision, why, and how long it took."""

    session_id: str = ""
    tool: str = ""
    args_digest: str = ""
    decision: Decision = Decision.ALLOWED
    reason: str = ""
    latency_ms: float = 0.0
    proposal_id: str = ""

    @property
    def progress(self) -> bool:
        return False


@dataclass(frozen=True)
class ToolDecided(Audited):
    """A call allowed (and run), refused, invalid, refused by the ERP or failed."""


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
class ProposalMade(Audited):
    """A write prepared and stored as a proposal (``decision`` is ``proposed``)."""


@dataclass(frozen=True)
class ProposalDecided(Audited):
    """A decision on a proposal, from whichever channel: the user's ``action`` (confirm,
    reject, edit, or ``settle`` when an interrupted confirm is decided from what the ERP
    holds), the gateway's ``decision`` (confirmed, rejected, erp_refused, failed; refused when
    the action itself was not allowed: not the owner, expired, already decided) and the ERP's
    refusal when it said no. ``turn_id`` is the turn that made the proposal (empty when it
    was made outside a turn); ``conversation_id`` the proposal's conversation."""

    action: str = ""
    refusal: RefusalView | None = None


@dataclass(frozen=True)
class GuardTriggered(Event):
    guard: str = ""
    detail: str = ""


@dataclass(frozen=True)
class TextDelta(Event):
    text: str = ""


@dataclass(frozen=True)
class TurnFinished(Event):
    """The turn's end: its true outcome (answered, failed, refused, interrupted), the
    response's own outcome (``shown``: answered, proposal, stopped, error, interrupted), the
    tokens the provider counted over the whole turn, the tools called and the wall time."""

    outcome: str = ""
    shown: str = ""
    message: str = ""  # the user's request, secrets masked, at most 500 characters
    model: str = ""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    tools: tuple[str, ...] = ()
    latency_ms: float = 0.0
    cache_write_tokens: int = 0  # prompt tokens written to the provider's cache (priced apart)


def true_outcome(shown: str, tool_statuses: Iterable[str], *, guard_stopped: bool) -> str:
    """What really happened, whatever the response says: an error is a failure; a turn cut
    short by its deadline or step limit was interrupted (by too many failed calls: failed); an
    answer after tool calls all refused (by the policy or the ERP) is a refusal, after calls
    that all failed, a failure."""
    if shown in ("error", "failed"):
        return FAILED
    if shown in ("stopped", INTERRUPTED):
        return FAILED if guard_stopped else INTERRUPTED
    statuses = [s for s in tool_statuses if s != "invalid"]  # the model corrects those
    if statuses and not any(s in ("ok", "proposal") for s in statuses):
        refused = all(s in ("refused", "erp_refused") for s in statuses)
        return REFUSED if refused else FAILED
    return ANSWERED


Listener = Callable[[Event], None]
AsyncListener = Callable[[Event], Awaitable[None]]


class EventBus:
    """Fan-out to listeners; a failing listener never breaks the turn.

    Plain listeners run at once. Async listeners (the store, Redis) run as tasks; ``publish``
    also waits for them, so what must be recorded (a turn's end, an audit event) is recorded
    before the caller goes on. An async listener marked ``required = True`` (the audit log)
    is the exception: its failure is raised from ``publish``, as a failed write would be.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._async: list[AsyncListener] = []
        self._pending: set[asyncio.Task[Exception | None]] = set()
        self._context: dict[str, str] = {}

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def subscribe_async(self, listener: AsyncListener) -> Callable[[], None]:
        self._async.append(listener)
        return lambda: self._async.remove(listener)

    def attach(
        self, listeners: Iterable[Listener], async_listeners: Iterable[AsyncListener]
    ) -> None:
        """Add the engine's own subscribers, once however often a turn is resumed on this bus."""
        self._listeners.extend(x for x in listeners if x not in self._listeners)
        self._async.extend(x for x in async_listeners if x not in self._async)

    def bind(self, *, conversation_id: str, user: str, org: str) -> None:
        """Stamp every later event with its turn's conversation, user and organisation."""
        self._context = {"conversation_id": conversation_id, "user": user, "org": org}

    def _stamped(self, event: Event) -> Event:
        missing = {k: v for k, v in self._context.items() if not getattr(event, k)}
        return dataclasses.replace(event, **missing) if missing else event

    def emit(self, event: Event) -> None:
        self._emit(event)

    def _emit(self, event: Event) -> list[asyncio.Task[Exception | None]]:
        event = self._stamped(event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("an event listener failed on %s", event.kind)
        required = []
        for handler in list(self._async):
            task = asyncio.ensure_future(self._safely(handler, event))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
            if getattr(handler, "required", False):
                required.append(task)
        return required

    async def publish(self, event: Event) -> None:
        """Emit, then wait until every async listener has handled this event and those
        before it; a required listener's failure on this event is raised here."""
        required = self._emit(event)
        if self._pending:
            await asyncio.wait(set(self._pending))
        for task in required:
            failure = task.result()
            if failure is not None:
                raise failure

    @staticmethod
    async def _safely(handler: AsyncListener, event: Event) -> Exception | None:
        try:
            await handler(event)
        except Exception as exc:
            log.exception("an event subscriber failed on %s", event.kind)
            return exc
        return None
