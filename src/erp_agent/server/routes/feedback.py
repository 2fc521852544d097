"""Feedback on one answer: thumbs up or down and a comment, stored with the turn and on its row
of the interaction log, where the admin console's feedback view finds it."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from erp_agent.masking import mask_secrets
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
    at = dt.datetime.now(dt.UTC)
    turn.state["feedback"] = {"rating": body.rating, "comment": body.comment, "at": at.isoformat()}
    await store.save_turn(turn)
    # The log row holds it for the admin console (masked like the question beside it); a turn
    # not logged yet keeps its feedback on the turn alone.
    await store.rate_interaction(turn_id, body.rating, mask_secrets(body.comment), at)
    return {"turn_id": turn_id, "feedback": turn.state["feedback"]}
