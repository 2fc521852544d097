"""Conversations: the user's list, and one conversation's turns with their stored responses."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query

from erp_agent.results.blocks import Block, blocks_of
from erp_agent.server.blocks import for_web
from erp_agent.server.routes._deps import State, User
from erp_agent.server.state import ServerState

router = APIRouter(prefix="/api/conversations", tags=["conversations"])


@router.get("", summary="Your conversations, newest first")
async def list_conversations(
    user: User, state: State, limit: int = Query(50, ge=1, le=200)
) -> list[dict[str, Any]]:
    found = await state.runtime.store.list_conversations(user.session.user, limit=limit)
    return [{"id": c.id, "title": c.title, "updated_at": c.updated_at.isoformat()} for c in found]


async def _fresh_proposals(state: ServerState, blocks: list[Block]) -> list[Block]:
    """A stored response shows a proposal as it was; show its status as it is now."""
    out = []
    for block in for_web(blocks):
        if block["type"] == "proposal":
            proposal = await state.runtime.store.get_proposal(str(block.get("id")))
            if proposal is not None:
                block = {**block, "status": str(proposal.status)}
        out.append(block)
    return out


@router.get("/{conversation_id}", summary="Resume: the turns and their responses")
async def get_conversation(conversation_id: str, user: User, state: State) -> dict[str, Any]:
    store = state.runtime.store
    conversation = await store.get_conversation(conversation_id)
    if conversation is None or conversation.user != user.session.user:
        raise HTTPException(404, "No such conversation of yours.")
    turns = []
    for turn in await store.turns(conversation.id):
        response = turn.state.get("response")
        if isinstance(response, dict):
            response = {
                **response,
                "blocks": await _fresh_proposals(state, blocks_of(response.get("blocks", []))),
            }
        turns.append(
            {
                "id": turn.id,
                "seq": turn.seq,
                "user_message": turn.user_message,
                "status": turn.status,
                "at": turn.created_at.isoformat(),
                "response": response,
                "feedback": turn.state.get("feedback"),
                # "outcome": the result of a confirm or reject, with no user message
                "kind": turn.state.get("kind", "turn"),
            }
        )
    return {"id": conversation.id, "title": conversation.title, "turns": turns}
