"""A confirm whose write got no answer is never guessed at: "unknown — checking" until the
request can no longer reach the ERP, then decided from what the ERP holds, asked as the user.

A write that timed out may still be on its way: a reverse proxy may hold it and deliver it
after the agent stopped waiting (the reproduced failure: delivered 10 s after a 6 s timeout,
reported "not created", and the retry the user was offered made a second invoice). So the
proposal stays ``checking`` until ``InFlight`` says nothing can arrive any more — the ERP
client's timeout, the proxy's read timeout, a grace — and a second confirm meanwhile is
refused. Only then is the ERP asked:

- create: the confirm gives the write a marker (the proposal's id) and notes it before sending;
  a connector that keeps markers for the entity (a field set aside for it: Frappe's Custom
  Field ``erp_agent_write_id``, a mapped column in a SQL database) stores it with the record.
  A record carrying it is the write; none, after the window, means it was not written. Where
  no marker is kept, the confirm notes the ``created`` time of the user's newest record of the
  kind, and a record created by the user after it whose fields equal the payload is the write.
- update / submit / cancel / workflow action: the record's ``modified`` against
  ``base_modified``; if it moved, whether the record now shows the effect (the values, the
  document status, the workflow state) — a late submit is found submitted, never re-offered.
- delete: whether the record is gone.

The verdict: it happened (executed, with the document), it did not (failed; the same change is
prepared again for the user to confirm), or it cannot be told (failed, saying what to check —
never retried automatically, so nothing is ever written twice).
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from erp_agent.calls.outcome import Outcome, Status
from erp_agent.connectors.base import CapabilityMissing
from erp_agent.errors import (
    ErpAgentError,
    ErpAuthenticationError,
    ErpSessionExpired,
    ErpUnavailable,
)
from erp_agent.gateway.proposals import args_digest, fresh_arguments, proposal_view
from erp_agent.store.records import Decision, Proposal, ProposalStatus
from erp_agent.tools.base import BASE_MODIFIED, Tool, ToolContext

if TYPE_CHECKING:
    from erp_agent.calls.session import Session
    from erp_agent.gateway.desk import Desk

CHECK_LIMIT = 20  # records created since the checkpoint that are compared with the payload
UNDECIDED = (ProposalStatus.EXECUTING, ProposalStatus.CHECKING)


@dataclass(frozen=True)
class InFlight:
    """How long a write whose answer did not arrive may still reach the ERP and be committed:
    the ERP client's own timeout (ERP_AGENT_ERP_TIMEOUT), a reverse proxy's read timeout or the
    ERP's request timeout (ERP_AGENT_ERP_PROXY_READ_TIMEOUT), and a grace for clocks and a slow
    commit (ERP_AGENT_ERP_WRITE_GRACE)."""

    client_timeout: dt.timedelta = dt.timedelta(seconds=30)
    proxy_read_timeout: dt.timedelta = dt.timedelta(0)
    grace: dt.timedelta = dt.timedelta(seconds=30)

    def unanswered(self, sent_at: dt.datetime, now: dt.datetime) -> dt.datetime:
        """When a write sent at ``sent_at``, whose answer the client gave up on at ``now``, can
        no longer arrive."""
        return max(now, sent_at + self.client_timeout) + self.proxy_read_timeout + self.grace

    def abandoned(self, sent_at: dt.datetime, confirm_timeout: dt.timedelta) -> dt.datetime:
        """The same for a confirm that may have died at any moment of its calls (a crash):
        its client would have given up within ``confirm_timeout``."""
        waited = max(confirm_timeout, self.client_timeout)
        return sent_at + waited + self.proxy_read_timeout + self.grace


@dataclass
class Verdict:
    happened: bool | None  # None: the ERP's records cannot tell
    record: dict[str, Any] | None = None
    reason: str = ""


def _when(value: Any) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value) if isinstance(value, str) and value else None


def settle_after(proposal: Proposal) -> dt.datetime | None:
    """When the proposal's write can no longer reach the ERP, as its confirm noted it."""
    return _when((proposal.checkpoint or {}).get("settle_after"))


def when_sent(proposal: Proposal) -> dt.datetime | None:
    """When the confirm sent the proposal's write (noted just before)."""
    return _when((proposal.checkpoint or {}).get("sent_at"))


async def checkpoint(ctx: ToolContext, tool: Tool, marker: str) -> dict[str, Any]:
    """What a confirm notes just before sending a create, to find it later: its ``marker``
    where the system keeps one, else the ``created`` time of the user's newest record of the
    kind (the confirm adds when it sent the write and until when it could arrive)."""
    noted: dict[str, Any] = {}
    if tool.action == "create" and tool.entity is not None:
        cred = ctx.session.credential
        if await ctx.connector.marks_creates(cred, tool.entity):
            noted["marker"] = marker
        else:
            try:
                newest = await ctx.connector.created_by(
                    cred, tool.entity, cred.user, newest_first=True, limit=1
                )
            except CapabilityMissing:
                noted["uncheckable"] = True
            else:
                created = str(newest[0]["created"]) if newest else None
                noted.update(created_after=created, owner=cred.user)
    return noted


def checking_message(error: ErpAgentError, until: dt.datetime) -> str:
    """What the user is told while a write's outcome is unknown."""
    return (
        f"Unknown — checking: the ERP did not answer this write ({error}). It may still be on "
        f"its way, so whether it was written is asked of the ERP at {until:%H:%M:%S} UTC, when "
        "it can no longer arrive. It will not be written twice: do not make it again "
        "meanwhile; the result will be shown here."
    )


def _same(expected: Any, found: Any) -> bool:
    if isinstance(expected, bool) or isinstance(found, bool):
        return bool(expected) == bool(found)
    if isinstance(expected, int | float) and isinstance(found, int | float):
        return abs(float(expected) - float(found)) < 1e-9
    return str(expected) == str(found)


def _shows(values: dict[str, Any], record: dict[str, Any]) -> bool:
    """Whether every scalar value given is what the record holds (tables are not compared)."""
    return all(
        _same(value, record[key])
        for key, value in values.items()
        if key in record and value is not None and not isinstance(value, list | dict)
    )


async def _created(ctx: ToolContext, tool: Tool, proposal: Proposal) -> Verdict:
    assert tool.entity is not None
    noted, cred = proposal.checkpoint, ctx.session.credential
    if noted is None:
        # The checkpoint is noted before the write is sent: without it, nothing was sent.
        return Verdict(False, reason="The confirm stopped before anything was sent to the ERP.")
    label = ctx.catalog.entity(tool.entity).label
    marker = noted.get("marker")
    if marker:
        marked = await ctx.connector.find_marked(cred, tool.entity, str(marker))
        if marked:
            try:
                return Verdict(
                    True, await ctx.connector.get(cred, tool.entity, str(marked[0]["id"]))
                )
            except ErpAgentError:
                return Verdict(True, marked[0])
        return Verdict(
            False,
            reason=f"No {label} in the ERP carries this write's marker ({marker}) now that the "
            "request can no longer arrive: it was not created.",
        )
    if noted.get("uncheckable"):
        return Verdict(
            None,
            reason=f"This system keeps nothing a new {label} can be found by; check in it "
            "whether it was created before asking for it again.",
        )
    found = await ctx.connector.created_by(
        cred,
        tool.entity,
        str(noted.get("owner") or cred.user),
        after=noted.get("created_after"),
        limit=CHECK_LIMIT,
    )
    matching = [r for r in found if _shows(proposal.payload, r)]
    if matching:
        return Verdict(True, await ctx.connector.get(cred, tool.entity, str(matching[0]["id"])))
    if found:
        ids = ", ".join(str(r["id"]) for r in found)
        return Verdict(
            None,
            reason=f"You created {len(found)} other record(s) of this kind since ({ids}); "
            "check them in the ERP before asking for this one again.",
        )
    return Verdict(False, reason="The ERP holds no such record: it was not created.")


async def _acted_on(ctx: ToolContext, tool: Tool, proposal: Proposal) -> Verdict:
    assert tool.entity is not None
    cred, record_id = ctx.session.credential, str(proposal.payload["id"])
    base = proposal.base_modified or proposal.payload.get(BASE_MODIFIED)
    version = await ctx.connector.version(cred, tool.entity, record_id)
    if tool.action == "delete":
        if version is None:
            return Verdict(True, {"deleted": record_id})
        return Verdict(False, reason=f"{record_id} still exists: it was not deleted.")
    if version is None:
        return Verdict(None, reason=f"{record_id} no longer exists, or you can no longer read it.")
    if base is not None and version.modified == base:
        return Verdict(False, reason=f"{record_id} is unchanged: nothing was written.")
    record = await ctx.connector.get(cred, tool.entity, record_id)
    if tool.action == "update":
        done = _shows(dict(proposal.payload.get("values") or {}), record)
    elif tool.action in ("submit", "cancel"):
        # The canonical lifecycle (draft -> booked -> cancelled) the connector mapped it onto.
        life = ctx.catalog.entity(tool.entity).lifecycle
        state = "booked" if tool.action == "submit" else "cancelled"
        done = life is not None and life.is_state(version.state, state)
    elif tool.action == "workflow_action" and proposal.diff:
        step = proposal.diff[0]
        done = _same(step.get("after"), record.get(str(step.get("field"))))
    else:
        return Verdict(None, reason=f"{record_id} changed; check it in the ERP.")
    if done:
        return Verdict(True, record)
    return Verdict(False, reason=f"{record_id} was changed by someone else; this was not written.")


async def effect(ctx: ToolContext, tool: Tool, proposal: Proposal) -> Verdict:
    """Whether the proposal's write happened, asked of the ERP as the user."""
    if tool.entity is None:
        return Verdict(None, reason="This change cannot be checked in the ERP; check it there.")
    if tool.action == "create":
        return await _created(ctx, tool, proposal)
    if "id" not in proposal.payload:
        return Verdict(None, reason="This change cannot be checked in the ERP; check it there.")
    return await _acted_on(ctx, tool, proposal)


async def offer_again(
    gateway: Desk, session: Session, tool: Tool, ctx: ToolContext, proposal: Proposal
) -> tuple[Proposal | None, str]:
    """The same change prepared afresh against the ERP as it is now, as a new proposal in the
    same conversation; or why there is none (e.g. the change is already there)."""
    assert tool.prepare is not None
    try:
        change = await tool.prepare(ctx, fresh_arguments(proposal.payload))
    except ErpAgentError as exc:
        return None, str(exc)
    fresh = await gateway.store_proposal(
        session, tool.name, change, proposal.conversation_id, today=ctx.today
    )
    await gateway.audit(
        session, tool.name, args_digest(fresh.payload), time.perf_counter(), Decision.PROPOSED,
        Outcome(Status.PROPOSAL, tool.name, message=fresh.summary), proposal_id=fresh.id,
    )  # fmt: skip
    return fresh, ""


async def settle(
    gateway: Desk, session: Session, proposal: Proposal, started: float | None = None
) -> Outcome | None:
    """Decide an ``executing`` or ``checking`` proposal from what the ERP holds. None if the
    ERP cannot be asked now (it stays as it is, for the next try) or another process decided
    it. Callers decide only once the write can no longer arrive (``due``)."""
    started = time.perf_counter() if started is None else started
    status = proposal.status
    tool = gateway.registry.get(proposal.tool)
    digest = args_digest({"proposal": proposal.id})
    ctx = gateway.context_of(session, proposal)
    if tool is None:
        verdict = Verdict(None, reason=f"The tool {proposal.tool} no longer exists; check the ERP.")
    else:
        try:
            verdict = await effect(ctx, tool, proposal)
        except (ErpUnavailable, ErpSessionExpired, ErpAuthenticationError):
            return None  # the ERP cannot be asked now, or not as this session: later
        except ErpAgentError as exc:
            verdict = Verdict(None, reason=f"Checking the ERP failed: {exc}")
    if verdict.happened:
        record = verdict.record or {}
        if not await gateway.store.finish_proposal(
            proposal.id, ProposalStatus.EXECUTED, result=record, decided_at=gateway.clock(),
            expected=status,
        ):  # fmt: skip
            return None
        outcome = Outcome(
            Status.OK, proposal.tool, data=record,
            message=f"Done: {proposal.summary} (checked in the ERP after the confirm was interrupted).",
        )  # fmt: skip
        return await gateway.audit(
            session, proposal.tool, digest, started, Decision.CONFIRMED, outcome,
            proposal_id=proposal.id, action="settle",
        )  # fmt: skip
    message = f"The confirm was interrupted. {verdict.reason}"
    fresh: Proposal | None = None
    if verdict.happened is False and tool is not None and not session.read_only:
        fresh, why_none = await offer_again(gateway, session, tool, ctx, proposal)
        message += (
            " It is prepared again below: confirm it to write it."
            if fresh
            else f" {why_none}".rstrip()
        )
    error = {"message": message, "interrupted": True, "written": verdict.happened}
    if not await gateway.store.finish_proposal(
        proposal.id, ProposalStatus.FAILED, error=error, decided_at=gateway.clock(),
        superseded_by=fresh.id if fresh else None, expected=status,
    ):  # fmt: skip
        if fresh is not None:  # another process decided it (and offered its own): withdraw ours
            await gateway.store.finish_proposal(
                fresh.id, ProposalStatus.SUPERSEDED, decided_at=gateway.clock(),
                expected=ProposalStatus.PENDING,
            )  # fmt: skip
        return None
    outcome = Outcome(
        Status.ERROR, proposal.tool, message=message,
        proposal=proposal_view(fresh) if fresh else None,
    )  # fmt: skip
    return await gateway.audit(
        session, proposal.tool, digest, started, Decision.FAILED, outcome,
        proposal_id=proposal.id, action="settle",
    )  # fmt: skip


def due(proposal: Proposal, confirm_timeout: dt.timedelta, window: InFlight) -> dt.datetime:
    """When an ``executing`` or ``checking`` proposal may be decided: once its write can no
    longer reach the ERP. Without a checkpoint nothing was sent (it is noted first), and only
    the confirm itself may still be running."""
    noted = settle_after(proposal)
    if noted is not None:
        return noted
    claimed = proposal.claimed_at or proposal.created_at
    if proposal.checkpoint:  # noted by an earlier version, without the time it was sent
        return window.abandoned(claimed, confirm_timeout)
    return claimed + confirm_timeout


def overdue(
    proposal: Proposal,
    now: dt.datetime,
    timeout: dt.timedelta,
    window: InFlight | None = None,
) -> bool:
    """An ``executing`` or ``checking`` proposal whose write can no longer reach the ERP."""
    window = window or InFlight(timeout, dt.timedelta(0), dt.timedelta(0))
    return proposal.status in UNDECIDED and now >= due(proposal, timeout, window)
