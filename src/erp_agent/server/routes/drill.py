"""The documents behind one figure: what a click on a cell or a bar opens."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException

from erp_agent.calls.outcome import Status
from erp_agent.channels.drill import open_figure
from erp_agent.server.blocks import for_web
from erp_agent.server.routes._deps import State, User
from erp_agent.tools.modules.drill import EXPIRED, NOT_YOURS

router = APIRouter(prefix="/api/drill", tags=["results"])


@router.get("/{ref}", summary="The documents behind one figure of a stored result, as you")
async def open_ref(ref: str, user: User, state: State) -> dict[str, Any]:
    opened = await open_figure(state.runtime, user.session, ref)
    outcome = opened.outcome
    if opened.block is None:
        message = outcome.message or "This figure cannot be opened."
        if outcome.status is Status.REFUSED:
            raise HTTPException(403, message)
        if outcome.status is Status.ERP_REFUSED:
            raise HTTPException(502, message)
        if message.startswith(NOT_YOURS):
            raise HTTPException(404, message)
        if message.startswith(EXPIRED):
            raise HTTPException(410, message)
        raise HTTPException(400, message)
    return {**opened.summary, "result_id": opened.result_id, "blocks": for_web([opened.block])}
