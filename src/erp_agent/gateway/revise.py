"""Editing a proposal before it is confirmed: quantities, rates, the date, removing lines, and
the party (a scanned name several records fit).

An edit never changes a stored proposal. The edited arguments go through the tool's schema and
its ``prepare`` again (so the ERP re-fills and re-validates the document, as the user), and the
result is a NEW proposal with its own id and payload hash; the old one is marked superseded and
can no longer be confirmed. Confirm then executes exactly what the new one shows.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.errors import ErpAgentError, ErpRefusal, NeedsChoice, ToolInputError
from erp_agent.gateway.proposals import args_digest, decision_refusal, proposal_view
from erp_agent.store.records import Decision, ProposalStatus

if TYPE_CHECKING:
    from erp_agent.gateway.desk import Desk


PARTY_FIELDS = ("supplier", "customer", "party_name")  # who the document is with, by entity


def _number(value: Any, what: str, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ToolInputError(f"{what} must be a number, not {value!r}.")
    try:
        number = float(str(value).replace(",", "").strip())
    except ValueError:
        raise ToolInputError(f"{what} must be a number, not {value!r}.") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ToolInputError(f"{what} must be a number, not {value!r}.")
    if positive and number <= 0:
        raise ToolInputError(f"{what} must be more than 0, not {value}.")
    if number < 0:
        raise ToolInputError(f"{what} cannot be negative ({value}).")
    return number


def apply_edits(
    payload: Mapping[str, Any], date_field: str | None, edits: Mapping[str, Any]
) -> dict[str, Any]:
    """The payload with the user's edits; ToolInputError naming the first bad value."""
    out = dict(payload)
    if edits.get("date") is not None:
        if date_field is None or date_field not in out:
            raise ToolInputError("This proposal has no date to change.")
        try:
            out[date_field] = dt.date.fromisoformat(str(edits["date"])).isoformat()
        except ValueError:
            raise ToolInputError(f"The date must be YYYY-MM-DD, not {edits['date']!r}.") from None
    if edits.get("party") is not None:
        field = next((f for f in PARTY_FIELDS if f in out), None)
        party = str(edits["party"]).strip()
        if field is None:
            raise ToolInputError("This proposal has no party to change.")
        if not party or len(party) > 140:
            raise ToolInputError(f"The party must be a record's id, not {edits['party']!r}.")
        out[field] = party
    line_edits = edits.get("lines") or []
    if line_edits:
        rows = out.get("items")
        if not isinstance(rows, list):
            raise ToolInputError("This proposal has no lines to edit.")
        rows = [dict(r) for r in rows]
        removed: set[int] = set()
        for edit in line_edits:
            index = edit.get("index") if isinstance(edit, Mapping) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(rows):
                raise ToolInputError(
                    f"There is no line {edit.get('index') if isinstance(edit, Mapping) else edit!r}."
                )
            line = f"Line {index + 1}"
            if edit.get("remove"):
                removed.add(index)
                continue
            if "qty" in edit:
                rows[index]["qty"] = _number(edit["qty"], f"{line}: the quantity", positive=True)
            if "rate" in edit:
                rows[index]["rate"] = _number(edit["rate"], f"{line}: the rate", positive=False)
        rows = [r for i, r in enumerate(rows) if i not in removed]
        if not rows:
            raise ToolInputError("A document needs at least one line; reject it instead.")
        out["items"] = rows
    if out == dict(payload):
        raise ToolInputError("Nothing to change: the edits match the proposal as it is.")
    return out


async def revise(
    gateway: Desk, session: Session, proposal_id: str, edits: Mapping[str, Any]
) -> Outcome:
    started = time.perf_counter()
    proposal = await gateway.store.get_proposal(proposal_id)
    name = proposal.tool if proposal else "proposal.edit"
    digest = args_digest({"proposal": proposal_id, "edits": edits})

    async def done(outcome: Outcome, decision: Decision) -> Outcome:
        return await gateway.audit(
            session, name, digest, started, decision, outcome, proposal_id=proposal_id,
            action="edit",
        )  # fmt: skip

    reason = decision_refusal(
        proposal, proposal_id, session.user, session.id, gateway.clock(), "edit"
    )
    tool = gateway.registry.get(name)
    if reason is None and (
        tool is None or tool.prepare is None or name not in session.allowed_tools
    ):
        reason = f"The tool {name} is no longer available to you; nothing was written."
    if reason is not None:
        return await done(Outcome(Status.REFUSED, name, message=reason), Decision.REFUSED)
    assert proposal is not None
    assert tool is not None
    assert tool.prepare is not None
    entity = gateway.catalog.entities.get(tool.entity or "")
    try:
        args = apply_edits(proposal.payload, entity.date_field if entity else None, edits)
    except ToolInputError as exc:
        return await done(
            Outcome(Status.INVALID, name, errors=[str(exc)], message=str(exc)), Decision.INVALID
        )
    errors = gateway.validate(tool, args)
    if errors:
        message = "The edited values are not valid: " + "; ".join(errors)
        return await done(
            Outcome(Status.INVALID, name, errors=errors, message=message), Decision.INVALID
        )
    ctx = gateway.context_of(session, proposal)
    try:
        change = await tool.prepare(ctx, args)
    except ErpRefusal as exc:
        outcome = Outcome(
            Status.ERP_REFUSED, name, refusal=exc.refusal.as_dict(),
            message=f"The ERP refused the edit: {exc.refusal.message} Nothing was changed.",
        )  # fmt: skip
        return await done(outcome, Decision.ERP_REFUSED)
    except (NeedsChoice, ToolInputError) as exc:
        return await done(
            Outcome(Status.INVALID, name, errors=[str(exc)], message=str(exc)), Decision.INVALID
        )
    except ErpAgentError as exc:
        return await done(Outcome(Status.ERROR, name, message=str(exc)), Decision.FAILED)
    fresh = await gateway.store_proposal(
        session, tool.name, change, proposal.conversation_id, proposal.warning, today=ctx.today
    )
    if not await gateway.store.finish_proposal(
        proposal.id, ProposalStatus.SUPERSEDED, decided_at=gateway.clock(),
        superseded_by=fresh.id, expected=ProposalStatus.PENDING,
    ):  # fmt: skip
        await gateway.store.finish_proposal(
            fresh.id, ProposalStatus.REJECTED, decided_at=gateway.clock()
        )
        message = "This proposal was confirmed or rejected meanwhile; the edit was not applied."
        return await done(Outcome(Status.REFUSED, name, message=message), Decision.REFUSED)
    outcome = Outcome(
        Status.PROPOSAL, name, proposal=proposal_view(fresh),
        message=f"Edited, not written: {change.summary}. The user must confirm the new proposal.",
    )  # fmt: skip
    return await done(outcome, Decision.PROPOSED)
