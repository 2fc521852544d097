"""The admin console's API keys: user keys for MCP and the OpenAI-compatible API, organisation
keys for the ERP plugin's relay. A key is shown once; the store keeps its hash."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from erp_agent.errors import ChannelError, ErpAuthenticationError, ErpRefusal
from erp_agent.server.routes._deps import Admin, State
from erp_agent.store.records import ApiKey

router = APIRouter(prefix="/api/admin/api-keys", tags=["admin"])


class NewUserKey(BaseModel):
    user: str = Field(min_length=1, max_length=200, description="The ERP user the key acts as.")
    label: str = Field(default="", max_length=200)


class NewOrgKey(BaseModel):
    org: str = Field(default="default", min_length=1, max_length=200)
    label: str = Field(default="", max_length=200)


def _view(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id, "kind": key.kind, "user": key.user, "org": key.org, "label": key.label,
        "created_by": key.created_by, "created_at": key.created_at, "revoked_at": key.revoked_at,
    }  # fmt: skip


@router.get("", summary="API keys (the keys themselves are never shown again)")
async def list_keys(admin: Admin, state: State) -> dict[str, Any]:
    return {"keys": [_view(k) for k in await state.runtime.store.list_api_keys()]}


@router.post("", summary="Issue a user key for MCP and the OpenAI-compatible API (shown once)")
async def issue_user_key(body: NewUserKey, admin: Admin, state: State) -> dict[str, Any]:
    try:
        issued = await state.keys.issue_user_key(
            admin.session, body.user, body.label, admin.session.org
        )
    except ChannelError as exc:
        raise HTTPException(409, str(exc)) from exc
    except (ErpRefusal, ErpAuthenticationError) as exc:  # the ERP's words: no such user, …
        raise HTTPException(422, f"The ERP did not issue keys for {body.user}: {exc}") from exc
    return {**_view(issued.record), "key": issued.key}


@router.post("/org", summary="Issue an organisation key for the ERP plugin's relay (shown once)")
async def issue_org_key(body: NewOrgKey, admin: Admin, state: State) -> dict[str, Any]:
    try:  # only for an organisation registered here (POST /api/admin/organisations)
        issued = await state.keys.issue_org_key(body.org, body.label, admin.session.user)
    except ChannelError as exc:
        raise HTTPException(404, str(exc)) from exc
    return {**_view(issued.record), "key": issued.key}


@router.delete("/{key_id}", summary="Revoke a key at once")
async def revoke_key(key_id: str, admin: Admin, state: State) -> dict[str, Any]:
    if not await state.keys.revoke(key_id):
        raise HTTPException(404, f"There is no active key {key_id}.")
    return {"revoked": key_id}
