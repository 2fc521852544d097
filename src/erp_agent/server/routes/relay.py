"""Hosted mode's relay endpoint, for the ERP plugin: authenticated by an organisation key of a
registered organisation, each request carrying the plugin's signed assertion of its user (see
``erp_agent.relay.hub`` for the protocol and ``relay.assertions`` for the signature)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, HTTPException, Request

from erp_agent.errors import ChannelError, RelayProtocolError
from erp_agent.relay.assertions import AssertionRefused
from erp_agent.server.routes._deps import State
from erp_agent.store.records import ApiKey

router = APIRouter(prefix="/api/relay", tags=["relay"])


async def organisation(request: Request, state: State) -> ApiKey:
    """The organisation key of the request, of an organisation still registered here."""
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise HTTPException(
            401, "Send the organisation's relay key as 'Authorization: Bearer <key>'."
        )
    try:
        record = await state.keys.record(key, "org")
        await state.keys.require_org(record.org)
    except ChannelError as exc:
        raise HTTPException(401, str(exc)) from exc
    return record


OrgKey = Annotated[ApiKey, Depends(organisation)]
JsonBody = Annotated[dict[str, Any], Body()]


async def asserted_user(state: State, key: ApiKey, body: dict[str, Any]) -> str:
    """The user the plugin signed this request for (fresh, used once), or 401 saying why."""
    user = body.get("user")
    if not isinstance(user, str) or not user.strip():
        raise HTTPException(422, 'Name the ERP user who asks: {"user": ..., "message": ...}.')
    try:
        return await state.relay.assertions.verify(key, body)
    except AssertionRefused as exc:
        raise HTTPException(401, str(exc)) from exc


@router.post(
    "/turns", summary="Start a question or a confirmation as USER; answers with calls or final"
)
async def start(body: JsonBody, key: OrgKey, state: State) -> dict[str, Any]:
    user = await asserted_user(state, key, body)
    try:
        return await state.relay.start(key.org, user.strip(), body)
    except RelayProtocolError as exc:
        raise HTTPException(422, str(exc)) from exc


@router.post(
    "/turns/{turn_id}/results",
    summary="The results of the calls of batch seq, as the ERP returned them",
)
async def results(turn_id: str, body: JsonBody, key: OrgKey, state: State) -> dict[str, Any]:
    await asserted_user(state, key, body)  # the hub checks it is the turn's user
    try:
        return await state.relay.resume(key.org, turn_id, body)
    except RelayProtocolError as exc:
        status = (
            404
            if "There is no relay turn" in str(exc)
            else 413
            if "larger than" in str(exc)
            else 409
        )
        raise HTTPException(status, str(exc)) from exc
