"""Feedback on one answer: thumbs up or down and a comment, stored with the turn."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from erp_agent.server.routes._deps import State, User

router = APIRouter(prefix="/api/turns", tags=["feedback"])


class Feedback(BaseModel):
    rating: Literal["up", "down"]
    comment: str = Field("", max_length=2000)


@router.post("/{turn_id}/feedback", summary="Rate an answer")
async def feedback(turn_id: str, body: Feedback, user: User, state: State) -> dict[str, Any]:
    store = state.runtime.store
    turn = await store.get_turn(turn_id)
    conversation = await store.get_conversation(turn.conversation_id) if turn else None
    if turn is None or conversation is None or conversation.user != user.session.user:
        raise HTTPException(404, "No such answer of yours.")
    turn.state["feedback"] = {
        "rating": body.rating,
        "comment": body.comment,
        "at": dt.datetime.now(dt.UTC).isoformat(),
    }
    await store.save_turn(turn)
    return {"turn_id": turn_id, "feedback": turn.state["feedback"]}
