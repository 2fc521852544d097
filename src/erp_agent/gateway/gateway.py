"""Gateway.call: the only way any tool runs — from the loop, the HTTP API, MCP or a test.

    allowed for this session? → arguments valid? → read: run as the user, result unchanged
                                                 → write: prepare and store a proposal
    Gateway.confirm: the owner, in time, the exact payload, once → execute as the user

Every decision is one typed event on the event stream (who, tool, argument digest, decision,
reason, latency): ``ToolDecided``, ``ProposalMade`` or ``ProposalDecided``. The audit log is a
subscriber of that stream (``events.subscribers.AuditLog``), the only writer of audit rows.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import jsonschema

from erp_agent.calls.outcome import ChoiceOption, Choices, Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog
from erp_agent.connectors.base import Connector
from erp_agent.errors import (
    ErpAgentError,
    ErpRefusal,
    ErpUnavailable,
    NeedsChoice,
    Refusal,
    ToolInputError,
)
from erp_agent.events import (
    AsyncListener,
    Audited,
    AuditLog,
    EventBus,
    Listener,
    ProposalDecided,
    ProposalMade,
    ToolDecided,
)
from erp_agent.gateway import projection, reconcile, revise
from erp_agent.gateway.lookups import LookupCache
from erp_agent.gateway.origin import OriginCheck
from erp_agent.gateway.plans import Plan, PlanBook, channel_of
from erp_agent.gateway.proposals import (
    args_digest,
    decision_refusal,
    new_proposal_id,
    payload_hash,
    proposal_view,
)
from erp_agent.store.base import Store
from erp_agent.store.records import Decision, Proposal, ProposalStatus, Unrequested
from erp_agent.tools.base import Change, Effect, ResultAccess, Tool, ToolContext, ToolRegistry

Clock = Callable[[], dt.datetime]
# The turn whose loop is calling (set by the engine around its rounds): audit events name it,
# so the interaction log joins a turn's decisions by id rather than by time.
TURN_ID: ContextVar[str | None] = ContextVar("erp_agent_turn_id", default=None)
# That turn's event bus: the gateway's events go to the turn's stream (its channel sees them);
# outside a turn they go to a bus of their own with the same subscribers.
TURN_BUS: ContextVar[EventBus | None] = ContextVar("erp_agent_turn_bus", default=None)
DecisionHook = Callable[[Proposal, Outcome, Decision], Awaitable[str | None]]
_DECIDED = frozenset({Decision.CONFIRMED, Decision.REJECTED, Decision.ERP_REFUSED, Decision.FAILED})
_UNDECIDED = frozenset({ProposalStatus.PENDING, ProposalStatus.EXECUTING, ProposalStatus.CHECKING})
SessionLookup = Callable[[Proposal], Awaitable[Session | None]]
DEFAULT_PROPOSAL_TTL = dt.timedelta(minutes=15)
# A confirm claimed longer ago than this cannot still be running (its ERP calls time out first).
DEFAULT_CONFIRM_TIMEOUT = dt.timedelta(seconds=90)
SWEEP_LIMIT = 1000  # undecided proposals looked at per status in one recovery pass
log = logging.getLogger(__name__)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Gateway:
    def __init__(
        self,
        registry: ToolRegistry,
        store: Store,
        connector: Connector,
        catalog: Catalog,
        *,
        proposal_ttl: dt.timedelta = DEFAULT_PROPOSAL_TTL,
        confirm_timeout: dt.timedelta = DEFAULT_CONFIRM_TIMEOUT,
        clock: Clock = _utcnow,
        results: ResultAccess | None = None,
        today: dt.date | None = None,
        lookup_ttl: dt.timedelta = dt.timedelta(0),
        in_flight: reconcile.InFlight | None = None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.connector = connector
        self.catalog = catalog
        self.proposal_ttl = proposal_ttl
        self.confirm_timeout = confirm_timeout
        # How long a write the ERP did not answer may still reach it (reconcile.InFlight).
        self.in_flight = in_flight or reconcile.InFlight()
        self.clock = clock
        self.results = results
        self.today = today  # a pinned business date (demos, evals); None: the user's clock
        # Subscribers of the gateway's events; the runtime shares its own lists here, so
        # one set of subscribers hears every event, from a turn or not.
        self.listeners: list[Listener] = []
        self.async_listeners: list[AsyncListener] = [AuditLog(store)]
        # Called once a proposal is decided (executed, refused, failed, rejected); the text a
        # hook returns is the message it put in the proposal's conversation.
        self.decision_hooks: list[DecisionHook] = []
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        # Master-data name lookups reused within a session (ERP_AGENT_MASTER_DATA_TTL).
        self.lookups = LookupCache(catalog, lookup_ttl, clock)
        # Checks of unanswered writes due later in this process (the sweep is the fallback).
        self._checks: set[asyncio.Task[None]] = set()
        # Plans per organisation (gateway/plans.py), applied after the ERP's permissions.
        self.plans: PlanBook | None = None

    async def aclose(self) -> None:
        """Stop the checks this process scheduled; the recovery sweep of any process makes them."""
        for task in list(self._checks):
            task.cancel()
        await asyncio.gather(*self._checks, return_exceptions=True)
        self._checks.clear()

    # ------------------------------------------------------------ the one entry

    async def call(
        self,
        session: Session,
        name: str,
        args: Any,
        *,
        conversation_id: str | None = None,
        origin: OriginCheck | None = None,
        today: dt.date | None = None,
    ) -> Outcome:
        """``origin``: the caller's check of where a write came from (``gateway/origin.py``);
        the warning it returns is stored with the proposal. ``today``: the caller's pinned
        business date (an engine built for an eval's day), else the gateway's."""
        started = time.perf_counter()
        digest = args_digest(args)
        tool = self.registry.get(name)
        plan = await self.plans.for_org(session.org) if self.plans is not None else None
        if plan is not None and tool is not None:
            reason = self._plan_refusal(plan, session, tool)
            if reason is not None:
                return await self.audit(
                    session, name, digest, started, Decision.REFUSED,
                    Outcome(Status.REFUSED, name, message=reason),
                )  # fmt: skip
            session = self._narrowed(plan, session)  # what the tool itself may read
        if tool is None or name not in session.allowed_tools:
            reason = (
                f"There is no tool named {name!r}."
                if tool is None
                else f"The tool {name} is not available to {session.user} in this session."
            )
            return await self.audit(
                session,
                name,
                digest,
                started,
                Decision.REFUSED,
                Outcome(Status.REFUSED, name, message=reason),
            )
        if tool.effect is Effect.WRITE and session.read_only:
            reason = "This workspace is read-only: nothing can be created or changed."
            return await self.audit(
                session,
                name,
                digest,
                started,
                Decision.REFUSED,
                Outcome(Status.REFUSED, name, message=reason),
            )
        errors = self.validate(tool, args)
        if errors:
            outcome = Outcome(
                Status.INVALID, name, errors=errors,
                message=f"The arguments for {name} are not valid; fix them and call it again.",
            )  # fmt: skip
            return await self.audit(session, name, digest, started, Decision.INVALID, outcome)
        ctx = ToolContext(session, self.connector, self.catalog, self.results, today or self.today)
        try:
            if tool.effect is Effect.READ:
                assert tool.run is not None
                reuse = self.lookups.applies(tool, args)
                data = self.lookups.get(session, tool, args) if reuse else None
                if data is None:
                    data = await tool.run(ctx, dict(args))
                    if reuse:
                        self.lookups.put(session, tool, args, data)
                return await self.audit(
                    session,
                    name,
                    digest,
                    started,
                    Decision.ALLOWED,
                    Outcome(Status.OK, name, data=data),
                )
            return await self._propose(
                session, tool, ctx, dict(args), digest, started, conversation_id, origin
            )
        except ErpRefusal as exc:
            outcome = Outcome(
                Status.ERP_REFUSED, name, refusal=exc.refusal.as_dict(),
                message=f"The ERP refused: {exc.refusal.message}",
            )  # fmt: skip
            return await self.audit(
                session, name, digest, started, Decision.ERP_REFUSED, outcome, exc.refusal.message
            )
        except NeedsChoice as exc:
            options: list[ChoiceOption] = [
                {"label": o["label"], "value": o["value"]} for o in exc.options
            ]
            choices: Choices = {"type": "choices", "question": exc.question, "options": options}
            outcome = Outcome(
                Status.INVALID, name, errors=[str(exc)], message=str(exc), choices=choices
            )
            return await self.audit(session, name, digest, started, Decision.INVALID, outcome)
        except ToolInputError as exc:
            outcome = Outcome(Status.INVALID, name, errors=[str(exc)], message=str(exc))
            return await self.audit(session, name, digest, started, Decision.INVALID, outcome)
        except ErpAgentError as exc:
            outcome = Outcome(Status.ERROR, name, message=str(exc))
            return await self.audit(session, name, digest, started, Decision.FAILED, outcome)

    async def within_plan(self, session: Session) -> Session:
        """``session`` with only the tools its organisation's plan permits: what a channel
        offers (the engine before routing, MCP's tool list). Unchanged without a plan."""
        plan = await self.plans.for_org(session.org) if self.plans is not None else None
        return session if plan is None else self._narrowed(plan, session)

    def _narrowed(self, plan: Plan, session: Session) -> Session:
        assert self.plans is not None
        return self.plans.narrow(plan, session, self.registry.get)

    def _plan_refusal(self, plan: Plan, session: Session, tool: Tool) -> str | None:
        assert self.plans is not None
        if not plan.allows_channel(channel_of(session)):
            return plan.channel_refusal(channel_of(session), session.org)
        if not plan.permits(tool, self.plans.modules):
            return plan.refusal(tool, session.org, self.plans.modules)
        return None

    def validate(self, tool: Tool, args: Any) -> list[str]:
        """Every problem with ``args``, each naming where it is, so the model can fix them all."""
        if not isinstance(args, dict):
            return [f"arguments must be a JSON object, not {type(args).__name__}"]
        validator = self._validators.get(tool.name)
        if validator is None:
            validator = jsonschema.Draft202012Validator(
                tool.parameters, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
            )
            self._validators[tool.name] = validator
        problems = []
        for error in sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in error.absolute_path) or "(arguments)"
            problems.append(f"{where}: {error.message}")
        return problems

    # ------------------------------------------------------------ writes

    async def _propose(
        self,
        session: Session,
        tool: Tool,
        ctx: ToolContext,
        args: dict[str, Any],
        digest: str,
        started: float,
        conversation_id: str | None = None,
        origin: OriginCheck | None = None,
    ) -> Outcome:
        assert tool.prepare is not None
        change = await tool.prepare(ctx, args)
        warning = origin(tool, args, change) if origin is not None else None
        proposal = await self.store_proposal(
            session, tool.name, change, conversation_id, warning.copy() if warning else None,
            today=ctx.today,
        )  # fmt: skip
        view = proposal_view(proposal)
        outcome = Outcome(
            Status.PROPOSAL, tool.name, proposal=view,
            message=f"Prepared, not written: {change.summary}. The user must confirm it.",
        )  # fmt: skip
        return await self.audit(
            session, tool.name, digest, started, Decision.PROPOSED, outcome, proposal_id=proposal.id
        )

    async def store_proposal(
        self,
        session: Session,
        tool: str,
        change: Change,
        conversation_id: str | None,
        warning: Unrequested | None = None,
        *,
        today: dt.date | None = None,
    ) -> Proposal:
        """``today``: the business date pinned for its preparation, kept with the proposal so
        its confirm runs on the same date (``business_date``); None: the user's clock."""
        # What the ERP will post, computed by it for this version (submit, cancel), or None.
        projected = await projection.project(
            self.connector, session, self.registry.get(tool), change
        )
        now = self.clock()
        proposal = Proposal(
            id=new_proposal_id(),
            user=session.user,
            session_id=session.id,
            org=session.org,
            tool=tool,
            payload=change.payload,
            payload_hash=payload_hash(tool, change.payload),
            summary=change.summary,
            diff=change.diff,
            document=change.document,
            created_at=now,
            expires_at=now + self.proposal_ttl,
            conversation_id=conversation_id,
            base_modified=change.base_modified,
            warning=warning,
            projection=projected,
            business_date=today,
        )
        await self.store.add_proposal(proposal)
        return proposal

    async def confirm(
        self,
        session: Session,
        proposal_id: str,
        expected_hash: str | None = None,
        *,
        acknowledged: bool | None = None,
    ) -> Outcome:
        """Execute exactly the stored payload, as the user — once, by its owner, before expiry.

        ``acknowledged``: whether the user acknowledged the proposal's content warning, where
        the channel shows it (the web app, MCP elicitation); False refuses a flagged proposal.
        None: the caller asks for no acknowledgement."""
        started = time.perf_counter()
        proposal = await self.store.get_proposal(proposal_id)
        tool_name = proposal.tool if proposal else "proposal.confirm"
        digest = args_digest({"proposal": proposal_id})

        async def refuse(reason: str) -> Outcome:
            outcome = Outcome(Status.REFUSED, tool_name, message=reason)
            return await self.audit(
                session,
                tool_name,
                digest,
                started,
                Decision.REFUSED,
                outcome,
                proposal_id=proposal_id,
                action="confirm",
            )

        reason = decision_refusal(
            proposal, proposal_id, session.user, session.id, self.clock(), "confirm"
        )
        if reason is not None:
            if proposal is not None and reason.startswith("This proposal expired"):
                await self.store.finish_proposal(
                    proposal.id, ProposalStatus.EXPIRED, decided_at=self.clock()
                )
            return await refuse(reason)
        assert proposal is not None
        if payload_hash(proposal.tool, proposal.payload) != proposal.payload_hash:
            return await refuse(
                "The proposal's content changed after it was prepared; nothing was written."
            )
        if expected_hash is not None and expected_hash != proposal.payload_hash:
            return await refuse("What you confirmed is not what was proposed; nothing was written.")
        if proposal.warning and acknowledged is False:
            return await refuse(
                f"{proposal.warning.get('message', 'This change was not in your request.')} "
                "Confirm it only after acknowledging that; nothing was written."
            )
        tool = self.registry.get(proposal.tool)
        plan = await self.plans.for_org(session.org) if self.plans is not None else None
        if plan is not None and tool is not None:
            refused = self._plan_refusal(plan, session, tool)
            if refused is not None:
                return await refuse(f"{refused} Nothing was written.")
        if (
            tool is None
            or tool.execute is None
            or proposal.tool not in session.allowed_tools
            or session.read_only
        ):
            return await refuse(
                f"The tool {proposal.tool} is no longer available to you; nothing was written."
            )
        claimed_at = self.clock()
        if not await self.store.claim_proposal(proposal.id, at=claimed_at):
            return await refuse(
                "This proposal is already being confirmed; nothing more was written."
            )
        proposal.status, proposal.claimed_at = ProposalStatus.EXECUTING, claimed_at
        ctx = self.context_of(session, proposal)
        outcome = await self._execute(session, tool, ctx, proposal, digest, started)
        self.lookups.forget(session)  # what it wrote (a new customer) must be found next
        return outcome

    def context_of(self, session: Session, proposal: Proposal) -> ToolContext:
        """The context a proposal's confirm, edit or reconciliation runs in: on the business
        date it was prepared on, else (none pinned then) the gateway's."""
        today = proposal.business_date or self.today
        return ToolContext(session, self.connector, self.catalog, self.results, today)

    async def _execute(
        self,
        session: Session,
        tool: Tool,
        ctx: ToolContext,
        proposal: Proposal,
        digest: str,
        started: float,
    ) -> Outcome:
        assert tool.execute is not None
        try:
            # Noted (and stored) before sending: for a create its marker (the proposal's id),
            # when it is sent, and until when it may still arrive should this process die.
            noted = await reconcile.checkpoint(ctx, tool, proposal.id)
            sent_at = self.clock()
            until = self.in_flight.abandoned(sent_at, self.confirm_timeout)
            noted.update(sent_at=sent_at.isoformat(), settle_after=until.isoformat())
            await self.store.set_checkpoint(proposal.id, noted)
            proposal.checkpoint = noted
        except ErpAgentError as exc:
            # Nothing was sent: the proposal fails plainly and can be asked for again.
            return await self._failed(session, proposal, exc, digest, started)
        ctx.marker = noted.get("marker")
        try:
            result = await tool.execute(ctx, dict(proposal.payload))
        except ErpUnavailable as exc:
            return await self._unanswered(session, proposal, exc, digest, started)
        except ErpRefusal as exc:
            if exc.refusal.stale:
                return await self._stale(session, tool, ctx, proposal, exc.refusal, digest, started)
            await self.store.finish_proposal(
                proposal.id,
                ProposalStatus.FAILED,
                error=dict(exc.refusal.as_dict()),  # the stored record is JSON
                decided_at=self.clock(),
            )
            outcome = Outcome(
                Status.ERP_REFUSED, proposal.tool, refusal=exc.refusal.as_dict(),
                message=f"The ERP refused: {exc.refusal.message}",
            )  # fmt: skip
            return await self.audit(
                session,
                proposal.tool,
                digest,
                started,
                Decision.ERP_REFUSED,
                outcome,
                exc.refusal.message,
                proposal.id,
            )
        except ErpAgentError as exc:
            return await self._failed(session, proposal, exc, digest, started)
        stored = result if isinstance(result, dict) else {"value": result}
        await self.store.finish_proposal(
            proposal.id, ProposalStatus.EXECUTED, result=stored, decided_at=self.clock()
        )
        outcome = Outcome(
            Status.OK, proposal.tool, data=result, message=f"Done: {proposal.summary}."
        )
        return await self.audit(
            session,
            proposal.tool,
            digest,
            started,
            Decision.CONFIRMED,
            outcome,
            proposal_id=proposal.id,
        )

    async def _failed(
        self,
        session: Session,
        proposal: Proposal,
        error: ErpAgentError,
        digest: str,
        started: float,
    ) -> Outcome:
        await self.store.finish_proposal(
            proposal.id,
            ProposalStatus.FAILED,
            error={"message": str(error)},
            decided_at=self.clock(),
        )
        outcome = Outcome(Status.ERROR, proposal.tool, message=str(error))
        return await self.audit(
            session, proposal.tool, digest, started, Decision.FAILED, outcome,
            proposal_id=proposal.id,
        )  # fmt: skip

    async def _stale(
        self,
        session: Session,
        tool: Tool,
        ctx: ToolContext,
        proposal: Proposal,
        refusal: Refusal,
        digest: str,
        started: float,
    ) -> Outcome:
        """The record changed after the user saw it: nothing was written. Prepare the same
        change afresh against the record as it is now (a new diff, a new proposal to confirm)."""
        fresh, why_none = await reconcile.offer_again(self, session, tool, ctx, proposal)
        if fresh is not None and proposal.warning:
            # The same change prepared again came from the same content.
            await self.store.set_warning(fresh.id, proposal.warning)
            fresh.warning = proposal.warning
        await self.store.finish_proposal(
            proposal.id,
            ProposalStatus.STALE,
            error=dict(refusal.as_dict()),
            decided_at=self.clock(),
            superseded_by=fresh.id if fresh else None,
        )
        message = f"The ERP refused: {refusal.message} Nothing was written."
        if fresh is not None:
            message += (
                " The record changed after this proposal was made; here is the same change "
                "prepared against its current values. Confirm it only if it is still right."
            )
        elif why_none:
            message += f" {why_none}"
        outcome = Outcome(
            Status.ERP_REFUSED, tool.name, refusal=refusal.as_dict(), message=message,
            proposal=proposal_view(fresh) if fresh else None,
        )  # fmt: skip
        return await self.audit(
            session, tool.name, digest, started, Decision.ERP_REFUSED, outcome,
            refusal.message, proposal.id,
        )  # fmt: skip

    async def _unanswered(
        self,
        session: Session,
        proposal: Proposal,
        error: ErpUnavailable,
        digest: str,
        started: float,
    ) -> Outcome:
        """The write got no answer: it may have happened, or still be on its way. The
        proposal is "unknown — checking" (no confirm can run it again) until the request can no
        longer reach the ERP; then the ERP is asked — here, or by any process's sweep."""
        now = self.clock()
        sent_at = reconcile.when_sent(proposal) or now
        settle_at = self.in_flight.unanswered(sent_at, now)
        if now >= settle_at:  # nothing can be on its way (no proxy, no grace configured)
            settled = await reconcile.settle(self, session, proposal, started)
            if settled is not None:
                return settled
        noted = {**(proposal.checkpoint or {}), "settle_after": settle_at.isoformat()}
        noted["unanswered_at"] = now.isoformat()
        await self.store.set_checkpoint(proposal.id, noted)
        proposal.checkpoint = noted
        message = reconcile.checking_message(error, settle_at)
        if not await self.store.finish_proposal(
            proposal.id, ProposalStatus.CHECKING, decided_at=now,
            error={"message": message, "checking": True, "settle_after": settle_at.isoformat()},
            expected=ProposalStatus.EXECUTING,
        ):  # fmt: skip
            current = await self.store.get_proposal(proposal.id)
            state = f"it is {current.status}" if current else "it is gone"
            message = f"{error} This confirm was decided elsewhere meanwhile: {state}."
            outcome = Outcome(Status.ERROR, proposal.tool, message=message)
        else:
            self._check_when_due(session, proposal.id, settle_at)
            outcome = Outcome(Status.CHECKING, proposal.tool, message=message)
        return await self.audit(
            session, proposal.tool, digest, started, Decision.FAILED, outcome,
            proposal_id=proposal.id, action="checking",
        )  # fmt: skip

    def _check_when_due(self, session: Session, proposal_id: str, at: dt.datetime) -> None:
        """Decide a ``checking`` proposal in this process once its write can no longer arrive
        (best effort: if this process ends first, a recovery sweep decides it)."""

        async def check() -> None:
            await asyncio.sleep(max(0.0, (at - self.clock()).total_seconds()))
            try:
                found = await self.store.get_proposal(proposal_id)
                if found is not None and found.status is ProposalStatus.CHECKING:
                    await reconcile.settle(self, session, found)
            except Exception:  # a background check: any process's sweep decides it later
                log.warning("checking proposal %s failed; the sweep decides it", proposal_id,
                            exc_info=True)  # fmt: skip

        # A context of its own: its events are not the confirming request's turn's.
        task = asyncio.get_running_loop().create_task(check(), context=contextvars.Context())
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    async def sweep(self, session_for: SessionLookup, *, everything: bool = False) -> list[Outcome]:
        """Decide every ``executing`` or ``checking`` proposal whose write can no longer reach
        the ERP (``reconcile.due``), as its user; those whose user has no session now wait.
        ``everything`` skips the wait: only for tests that play a process that died."""
        now, decided = self.clock(), []
        for status in reconcile.UNDECIDED:
            for proposal in await self.store.list_proposals(status=status, limit=SWEEP_LIMIT):
                if not everything and not reconcile.overdue(
                    proposal, now, self.confirm_timeout, self.in_flight
                ):
                    continue
                session = await session_for(proposal)
                if session is None or session.user != proposal.user:
                    continue
                outcome = await reconcile.settle(self, session, proposal)
                if outcome is not None:
                    decided.append(outcome)
        return decided

    async def revise(self, session: Session, proposal_id: str, edits: Mapping[str, Any]) -> Outcome:
        """A new proposal with the user's edits, re-prepared by the tool (see ``revise``)."""
        return await revise.revise(self, session, proposal_id, edits)

    async def reject(self, session: Session, proposal_id: str) -> Outcome:
        """Discard a pending proposal: only its owner, in the session it was made in."""
        started = time.perf_counter()
        proposal = await self.store.get_proposal(proposal_id)
        name = proposal.tool if proposal else "proposal.reject"
        digest = args_digest({"proposal": proposal_id})
        reason = decision_refusal(
            proposal, proposal_id, session.user, session.id, self.clock(), "reject"
        )
        if reason is not None:
            outcome = Outcome(Status.REFUSED, name, message=reason)
            return await self.audit(
                session, name, digest, started, Decision.REFUSED, outcome,
                proposal_id=proposal_id, action="reject",
            )  # fmt: skip
        assert proposal is not None
        # Conditional: a confirm that claimed it meanwhile is not overridden.
        if not await self.store.finish_proposal(
            proposal.id,
            ProposalStatus.REJECTED,
            decided_at=self.clock(),
            expected=ProposalStatus.PENDING,
        ):
            outcome = Outcome(Status.REFUSED, name, message="This proposal is being confirmed.")
            return await self.audit(
                session, name, digest, started, Decision.REFUSED, outcome,
                proposal_id=proposal_id, action="reject",
            )  # fmt: skip
        outcome = Outcome(Status.OK, name, message="Rejected: nothing was written.")
        return await self.audit(
            session, name, digest, started, Decision.REJECTED, outcome, proposal_id=proposal_id
        )

    # ------------------------------------------------------------ audit

    async def audit(
        self,
        session: Session,
        tool: str,
        digest: str,
        started: float,
        decision: Decision,
        outcome: Outcome,
        reason: str | None = None,
        proposal_id: str | None = None,
        action: str | None = None,
    ) -> Outcome:
        """Publish the decision on the event stream (the audit log records it before this
        returns), then run the decision hooks of a proposal now decided."""
        fields: dict[str, Any] = {
            "user": session.user,
            "session_id": session.id,
            "org": session.org,
            "tool": tool,
            "args_digest": digest,
            "decision": decision,
            "reason": reason or outcome.message or "; ".join(outcome.errors),
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
            "proposal_id": proposal_id or "",
            "at": self.clock().isoformat(),
        }
        turn_id = TURN_ID.get() or ""
        event: Audited
        if proposal_id is None:
            event = ToolDecided(turn_id, **fields)
        elif decision is Decision.PROPOSED and action is None:
            event = ProposalMade(turn_id, **fields)
        else:
            event = await self._decided(proposal_id, turn_id, fields, decision, outcome, action)
        await self.publish(event)
        if proposal_id and decision in _DECIDED and outcome.status is not Status.REFUSED:
            proposal = await self.store.get_proposal(proposal_id)
            if proposal is not None and proposal.status not in _UNDECIDED:
                for hook in self.decision_hooks:
                    outcome.conversation_message = await hook(proposal, outcome, decision)
        return outcome

    async def _decided(
        self,
        proposal_id: str,
        turn_id: str,
        fields: dict[str, Any],
        decision: Decision,
        outcome: Outcome,
        action: str | None,
    ) -> ProposalDecided:
        """The decision on a proposal, named by the turn and conversation that made it."""
        if not turn_id:
            made = await self.store.events(
                proposal_id=proposal_id, decision=Decision.PROPOSED, limit=1
            )
            turn_id = (made[0].turn_id or "") if made else ""
        proposal = await self.store.get_proposal(proposal_id)
        if action is None:
            action = "reject" if decision is Decision.REJECTED else "confirm"
        return ProposalDecided(
            turn_id,
            conversation_id=(proposal.conversation_id or "") if proposal else "",
            action=action,
            refusal=outcome.refusal,
            **fields,
        )

    async def publish(self, event: Audited) -> None:
        """To the calling turn's stream, or outside a turn to a stream of its own; either way
        with the gateway's subscribers (the audit log among them)."""
        bus = TURN_BUS.get() or EventBus()
        bus.attach(self.listeners, self.async_listeners)
        await bus.publish(event)
