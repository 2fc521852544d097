"""A turn from any worker: its status and response (polling), or its SSE stream as it runs
wherever it runs (Redis streams between workers)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import StreamingResponse

from erp_agent.results.blocks import blocks_of
from erp_agent.server.background import QUEUED
from erp_agent.server.blocks import for_web
from erp_agent.server.routes._deps import State, User
from erp_agent.server.state import ServerState
from erp_agent.server.streaming import KEEPALIVE_SECONDS, sse
from erp_agent.store.records import Turn

router = APIRouter(prefix="/api/turns", tags=["chat"])


async def _owned(state: ServerState, turn_id: str, user: str) -> Turn:
    turn = await state.store.get_turn(turn_id)
    conversation = await state.store.get_conversation(turn.conversation_id) if turn else None
    if turn is None or conversation is None or conversation.user != user:
        raise HTTPException(404, "No such turn of yours.")
    return turn


def _stored_response(turn: Turn) -> dict[str, Any] | None:
    response = turn.state.get("response")
    if not isinstance(response, dict):
        return None
    return {**response, "blocks": for_web(blocks_of(response.get("blocks", [])))}


@router.get("/{turn_id}", summary="A turn's status (queued, running, done, failed) and response")
async def turn_status(turn_id: str, user: User, state: State) -> dict[str, Any]:
    turn = await _owned(state, turn_id, user.session.user)
    return {
        "turn_id": turn.id,
        "conversation_id": turn.conversation_id,
        "status": turn.status,
        "attempts": turn.state.get("attempts", 0),
        "response": _stored_response(turn),
    }


@router.get(
    "/{turn_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
    summary="The turn's SSE stream (progress, delta, response, error), from its first event",
)
async def turn_events(turn_id: str, user: User, state: State) -> StreamingResponse:
    turn = await _owned(state, turn_id, user.session.user)

    async def stream() -> AsyncIterator[str]:
        if turn.status not in (QUEUED, "running") and not await state.turn_events.exists(turn_id):
            yield sse("response", _stored_response(turn))
            return
        async for event, data in state.turn_events.read(turn_id, timeout=KEEPALIVE_SECONDS):
            if event != "keepalive":
                yield sse(event, data)
                continue
            yield ": keepalive\n\n"
            # Finished where no stream reaches this worker (e.g. Redis was down there).
            now = await state.store.get_turn(turn_id)
            if now is not None and now.status not in (QUEUED, "running"):
                yield sse("response", _stored_response(now))
                return

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
