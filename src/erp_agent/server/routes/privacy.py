"""Your data: export it, delete a conversation; an administrator deletes a user's data."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException

from erp_agent.server import retention
from erp_agent.server.routes._deps import Admin, State, User

router = APIRouter(tags=["privacy"])


@router.get("/api/me/export", summary="Everything the agent keeps about you (JSON)")
async def export_mine(user: User, state: State) -> dict[str, Any]:
    return await retention.export_user(state, user.session.user)


@router.delete("/api/conversations/{conversation_id}", summary="Delete one of your conversations")
async def delete_conversation(conversation_id: str, user: User, state: State) -> dict[str, bool]:
    conversation = await state.store.get_conversation(conversation_id)
    # Another user's conversation is answered exactly like a missing one: nothing is revealed.
    if conversation is None or conversation.user != user.session.user:
        raise HTTPException(404, "No such conversation of yours.")
    await state.store.delete_conversation(conversation_id)
    return {"deleted": True}


@router.delete("/api/admin/users/{user_id}/data", summary="Delete everything kept about a user")
async def delete_user_data(user_id: str, admin: Admin, state: State) -> dict[str, Any]:
    counts = await retention.delete_user(state, user_id)
    return {"user": user_id, "deleted": counts}


@router.get("/api/admin/users/{user_id}/export", summary="Export what is kept about a user")
async def export_user_data(user_id: str, admin: Admin, state: State) -> dict[str, Any]:
    return await retention.export_user(state, user_id)
