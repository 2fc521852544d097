"""Admin console: plans per organisation (what each may use; the gateway enforces them)."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field

from erp_agent.errors import ConfigError
from erp_agent.gateway.plans import CHANNELS, Plan, PlanBook
from erp_agent.server.routes._deps import Admin, State

router = APIRouter(prefix="/api/admin", tags=["admin"])
NAME = r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$"


class PlanBody(BaseModel):
    label: str = Field("", max_length=200)
    modules: list[str] | None = Field(None, max_length=50, description="None: every module.")
    tools: list[str] | None = Field(None, max_length=500, description="Globs; None: every tool.")
    channels: list[str] | None = Field(None, max_length=10, description="None: every channel.")
    monthly_tokens: int | None = Field(None, ge=0, le=10**13)
    subscriptions: int | None = Field(None, ge=0, le=10**6)


class Assignment(BaseModel):
    plan: str | None = Field(None, max_length=64, description="None: the default plan.")


_NO_STORE = "Plans need the agent's SQL store, which this server does not use."


def _stored(state: State) -> PlanBook | None:
    """The plan book, when this server keeps plans (its SQL store)."""
    book = state.runtime.plans
    return book if book is not None and book.engine is not None else None


def _book(state: State) -> PlanBook:
    book = _stored(state)
    if book is None:
        raise HTTPException(409, _NO_STORE)
    return book


async def describe(state: State) -> dict[str, Any]:
    book = _stored(state)
    if book is None:
        # Read, not refused: the console shows why the panel is empty (a change is a 409).
        return {"available": False, "reason": _NO_STORE, "plans": [], "organisations": [],
                "default_plan": None, "modules": [], "channels": CHANNELS}  # fmt: skip
    plans = await book.plans()
    assigned = await book.assignments()
    orgs = sorted({*assigned, *(await state.keys.organisations())})
    return {
        "available": True,
        "plans": [
            {"name": p.name, **p.definition(), "summary": p.describe()}
            for p in sorted(plans.values(), key=lambda p: p.name)
        ],
        "organisations": [
            {"org": org, "plan": assigned.get(org), "default": org not in assigned} for org in orgs
        ],
        "default_plan": book.default,
        "modules": sorted(book.modules),
        "channels": CHANNELS,
    }


@router.get("/plans", summary="Plans, and which organisation is on which")
async def get_plans(_: Admin, state: State) -> dict[str, Any]:
    return await describe(state)


@router.put("/plans/{name}", summary="Create or replace a plan")
async def put_plan(name: str, body: PlanBody, _: Admin, state: State) -> dict[str, Any]:
    book = _book(state)
    try:
        if not re.fullmatch(NAME, name):
            raise ConfigError("A plan's name is 1 to 64 letters, digits, spaces, dots, dashes or underscores.")  # fmt: skip
        plan = Plan.parse(name, body.model_dump(), book.modules)
        await book.save(plan)
    except ConfigError as exc:
        raise HTTPException(422, str(exc)) from exc
    return await describe(state)


@router.delete("/plans/{name}", summary="Delete a plan no organisation is on")
async def delete_plan(name: str, _: Admin, state: State) -> dict[str, Any]:
    try:
        if not await _book(state).remove(name):
            raise HTTPException(404, f"There is no plan named {name!r}.")
    except ConfigError as exc:
        raise HTTPException(409, str(exc)) from exc
    return await describe(state)


@router.put("/organisations/{org}/plan", summary="Put an organisation on a plan")
async def assign(org: str, body: Assignment, _: Admin, state: State) -> dict[str, Any]:
    if org not in await state.keys.organisations():
        raise HTTPException(404, f"There is no organisation {org!r} registered on this server.")
    try:
        await _book(state).assign(org, body.plan)
    except ConfigError as exc:
        raise HTTPException(422, str(exc)) from exc
    return await describe(state)
