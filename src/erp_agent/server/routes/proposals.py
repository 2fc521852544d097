"""Confirm or reject a proposal: the gateway executes exactly the payload the user saw."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field

from erp_agent.calls.outcome import Outcome, Status
from erp_agent.gateway.proposals import proposal_view
from erp_agent.server.routes._deps import State, User
from erp_agent.server.state import ServerState
from erp_agent.store.records import Proposal, ProposalStatus

router = APIRouter(prefix="/api/proposals", tags=["proposals"])


class Confirm(BaseModel):
    payload_hash: str = Field(min_length=8, description="The hash shown with the proposal.")
    acknowledge_warning: bool = Field(
        default=False,
        description="The user acknowledged the proposal's warning (`unrequested`: suggested by "
        "content, not by their request); a flagged proposal is not confirmed without it.",
    )


def _view(state: ServerState, outcome: Outcome) -> dict[str, Any]:
    out = outcome.for_model()
    if outcome.proposal:
        # A proposal that replaces this one is confirmed here, bound to its hash.
        out["proposal"] = outcome.proposal
    out["message"] = outcome.message
    out["ok"] = outcome.status is Status.OK
    tool = state.runtime.registry.get(outcome.tool)
    if outcome.ok and tool is not None and tool.entity and isinstance(outcome.data, dict):
        out["link"] = state.runtime.connector.link(tool.entity, outcome.data)
    # The same words are now a message in the conversation (history and the next turn).
    out["conversation_message"] = outcome.conversation_message
    return out


def _stored(proposal: Proposal) -> dict[str, Any]:
    view: dict[str, Any] = dict(proposal_view(proposal))
    view["error"] = proposal.error
    view["result"] = proposal.result
    return view


@router.get("", summary="Your proposals, newest first; optionally one conversation's")
async def list_proposals(
    user: User,
    state: State,
    conversation_id: str | None = None,
    status: ProposalStatus | None = None,
    limit: int = Query(50, ge=1, le=500),
) -> dict[str, Any]:
    found = await state.runtime.store.list_proposals(
        user=user.session.user, status=status, conversation_id=conversation_id, limit=limit
    )
    return {"proposals": [_stored(p) for p in found]}


@router.get(
    "/{proposal_id}",
    summary="One of your proposals: its state, result or error, and its content warning",
)
async def get_proposal(proposal_id: str, user: User, state: State) -> dict[str, Any]:
    proposal = await state.runtime.store.get_proposal(proposal_id)
    if proposal is None or proposal.user != user.session.user:
        raise HTTPException(404, f"There is no proposal {proposal_id} of yours.")
    return _stored(proposal)


@router.post("/{proposal_id}/confirm", summary="Execute the proposal exactly as shown")
async def confirm(proposal_id: str, body: Confirm, user: User, state: State) -> dict[str, Any]:
    outcome = await state.runtime.gateway.confirm(
        user.session, proposal_id, body.payload_hash, acknowledged=body.acknowledge_warning
    )
    return _view(state, outcome)


class LineEdit(BaseModel):
    index: int = Field(ge=0, description="The line's position, from 0.")
    qty: float | str | None = None
    rate: float | str | None = None
    remove: bool = False


class Edit(BaseModel):
    date: str | None = Field(default=None, description="The document's new date, YYYY-MM-DD.")
    lines: list[LineEdit] = Field(default_factory=list, max_length=500)
    party: str | None = Field(
        default=None, max_length=140, description="Another customer or supplier, by its id."
    )


@router.post("/{proposal_id}/edit", summary="Edit before confirming: a new proposal replaces it")
async def edit(proposal_id: str, body: Edit, user: User, state: State) -> dict[str, Any]:
    edits: dict[str, Any] = {"date": body.date, "party": body.party, "lines": []}
    for line in body.lines:
        given = line.model_dump(exclude_none=True, exclude_defaults=False)
        edits["lines"].append({k: v for k, v in given.items() if k != "remove" or v})
    return _view(state, await state.runtime.gateway.revise(user.session, proposal_id, edits))


@router.post("/{proposal_id}/reject", summary="Discard the proposal; nothing is written")
async def reject(proposal_id: str, user: User, state: State) -> dict[str, Any]:
    return _view(state, await state.runtime.gateway.reject(user.session, proposal_id))
