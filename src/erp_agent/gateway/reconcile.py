"""A confirm interrupted by a crash or a timeout ends executed or failed, never stuck.

When the ERP did not answer a write, or the process died while a proposal was ``executing``,
nobody knows whether the ERP wrote it. This module asks the ERP, as the user:

- create: before writing, the confirm notes the ``created`` time of the user's newest record of
  that kind (the checkpoint). Afterwards, a record created by the user after it whose fields
  equal the payload is the write. ``owner`` and ``creation`` are standard columns Frappe stores
  with every document, so nothing is added to what the user confirmed.
- update / submit / cancel / workflow action: the record's ``modified`` against
  ``base_modified``; if it moved, whether the record now shows the effect (the values, the
  document status, the workflow state).
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

from erp_agent.errors import ErpAgentError, ErpUnavailable
from erp_agent.gateway.outcome import Outcome, Status
from erp_agent.gateway.proposals import args_digest, fresh_arguments, proposal_view
from erp_agent.store.models import Decision, Proposal, ProposalStatus
from erp_agent.tools.base import BASE_MODIFIED, Tool, ToolContext

if TYPE_CHECKING:
    from erp_agent.gateway.gateway import Gateway
    from erp_agent.gateway.session import Session

CHECK_LIMIT = 20  # records created since the checkpoint that are compared with the payload


@dataclass
class Verdict:
    happened: bool | None  # None: the ERP's records cannot tell
    record: dict[str, Any] | None = None
    reason: str = ""


async def checkpoint(ctx: ToolContext, tool: Tool) -> dict[str, Any] | None:
    """What a create's confirm notes just before writing (None for other writes)."""
    if tool.action != "create" or tool.entity is None:
        return None
    user = ctx.session.credential.user
    newest = await ctx.connector.created_by(
        ctx.session.credential, tool.entity, user, newest_first=True, limit=1
    )
    return {"created_after": str(newest[0]["created"]) if newest else None, "owner": user}


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
    if proposal.checkpoint is None:
        # The checkpoint is noted before the write is sent: without it, nothing was sent.
        return Verdict(False, reason="The confirm stopped before anything was sent to the ERP.")
    found = await ctx.connector.created_by(
        ctx.session.credential,
        tool.entity,
        str(proposal.checkpoint.get("owner") or ctx.session.credential.user),
        after=proposal.checkpoint.get("created_after"),
        limit=CHECK_LIMIT,
    )
    matching = [r for r in found if _shows(proposal.payload, r)]
    if matching:
        record = await ctx.connector.get(
            ctx.session.credential, tool.entity, str(matching[0]["id"])
        )
        return Verdict(True, record)
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
    elif tool.action == "submit":
        done = version.docstatus == 1
    elif tool.action == "cancel":
        done = version.docstatus == 2
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
    gateway: Gateway, session: Session, tool: Tool, ctx: ToolContext, proposal: Proposal
) -> tuple[Proposal | None, str]:
    """The same change prepared afresh against the ERP as it is now, as a new proposal in the
    same conversation; or why there is none (e.g. the change is already there)."""
    assert tool.prepare is not None
    try:
        change = await tool.prepare(ctx, fresh_arguments(proposal.payload))
    except ErpAgentError as exc:
        return None, str(exc)
    fresh = await gateway.store_proposal(session, tool.name, change, proposal.conversation_id)
    await gateway.audit(
        session, tool.name, args_digest(fresh.payload), time.perf_counter(), Decision.PROPOSED,
        Outcome(Status.PROPOSAL, tool.name, message=fresh.summary), proposal_id=fresh.id,
    )  # fmt: skip
    return fresh, ""


async def settle(
    gateway: Gateway, session: Session, proposal: Proposal, started: float | None = None
) -> Outcome | None:
    """Decide an ``executing`` proposal from what the ERP holds. None if the ERP cannot be
    asked now (it stays executing, for the next try) or another process decided it."""
    started = time.perf_counter() if started is None else started
    tool = gateway.registry.get(proposal.tool)
    digest = args_digest({"proposal": proposal.id})
    ctx = ToolContext(session, gateway.connector, gateway.catalog, gateway.results, gateway.today)
    if tool is None:
        verdict = Verdict(None, reason=f"The tool {proposal.tool} no longer exists; check the ERP.")
    else:
        try:
            verdict = await effect(ctx, tool, proposal)
        except ErpUnavailable:
            return None
        except ErpAgentError as exc:
            verdict = Verdict(None, reason=f"Checking the ERP failed: {exc}")
    if verdict.happened:
        record = verdict.record or {}
        if not await gateway.store.finish_proposal(
            proposal.id, ProposalStatus.EXECUTED, result=record, decided_at=gateway.clock(),
            expected=ProposalStatus.EXECUTING,
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
    fresh: Proposal | None = None
    message = f"The confirm was interrupted. {verdict.reason}"
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
        superseded_by=fresh.id if fresh else None, expected=ProposalStatus.EXECUTING,
    ):  # fmt: skip
        return None
    outcome = Outcome(
        Status.ERROR, proposal.tool, message=message,
        proposal=proposal_view(fresh) if fresh else None,
    )  # fmt: skip
    return await gateway.audit(
        session, proposal.tool, digest, started, Decision.FAILED, outcome,
        proposal_id=proposal.id, action="settle",
    )  # fmt: skip


def overdue(proposal: Proposal, now: dt.datetime, timeout: dt.timedelta) -> bool:
    """An ``executing`` proposal whose confirm cannot still be running."""
    claimed = proposal.claimed_at or proposal.created_at
    return proposal.status is ProposalStatus.EXECUTING and now - claimed >= timeout
