"""Gateway.call: the only way any tool runs — from the loop, the HTTP API, MCP or a test.

    allowed for this session? → arguments valid? → read: run as the user, result unchanged
                                                 → write: prepare and store a proposal
    Gateway.confirm: the owner, in time, the exact payload, once → execute as the user

Every decision is one typed audit event (who, tool, argument digest, decision, reason, latency).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import jsonschema

from erp_agent.catalog import Catalog
from erp_agent.connectors.base import Connector
from erp_agent.errors import ErpAgentError, ErpRefusal, ToolInputError
from erp_agent.gateway.outcome import Outcome, Status
from erp_agent.gateway.proposals import args_digest, new_proposal_id, payload_hash
from erp_agent.gateway.session import Session
from erp_agent.store.base import Store
from erp_agent.store.models import AuditEvent, Decision, Proposal, ProposalStatus
from erp_agent.tools.base import Effect, ResultAccess, Tool, ToolContext, ToolRegistry

Clock = Callable[[], dt.datetime]
Listener = Callable[[AuditEvent], None]
DEFAULT_PROPOSAL_TTL = dt.timedelta(minutes=15)


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
        clock: Clock = _utcnow,
        results: ResultAccess | None = None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.connector = connector
        self.catalog = catalog
        self.proposal_ttl = proposal_ttl
        self.clock = clock
        self.results = results
        self.listeners: list[Listener] = []
        self._validators: dict[str, jsonschema.protocols.Validator] = {}

    # ------------------------------------------------------------ the one entry

    async def call(self, session: Session, name: str, args: Any) -> Outcome:
        started = time.perf_counter()
        digest = args_digest(args)
        tool = self.registry.get(name)
        if tool is None or name not in session.allowed_tools:
            reason = (
                f"There is no tool named {name!r}."
                if tool is None
                else f"The tool {name} is not available to {session.user} in this session."
            )
            return await self._done(
                session,
                name,
                digest,
                started,
                Decision.REFUSED,
                Outcome(Status.REFUSED, name, message=reason),
            )
        if tool.effect is Effect.WRITE and session.read_only:
            reason = "This workspace is read-only: nothing can be created or changed."
            return await self._done(
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
            return await self._done(session, name, digest, started, Decision.INVALID, outcome)
        ctx = ToolContext(session, self.connector, self.catalog, self.results)
        try:
            if tool.effect is Effect.READ:
                assert tool.run is not None
                data = await tool.run(ctx, dict(args))
                return await self._done(
                    session,
                    name,
                    digest,
                    started,
                    Decision.ALLOWED,
                    Outcome(Status.OK, name, data=data),
                )
            return await self._propose(session, tool, ctx, dict(args), digest, started)
        except ErpRefusal as exc:
            outcome = Outcome(
                Status.ERP_REFUSED, name, refusal=exc.refusal.as_dict(),
                message=f"The ERP refused: {exc.refusal.message}",
            )  # fmt: skip
            return await self._done(
                session, name, digest, started, Decision.ERP_REFUSED, outcome, exc.refusal.message
            )
        except ToolInputError as exc:
            outcome = Outcome(Status.INVALID, name, errors=[str(exc)], message=str(exc))
            return await self._done(session, name, digest, started, Decision.INVALID, outcome)
        except ErpAgentError as exc:
            outcome = Outcome(Status.ERROR, name, message=str(exc))
            return await self._done(session, name, digest, started, Decision.FAILED, outcome)

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
    ) -> Outcome:
        assert tool.prepare is not None
        change = await tool.prepare(ctx, args)
        now = self.clock()
        proposal = Proposal(
            id=new_proposal_id(),
            user=session.user,
            session_id=session.id,
            org=session.org,
            tool=tool.name,
            payload=change.payload,
            payload_hash=payload_hash(tool.name, change.payload),
            summary=change.summary,
            diff=change.diff,
            document=change.document,
            created_at=now,
            expires_at=now + self.proposal_ttl,
        )
        await self.store.add_proposal(proposal)
        view = proposal_view(proposal)
        outcome = Outcome(
            Status.PROPOSAL, tool.name, proposal=view,
            message=f"Prepared, not written: {change.summary}. The user must confirm it.",
        )  # fmt: skip
        return await self._done(
            session, tool.name, digest, started, Decision.PROPOSED, outcome, proposal_id=proposal.id
        )

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
            return await self._done(
                session,
                tool_name,
                digest,
                started,
                Decision.REFUSED,
                outcome,
                proposal_id=proposal_id,
            )

        if proposal is None:
            return await refuse(f"There is no proposal {proposal_id}.")
        if proposal.user != session.user:
            return await refuse("This proposal belongs to another user; only they can confirm it.")
        if proposal.session_id != session.id:
            return await refuse("This proposal was made in another session; ask for it again here.")
        if proposal.status is not ProposalStatus.PENDING:
            return await refuse(
                f"This proposal is already {proposal.status}; nothing was written now."
            )
        if self.clock() >= proposal.expires_at:
            await self.store.finish_proposal(
                proposal.id, ProposalStatus.EXPIRED, decided_at=self.clock()
            )
            return await refuse(
                f"This proposal expired at {proposal.expires_at:%H:%M UTC}; ask for it again."
            )
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
        if not await self.store.claim_proposal(proposal.id):
            return await refuse(
                "This proposal is already being confirmed; nothing more was written."
            )
        ctx = ToolContext(session, self.connector, self.catalog, self.results)
        try:
            result = await tool.execute(ctx, dict(proposal.payload))
        except ErpRefusal as exc:
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
            return await self._done(
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
            await self.store.finish_proposal(
                proposal.id,
                ProposalStatus.FAILED,
                error={"message": str(exc)},
                decided_at=self.clock(),
            )
            outcome = Outcome(Status.ERROR, proposal.tool, message=str(exc))
            return await self._done(
                session,
                proposal.tool,
                digest,
                started,
                Decision.FAILED,
                outcome,
                proposal_id=proposal.id,
            )
        stored = result if isinstance(result, dict) else {"value": result}
        await self.store.finish_proposal(
            proposal.id, ProposalStatus.EXECUTED, result=stored, decided_at=self.clock()
        )
        outcome = Outcome(
            Status.OK, proposal.tool, data=result, message=f"Done: {proposal.summary}."
        )
        return await self._done(
            session,
            proposal.tool,
            digest,
            started,
            Decision.CONFIRMED,
            outcome,
            proposal_id=proposal.id,
        )

    async def reject(self, session: Session, proposal_id: str) -> Outcome:
        started = time.perf_counter()
        proposal = await self.store.get_proposal(proposal_id)
        name = proposal.tool if proposal else "proposal.reject"
        digest = args_digest({"proposal": proposal_id})
        if proposal is None or proposal.user != session.user:
            outcome = Outcome(
                Status.REFUSED, name, message=f"There is no proposal {proposal_id} of yours."
            )
            return await self._done(
                session, name, digest, started, Decision.REFUSED, outcome, proposal_id=proposal_id
            )
        if proposal.status is not ProposalStatus.PENDING:
            outcome = Outcome(
                Status.REFUSED, name, message=f"This proposal is already {proposal.status}."
            )
            return await self._done(
                session, name, digest, started, Decision.REFUSED, outcome, proposal_id=proposal_id
            )
        await self.store.finish_proposal(
            proposal.id, ProposalStatus.REJECTED, decided_at=self.clock()
        )
        outcome = Outcome(Status.OK, name, message="Rejected: nothing was written.")
        return await self._done(
            session, name, digest, started, Decision.REJECTED, outcome, proposal_id=proposal_id
        )

    # ------------------------------------------------------------ audit

    async def _done(
        self,
        session: Session,
        tool: str,
        digest: str,
        started: float,
        decision: Decision,
        outcome: Outcome,
        reason: str | None = None,
        proposal_id: str | None = None,
    ) -> Outcome:
        event = AuditEvent(
            user=session.user,
            session_id=session.id,
            org=session.org,
            tool=tool,
            args_digest=digest,
            decision=decision,
            reason=reason or outcome.message or "; ".join(outcome.errors),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            proposal_id=proposal_id,
            at=self.clock(),
        )
        await self.store.record_event(event)
        for listener in self.listeners:
            listener(event)
        return outcome


def proposal_view(proposal: Proposal) -> dict[str, Any]:
    """What the user is shown and confirms: exact values or diff, and the hash that binds them."""
    view = asdict(proposal)
    for key in ("created_at", "expires_at", "decided_at"):
        value = view.get(key)
        view[key] = value.isoformat() if isinstance(value, dt.datetime) else value
    view["status"] = str(proposal.status)
    return {
        k: view[k]
        for k in (
            "id",
            "tool",
            "summary",
            "payload",
            "payload_hash",
            "diff",
            "document",
            "status",
            "expires_at",
        )
    }
