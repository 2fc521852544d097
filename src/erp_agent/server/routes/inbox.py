"""The signed-in user's inbox (what their subscriptions delivered, and notices about them) and
their subscriptions: list, pause, resume, delete. Creating one is a turn's proposal (the
subscriptions.create tool), confirmed like any other write."""

from __future__ import annotations

import datetime as dt
from typing import Any

from fastapi import APIRouter, HTTPException, Query

from erp_agent.errors import ToolInputError
from erp_agent.server.routes._deps import State, User
from erp_agent.subscriptions.models import Status
from erp_agent.subscriptions.service import SubscriptionService

router = APIRouter(prefix="/api", tags=["subscriptions"])


def service_of(state: State) -> SubscriptionService:
    found = state.runtime.subscriptions
    if found is None:
        raise HTTPException(409, "Subscriptions are not available on this server.")
    return found


@router.get("/inbox", summary="What your subscriptions delivered, newest first")
async def inbox(
    user: User,
    state: State,
    unread: bool = False,
    limit: int = Query(50, ge=1, le=200),
) -> dict[str, Any]:
    items = await service_of(state).store.items(user.session.user, unread=unread, limit=limit)
    unread_count = len(
        await service_of(state).store.items(user.session.user, unread=True, limit=200)
    )
    return {"items": [i.as_dict() for i in items], "unread": unread_count}


@router.post("/inbox/{item_id}/read", summary="Mark an inbox item read")
async def read_item(item_id: str, user: User, state: State) -> dict[str, Any]:
    done = await service_of(state).store.mark_read(
        user.session.user, item_id, dt.datetime.now(dt.UTC)
    )
    if not done:
        raise HTTPException(404, "No such item in your inbox.")
    return {"id": item_id, "read": True}


@router.get("/subscriptions", summary="Your subscriptions")
async def my_subscriptions(user: User, state: State) -> dict[str, Any]:
    return await service_of(state).listing(user.session.user)


async def _own(state: State, user: User, sub_id: str) -> None:
    found = await service_of(state).store.get(sub_id)
    if found is None or found.user != user.session.user:
        raise HTTPException(404, "No such subscription of yours.")


@router.post("/subscriptions/{sub_id}/pause", summary="Pause one of your subscriptions")
async def pause(sub_id: str, user: User, state: State) -> dict[str, Any]:
    await _own(state, user, sub_id)
    return await service_of(state).set_status(user.session.user, sub_id, Status.PAUSED)


@router.post("/subscriptions/{sub_id}/resume", summary="Resume one of your subscriptions")
async def resume(sub_id: str, user: User, state: State) -> dict[str, Any]:
    await _own(state, user, sub_id)
    try:
        return await service_of(state).set_status(user.session.user, sub_id, Status.ACTIVE)
    except ToolInputError as exc:
        raise HTTPException(422, str(exc)) from exc


@router.delete("/subscriptions/{sub_id}", summary="Delete one of your subscriptions")
async def delete(sub_id: str, user: User, state: State) -> dict[str, Any]:
    await _own(state, user, sub_id)
    return await service_of(state).delete(user.session.user, sub_id)
