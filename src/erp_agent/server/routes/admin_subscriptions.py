"""Admin console: every subscription (pause, resume, delete), and which users have a standing
credential their subscriptions run as; enabling a user has the ERP issue them an API key pair
(docs/security-model.md, "Subscriptions run as the user")."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from erp_agent.errors import ConfigError, ErpAgentError, ErpRefusal
from erp_agent.server.routes._deps import Admin, State
from erp_agent.server.routes.inbox import service_of
from erp_agent.subscriptions.models import Status

router = APIRouter(prefix="/api/admin/subscriptions", tags=["admin"])


class Enable(BaseModel):
    user: str = Field(min_length=1, max_length=200)


@router.get("", summary="Every subscription, and the users who have a standing credential")
async def all_subscriptions(_: Admin, state: State, user: str | None = None) -> dict[str, Any]:
    service = service_of(state)
    found = await service.store.listing(user=user)
    return {
        "subscriptions": [{**service.view(s), "user": s.user, "org": s.org} for s in found],
        "enabled_users": await service.store.credential_users(),
        "email": service.mailer.configured,
    }


@router.post(
    "/users", summary="Enable subscriptions for a user (the ERP issues their API key pair)"
)
async def enable(body: Enable, admin: Admin, state: State) -> dict[str, Any]:
    service = service_of(state)
    try:
        source = await service.enable_user(admin.session.credential, admin.session.user, body.user)
    except ErpRefusal as exc:
        raise HTTPException(422, f"The ERP refused: {exc.refusal.message}") from exc
    except ConfigError as exc:
        raise HTTPException(409, str(exc)) from exc
    except ErpAgentError as exc:
        raise HTTPException(502, str(exc)) from exc
    return {"user": body.user, "source": source}


@router.delete("/users/{user}", summary="Forget a user's standing credential (their runs stop)")
async def disable(user: str, _: Admin, state: State) -> dict[str, Any]:
    if not await service_of(state).store.forget_credential(user):
        raise HTTPException(404, f"{user} has no standing credential.")
    return {"user": user, "enabled": False}


async def _sub(state: State, sub_id: str) -> Any:
    found = await service_of(state).store.get(sub_id)
    if found is None:
        raise HTTPException(404, "No such subscription.")
    return found


@router.post("/{sub_id}/pause", summary="Pause a subscription")
async def pause(sub_id: str, _: Admin, state: State) -> dict[str, Any]:
    sub = await _sub(state, sub_id)
    return await service_of(state).set_status(sub.user, sub.id, Status.PAUSED)


@router.post("/{sub_id}/resume", summary="Resume a subscription")
async def resume(sub_id: str, _: Admin, state: State) -> dict[str, Any]:
    sub = await _sub(state, sub_id)
    return await service_of(state).set_status(sub.user, sub.id, Status.ACTIVE)


@router.delete("/{sub_id}", summary="Delete a subscription")
async def delete(sub_id: str, _: Admin, state: State) -> dict[str, Any]:
    sub = await _sub(state, sub_id)
    return await service_of(state).delete(sub.user, sub.id)
