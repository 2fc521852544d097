"""Confirm or reject a proposal: the gateway executes exactly the payload the user saw."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from erp_agent.gateway.outcome import Outcome, Status
from erp_agent.server.routes._deps import State, User
from erp_agent.server.state import ServerState

router = APIRouter(prefix="/api/proposals", tags=["proposals"])


class Confirm(BaseModel):
    payload_hash: str = Field(min_length=8, description="The hash shown with the proposal.")


def _view(state: ServerState, outcome: Outcome) -> dict[str, Any]:
    out = outcome.for_model()
    out["message"] = outcome.message
    out["ok"] = outcome.status is Status.OK
    tool = state.runtime.registry.get(outcome.tool)
    if outcome.ok and tool is not None and tool.entity and isinstance(outcome.data, dict):
        out["link"] = state.runtime.connector.link(tool.entity, outcome.data)
    return out


@router.post("/{proposal_id}/confirm", summary="Execute the proposal exactly as shown")
async def confirm(proposal_id: str, body: Confirm, user: User, state: State) -> dict[str, Any]:
    outcome = await state.runtime.gateway.confirm(user.session, proposal_id, body.payload_hash)
    return _view(state, outcome)


@router.post("/{proposal_id}/reject", summary="Discard the proposal; nothing is written")
async def reject(proposal_id: str, user: User, state: State) -> dict[str, Any]:
    return _view(state, await state.runtime.gateway.reject(user.session, proposal_id))
