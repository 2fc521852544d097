"""What the store holds. Plain dataclasses: the store maps them to tables."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypedDict


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class ProposalStatus(StrEnum):
    PENDING = "pending"
    EXECUTING = "executing"  # claimed by a confirm; no second confirm can claim it
    # The write got no answer: it may still reach the ERP. Shown as "unknown — checking"; it
    # is decided from the ERP once the request can no longer arrive (gateway/reconcile.py).
    CHECKING = "checking"
    EXECUTED = "executed"
    # The ERP refused at execution (the refusal kept verbatim), or a write that got no answer
    # was found not written (or cannot be told: ``error["written"]`` is None).
    FAILED = "failed"
    REJECTED = "rejected"
    EXPIRED = "expired"
    # The record changed after the proposal was made: nothing was written, and a fresh
    # proposal (``superseded_by``) shows the new values.
    STALE = "stale"
    # The user edited it: a new proposal (``superseded_by``) with the edits, re-validated by
    # the ERP, replaces it; this one can no longer be confirmed.
    SUPERSEDED = "superseded"


FINAL_STATUSES = frozenset(
    {
        ProposalStatus.EXECUTED,
        ProposalStatus.FAILED,
        ProposalStatus.REJECTED,
        ProposalStatus.EXPIRED,
        ProposalStatus.STALE,
        ProposalStatus.SUPERSEDED,
    }
)


class Unrequested(TypedDict):
    """A proposal's content warning, as stored and shown (``gateway/origin.py`` finds it)."""

    source: str  # the content it most likely came from ("Lead CRM-LEAD-0007")
    reason: str  # what does not match the request, in words
    message: str  # the one line every confirm surface shows


class FieldChange(TypedDict):
    """One field an update changes, as a proposal shows it (``Proposal.diff``)."""

    field: str
    label: str
    before: Any  # the record's value as read (JSON)
    after: Any  # the value the write sets


class ProjectionView(TypedDict):
    """What the ERP computed a submit or cancel will post, as stored with the proposal and
    shown by every confirm surface (``gateway/projection.py``). Its rows are the ERP's own
    (``connectors.base.Projection``)."""

    label: str
    action: str  # submit | cancel
    entity: str | None
    record: str
    modified: str | None
    text: str
    currency: str | None
    ledger: list[dict[str, Any]]
    stock: list[dict[str, Any]]
    payment_schedule: list[dict[str, Any]]
    blocked_by: list[dict[str, Any]]
    refusal: str | None
    source: str
    notes: list[str]


@dataclass
class Proposal:
    """A write the model asked for, held until the user confirms exactly this payload."""

    id: str
    user: str
    session_id: str
    org: str
    tool: str
    payload: dict[str, Any]  # the exact arguments the tool will execute with
    payload_hash: str  # sha256 of the canonical JSON of tool + payload
    summary: str  # one line for the user: what will be written
    diff: list[FieldChange] = field(default_factory=list)  # field, before, after (updates)
    document: dict[str, Any] | None = None  # the whole document to be created
    status: ProposalStatus = ProposalStatus.PENDING
    created_at: dt.datetime = field(default_factory=utcnow)
    expires_at: dt.datetime = field(default_factory=utcnow)
    decided_at: dt.datetime | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    conversation_id: str | None = None
    # The record's ``modified`` as read when the proposal was made (None for creates): the
    # confirm sends it, so the ERP refuses a write to a record changed since.
    base_modified: str | None = None
    claimed_at: dt.datetime | None = None  # when a confirm claimed it (EXECUTING since)
    # What the confirm noted just before writing, so a crash can be reconciled (see
    # gateway/reconcile.py): e.g. the user's newest document of the doctype before a create.
    checkpoint: dict[str, Any] | None = None
    superseded_by: str | None = None  # the proposal that replaced this one (stale or edited)
    # Set when the write did not come from the user's request but from content the agent read
    # (``gateway/origin.py``): {"source", "reason", "message"}; every confirm surface shows it.
    warning: Unrequested | None = None
    # What the ERP computed a submit or cancel will post, or what blocks it, for the version
    # ``base_modified`` names (``gateway/projection.py``); None where the ERP cannot say.
    projection: ProjectionView | None = None
    # The business date it was prepared on, when one was pinned (an eval's day, a demo's
    # ``--today``): its confirm, edit and reconciliation run on that date, not on the date of
    # whichever gateway confirms it. None: the user's clock, as for proposals stored before.
    business_date: dt.date | None = None


class Decision(StrEnum):
    ALLOWED = "allowed"
    REFUSED = "refused"  # not allowed for this session
    INVALID = "invalid"  # arguments failed validation
    PROPOSED = "proposed"  # a write became a proposal
    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    ERP_REFUSED = "erp_refused"  # the ERP said no
    FAILED = "failed"  # something else went wrong


@dataclass
class AuditEvent:
    """One gateway decision: who, which tool, what arguments (digest), what, why, how long."""

    user: str
    session_id: str
    org: str
    tool: str
    args_digest: str
    decision: Decision
    reason: str
    latency_ms: float
    proposal_id: str | None = None
    at: dt.datetime = field(default_factory=utcnow)
    id: int | None = None
    turn_id: str | None = None  # the turn that made the call (None from the API or MCP)


@dataclass
class Conversation:
    id: str
    user: str
    org: str
    title: str = ""
    created_at: dt.datetime = field(default_factory=utcnow)
    updated_at: dt.datetime = field(default_factory=utcnow)


class Written(TypedDict):
    """The document a confirmed write made or changed (``TurnState.outcome``)."""

    entity: str
    id: str
    url: str | None


class TokenCounts(TypedDict):
    """A turn's tokens as its response and its log line report them."""

    prompt: int
    cached: int
    completion: int


class ModelStep(TypedDict):
    """One model call of a turn's log."""

    step: Literal["model"]
    round: int
    ms: float
    tool_calls: int


class ToolStep(TypedDict):
    """One tool call of a turn's log, with the status the gateway gave it."""

    step: Literal["tool"]
    tool: str
    status: str
    ms: float


LogStep = ModelStep | ToolStep


class TurnLog(TypedDict):
    """A finished turn's log line (``TurnState.log``), shown in the admin log."""

    prompt_hash: str | None
    modules: list[str]
    tools_offered: list[str]
    tools_called: list[str]
    response_types: list[str]
    steps: list[LogStep]
    tokens: TokenCounts
    outcome: str


class TurnState(TypedDict, total=False):
    """A turn's state as stored (JSON): what any process needs to continue the turn, what the
    web app shows of it and the admin log. Every key is optional: each kind of turn (a question,
    a confirm's outcome, a cached answer, a scan) keeps its own."""

    # The loop (``engine/turn.py``): this turn's messages and the history it was sent with.
    messages: list[dict[str, Any]]  # ``engine.history.to_state``
    history_len: int  # the earlier turns' messages before this turn's own
    history_since: int  # the first earlier turn (seq) in the history
    context_since: int  # earlier turns' context messages before this seq are left out
    prompt_hash: str
    prefix_hash: str
    offered: list[str]
    modules: list[str]
    # How the request was routed (``engine/routing.py``).
    named_modules: list[str]
    entities: list[str]
    asked_for_change: bool
    knowledge: bool
    document_ids: Sequence[Sequence[str]]  # (entity, id) pairs; lists once read back from JSON
    recent_documents: Sequence[Sequence[str]]
    recent_entities: list[str]
    # What it answered (``engine.response.ResponseJSON``; its blocks read back by
    # ``results.blocks.blocks_of``), its log line and the user's rating.
    response: Mapping[str, Any]
    log: TurnLog
    feedback: dict[str, Any]
    # A turn that answers no question: a confirm's or reject's outcome, a cached answer.
    kind: str
    proposal_id: str
    outcome: Written | None  # the document a confirm wrote
    cached: str
    # A background turn: who recovers it, and how often it was tried.
    background: str
    attempts: int


@dataclass
class Turn:
    """One request/response cycle; ``state`` is the engine's resumable state after each step."""

    id: str
    conversation_id: str
    seq: int
    user_message: str
    status: str = "running"  # running | done | failed
    state: TurnState = field(default_factory=TurnState)
    created_at: dt.datetime = field(default_factory=utcnow)
    updated_at: dt.datetime = field(default_factory=utcnow)


@dataclass
class WebSession:
    """A signed-in browser: the cookie's hash, the gateway session and the sealed credential."""

    token_hash: str  # sha256 of the cookie: a leak of the table gives no cookie
    session_id: str
    user: str
    org: str
    roles: list[str]
    allowed_tools: list[str]
    csrf: str
    credential: bytes  # Fernet token
    created_at: dt.datetime
    expires_at: dt.datetime


@dataclass
class Interaction:
    """One finished turn as the interaction log and the usage figures see it.

    Tokens are the provider's own counts summed over the turn's model calls (the offline
    planner reports none), so monthly budgets are checked against what was really billed."""

    turn_id: str
    conversation_id: str
    user: str
    org: str
    message: str
    model: str
    outcome: str  # answered | failed | refused | interrupted
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    tools: list[str] = field(default_factory=list)
    latency_ms: float = 0.0
    at: dt.datetime = field(default_factory=utcnow)
    # What the answer showed (answered, proposal, stopped, error, interrupted): a turn that
    # proposed a write is "answered" in truth and "proposal" here.
    shown: str = ""
    # The user's feedback on the answer, once given (thumbs "up"/"down", a comment, when).
    rating: str | None = None
    comment: str | None = None
    rated_at: dt.datetime | None = None
    # Prompt tokens written to the provider's cache (priced apart), and what the turn cost in
    # millionths of the price table's currency; None when the model has no price.
    cache_write_tokens: int = 0
    cost_micros: int | None = None

    @property
    def result(self) -> str:
        """What the log filters and shows: a proposal, else the true outcome."""
        return result_of(self.outcome, self.shown)


# The log's outcomes, each turn in exactly one: a proposal is an answer that proposed a write.
RESULTS = ("answered", "proposal", "refused", "failed", "interrupted")


def result_of(outcome: str, shown: str) -> str:
    return "proposal" if shown == "proposal" and outcome == "answered" else outcome


@dataclass
class ApiKey:
    """A bearer key for a channel without interactive sign-in. Only its SHA-256 is stored.

    ``kind`` "user": MCP and the OpenAI-compatible API act as ``user`` with ``credential`` (the
    user's ERP credential, encrypted with the server's session key). ``kind`` "org": the relay,
    for an organisation whose ERP plugin runs every call as the asking user (no credential).
    """

    id: str  # public, shown in the admin console
    key_hash: str
    kind: str
    user: str
    org: str
    label: str = ""
    credential: str | None = field(default=None, repr=False)
    created_by: str = ""
    created_at: dt.datetime = field(default_factory=utcnow)
    revoked_at: dt.datetime | None = None
