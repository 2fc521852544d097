"""Hosted mode's relay endpoint, for the ERP plugin, authenticated by an organisation key
(see ``erp_agent.relay.hub`` for the protocol and its safety rules)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, HTTPException, Request

from erp_agent.errors import ChannelError, RelayProtocolError
from erp_agent.server.routes._deps import State

router = APIRouter(prefix="/api/relay", tags=["relay"])


async def organisation(request: Request, state: State) -> str:
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise HTTPException(
            401, "Send the organisation's relay key as 'Authorization: Bearer <key>'."
        )
    try:
        return (await state.keys.record(key, "org")).org
    except ChannelError as exc:
        raise HTTPException(401, str(exc)) from exc


Org = Annotated[str, Depends(organisation)]
JsonBody = Annotated[dict[str, Any], Body()]


@router.post(
    "/turns", summary="Start a question or a confirmation as USER; answers with calls or final"
)
async def start(body: JsonBody, org: Org, state: State) -> dict[str, Any]:
    user = body.get("user")
    if not isinstance(user, str) or not user.strip():
        raise HTTPException(422, 'Name the ERP user who asks: {"user": ..., "message": ...}.')
    try:
        return await state.relay.start(org, user.strip(), body)
    except RelayProtocolError as exc:
        raise HTTPException(422, str(exc)) from exc


@router.post(
    "/turns/{turn_id}/results",
    summary="The results of the calls of batch seq, as the ERP returned them",
)
async def results(turn_id: str, body: JsonBody, org: Org, state: State) -> dict[str, Any]:
    try:
        return await state.relay.resume(org, turn_id, body)
    except RelayProtocolError as exc:
        status = (
            404
            if "There is no relay turn" in str(exc)
            else 413
            if "larger than" in str(exc)
            else 409
        )
        raise HTTPException(status, str(exc)) from exc
