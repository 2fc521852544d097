"""Gateway.call: the only way any tool runs — from the loop, the HTTP API, MCP or a test.

    allowed for this session? → arguments valid? → read: run as the user, result unchanged
                                                 → write: prepare and store a proposal
    Gateway.confirm: the owner, in time, the exact payload, once → execute as the user

Every decision is one typed event on the event stream (who, tool, argument digest, decision,
reason, latency): ``ToolDecided``, ``ProposalMade`` or ``ProposalDecided``. The audit log is a
subscriber of that stream (``engine.subscribers.AuditLog``), the only writer of audit rows.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import jsonschema

from erp_agent.catalog import Catalog
from erp_agent.connectors.base import Connector
from erp_agent.engine.events import (
    AsyncListener,
    Audited,
    EventBus,
    Listener,
    ProposalDecided,
    ProposalMade,
    ToolDecided,
)
from erp_agent.engine.subscribers import AuditLog
from erp_agent.errors import (
    ErpAgentError,
    ErpRefusal,
    ErpUnavailable,
    NeedsChoice,
    Refusal,
    ToolInputError,
)
from erp_agent.gateway import reconcile
from erp_agent.gateway.lookups import LookupCache
from erp_agent.gateway.outcome import Outcome, Status
from erp_agent.gateway.proposals import (
    args_digest,
    decision_refusal,
    new_proposal_id,
    payload_hash,
    proposal_view,
)
from erp_agent.gateway.session import Session
from erp_agent.store.base import Store
from erp_agent.store.models import Decision, Proposal, ProposalStatus
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
_UNDECIDED = frozenset({ProposalStatus.PENDING, ProposalStatus.EXECUTING})
SessionLookup = Callable[[Proposal], Awaitable[Session | None]]
DEFAULT_PROPOSAL_TTL = dt.timedelta(minutes=15)
# A confirm claimed longer ago than this cannot still be running (its ERP calls time out first).
DEFAULT_CONFIRM_TIMEOUT = dt.timedelta(seconds=90)


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
    ) -> None:
        self.registry = registry
        self.store = store
        self.connector = connector
        self.catalog = catalog
        self.proposal_ttl = proposal_ttl
        self.confirm_timeout = confirm_timeout
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

    # ------------------------------------------------------------ the one entry

    async def call(
        self, session: Session, name: str, args: Any, *, conversation_id: str | None = None
    ) -> Outcome:
        started = time.perf_counter()
        digest = args_digest(args)
        tool = self.registry.get(name)
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
        ctx = ToolContext(session, self.connector, self.catalog, self.results, self.today)
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
                session, tool, ctx, dict(args), digest, started, conversation_id
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
            choices = {"type": "choices", "question": exc.question, "options": exc.options}
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
    ) -> Outcome:
        assert tool.prepare is not None
        change = await tool.prepare(ctx, args)
        proposal = await self.store_proposal(session, tool.name, change, conversation_id)
        view = proposal_view(proposal)
        outcome = Outcome(
            Status.PROPOSAL, tool.name, proposal=view,
            message=f"Prepared, not written: {change.summary}. The user must confirm it.",
        )  # fmt: skip
        return await self.audit(
            session, tool.name, digest, started, Decision.PROPOSED, outcome, proposal_id=proposal.id
        )

    async def store_proposal(
        self, session: Session, tool: str, change: Change, conversation_id: str | None
    ) -> Proposal:
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
        )
        await self.store.add_proposal(proposal)
        return proposal

    async def confirm(
        self, session: Session, proposal_id: str, expected_hash: str | None = None
    ) -> Outcome:
        """Execute exactly the stored payload, as the user — once, by its owner, before expiry."""
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
        tool = self.registry.get(proposal.tool)
        if (
            tool is None
            or tool.execute is None
            or proposal.tool not in session.allowed_tools
            or session.read_only
        ):
            return await refuse(
                f"The tool {proposal.tool} is no longer available to you; nothing was written."
            )
        if not await self.store.claim_proposal(proposal.id, at=self.clock()):
            return await refuse(
                "This proposal is already being confirmed; nothing more was written."
            )
        ctx = ToolContext(session, self.connector, self.catalog, self.results, self.today)
        outcome = await self._execute(session, tool, ctx, proposal, digest, started)
        self.lookups.forget(session)  # what it wrote (a new customer) must be found next
        return outcome

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
            noted = await reconcile.checkpoint(ctx, tool)
            if noted is not None:
                await self.store.set_checkpoint(proposal.id, noted)
                proposal.checkpoint = noted
        except ErpAgentError as exc:
            # Nothing was sent: the proposal fails plainly and can be asked for again.
            return await self._failed(session, proposal, exc, digest, started)
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
                error=exc.refusal.as_dict(),
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
        await self.store.finish_proposal(
            proposal.id,
            ProposalStatus.STALE,
            error=refusal.as_dict(),
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
        """The write got no answer: it may have happened. Ask the ERP now; if it cannot be
        asked either, the proposal stays executing and the sweep decides it later."""
        settled = await reconcile.settle(self, session, proposal, started)
        if settled is not None:
            return settled
        message = (
            f"{error} Whether it was written is checked in the ERP as soon as the ERP answers; "
            "it will not be written twice."
        )
        outcome = Outcome(Status.ERROR, proposal.tool, message=message)
        return await self.audit(
            session, proposal.tool, digest, started, Decision.FAILED, outcome,
            proposal_id=proposal.id,
        )  # fmt: skip

    async def sweep(self, session_for: SessionLookup, *, everything: bool = False) -> list[Outcome]:
        """Decide every ``executing`` proposal whose confirm cannot still be running (all of
        them with ``everything``), as its user; those whose user has no session now wait."""
        now, decided = self.clock(), []
        for proposal in await self.store.list_proposals(status=ProposalStatus.EXECUTING):
            if not everything and not reconcile.overdue(proposal, now, self.confirm_timeout):
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
        from erp_agent.gateway.revise import revise

        return await revise(self, session, proposal_id, edits)

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
