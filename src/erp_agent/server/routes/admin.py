"""The admin console API (System Manager only): model provider, role policy, read-only switch,
token budgets and usage, the organisations of hosted mode, the interaction log, the search
index's progress, knowledge documents."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Annotated, Any, Literal

import yaml
from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field

from erp_agent.errors import ChannelError, ConfigError
from erp_agent.gateway.policy import load_policy, parse_policy
from erp_agent.server import settings_store
from erp_agent.server.model_switch import ModelChoice, ModelSwitch
from erp_agent.server.routes._deps import Admin, Signed, State
from erp_agent.store.records import Decision, Interaction

# The log's outcomes (store.models.RESULTS): each turn has exactly one.
Outcome = Literal["answered", "proposal", "refused", "failed", "interrupted"]
OutcomeFilter = Annotated[
    Outcome | None,
    Query(description="answered, proposal (an answer that proposed a write), refused, failed "
          "or interrupted"),
]  # fmt: skip

router = APIRouter(prefix="/api/admin", tags=["admin"])


# ------------------------------------------------------------------ model provider


@router.get("/model", summary="The model provider (the key is never returned)")
async def get_model(_: Admin, state: State) -> dict[str, Any]:
    if not isinstance(state.models, ModelSwitch):
        return {"provider": "fixed", "switchable": False}
    return _described(state.models, state)


def _described(switch: ModelSwitch, state: State) -> dict[str, Any]:
    """The model now, where its value comes from (environment or set here), and problems."""
    return {
        **switch.describe(),
        "switchable": True,
        "source": switch.source,
        "problems": list(state.problems),
    }


@router.delete("/model", summary="Forget the model set here: back to the environment's")
async def reset_model(_: Admin, state: State) -> dict[str, Any]:
    if not isinstance(state.models, ModelSwitch):
        raise HTTPException(409, "This server was started with a fixed model.")
    await settings_store.save(state, "model", settings_store.ENVIRONMENT)
    await state.models.use_configured()
    return _described(state.models, state)


@router.put("/model", summary="Switch the model provider from the next turn on")
async def put_model(choice: ModelChoice, _: Admin, state: State) -> dict[str, Any]:
    if not isinstance(state.models, ModelSwitch):
        raise HTTPException(
            409, "This server was started with a fixed model; it cannot be switched."
        )
    try:
        # Tried with a one-token call first: a dead URL or a wrong key is refused here, not
        # discovered by every user's next turn.
        await state.models.switch(choice)
    except ConfigError as exc:
        raise HTTPException(422, str(exc)) from exc
    await settings_store.save_model(state, choice)
    return _described(state.models, state)


# ------------------------------------------------------------------ role policy


class PolicyText(BaseModel):
    yaml: str = Field(max_length=200_000)


def _source(state: State, key: str) -> str:
    """Where a value the admin console shows comes from."""
    stored = state.applied.get(key)
    return (
        "admin console"
        if stored is not None and stored != settings_store.ENVIRONMENT
        else ("packaged file" if key == "policy" else "environment")
    )


@router.get("/policy", summary="Role → tool policy (applies to new sessions)")
async def get_policy(_: Admin, state: State) -> dict[str, Any]:
    policy = state.runtime.policy.to_dict()
    return {
        "policy": policy,
        "yaml": yaml.safe_dump(policy, sort_keys=False),
        "source": _source(state, "policy"),
    }


@router.delete("/policy", summary="Forget the policy set here: back to the packaged one")
async def reset_policy(_: Admin, state: State) -> dict[str, Any]:
    await settings_store.save(state, "policy", settings_store.ENVIRONMENT)
    state.runtime.policy = load_policy()
    return await get_policy(_, state)


@router.put("/policy", summary="Replace the role policy; validated, applied to new sessions")
async def put_policy(body: PolicyText, _: Admin, state: State) -> dict[str, Any]:
    try:
        raw = yaml.safe_load(body.yaml)
        policy = parse_policy(raw, "policy")
    except yaml.YAMLError as exc:
        raise HTTPException(422, f"policy: not valid YAML: {exc}") from exc
    except ConfigError as exc:
        raise HTTPException(422, str(exc)) from exc
    state.runtime.policy = policy
    await settings_store.save(state, "policy", policy.to_dict())
    return await get_policy(_, state)


# ------------------------------------------------------------------ tenant


class Tenant(BaseModel):
    read_only: bool


@router.get("/tenant", summary="Is this tenant read-only, and who set it?")
async def get_tenant(_: Admin, state: State) -> dict[str, Any]:
    # ERP_AGENT_READ_ONLY=true cannot be switched off here; say so.
    source = "environment" if state.configured_read_only else _source(state, "read_only")
    return {"read_only": state.read_only, "source": source}


@router.put("/tenant", summary="Switch read-only on or off (every session, at once)")
async def put_tenant(body: Tenant, _: Admin, state: State) -> dict[str, Any]:
    state.read_only = state.configured_read_only or body.read_only
    await settings_store.save(state, "read_only", body.read_only)
    return await get_tenant(_, state)


# ------------------------------------------------------------------ budgets and usage


class Budget(BaseModel):
    org: str = Field(min_length=1, max_length=200)
    tokens: int | None = Field(
        None, gt=0, le=10**15, description="Tokens per month; null removes it."
    )


async def _budgets(state: State) -> dict[str, Any]:
    budgets = state.runtime.budgets
    orgs = sorted({*budgets.limits, "default"})
    return {
        "default": budgets.default,
        "orgs": [
            {
                "org": org,
                "tokens": budgets.limits.get(org),
                "used_this_month": await budgets.used(org),
            }
            for org in orgs
        ],
    }


@router.get("/budgets", summary="Token budget per organisation and this month's use")
async def get_budgets(_: Admin, state: State) -> dict[str, Any]:
    return await _budgets(state)


@router.put("/budgets", summary="Set or remove an organisation's monthly token budget")
async def put_budget(body: Budget, _: Admin, state: State) -> dict[str, Any]:
    limits = dict(state.runtime.budgets.limits)
    if body.tokens is None:
        limits.pop(body.org, None)
    else:
        limits[body.org] = body.tokens
    state.runtime.budgets.limits = limits
    await settings_store.save(state, "budgets", limits)
    return await _budgets(state)


# ------------------------------------------------------------------ organisations (hosted mode)


class NewOrganisation(BaseModel):
    org: str = Field(min_length=1, max_length=100, description="The organisation's name.")
    label: str = Field(default="", max_length=200)


@router.get("/organisations", summary="The organisations relay keys may be issued for")
async def list_organisations(_: Admin, state: State) -> dict[str, Any]:
    found = await state.keys.organisations()
    return {"organisations": [{"org": name, **entry} for name, entry in sorted(found.items())]}


@router.post("/organisations", summary="Register an organisation (then issue its relay key)")
async def register_organisation(
    body: NewOrganisation, admin: Admin, state: State
) -> dict[str, Any]:
    try:
        return await state.keys.register_org(body.org, body.label, admin.session.user)
    except ChannelError as exc:
        raise HTTPException(409 if "already" in str(exc) else 422, str(exc)) from exc


@router.get("/usage", summary="Tokens and turns per organisation per day (interaction log)")
async def usage(_: Admin, state: State, days: int = Query(30, ge=1, le=366)) -> dict[str, Any]:
    since = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    return {"source": "interactions", "days": days, "rows": await state.store.usage_by_day(since)}


# ------------------------------------------------------------------ interaction log


HIDDEN = "(question hidden: shown only to {roles})"


def _may_read_questions(admin: Signed, state: State) -> tuple[bool, str]:
    roles = state.runtime.settings.retention.question_text_roles
    return bool(set(roles) & set(admin.session.roles)), HIDDEN.format(
        roles=", ".join(roles) or "nobody"
    )


def _row(row: Interaction, allowed: bool, hidden: str) -> dict[str, Any]:
    """A log row as the console shows it: ``outcome`` is the log's outcome (what the filter
    matches: a proposal, else the true outcome); the question and the comment only to the
    roles that may read questions."""
    out = {**row.__dict__, "outcome": row.result, "true_outcome": row.outcome}
    out["at"] = row.at.isoformat()
    out["rated_at"] = row.rated_at.isoformat() if row.rated_at else None
    if not allowed:
        out["message"] = hidden
        out["comment"] = hidden if row.comment else row.comment
    return out


@router.get("/log", summary="Turns, newest first, with filters")
async def turn_log(
    admin: Admin,
    state: State,
    user: str | None = None,
    org: str | None = None,
    tool: str | None = None,
    outcome: OutcomeFilter = None,
    since: dt.datetime | None = None,
    limit: int = Query(100, ge=1, le=1000),
) -> list[dict[str, Any]]:
    rows = await state.store.interactions(
        user=user, org=org, outcome=outcome, since=since, limit=limit * 5 if tool else limit
    )
    if tool:  # tools is a JSON list: filtered here, so the query stays dialect-neutral
        rows = [r for r in rows if tool in r.tools][:limit]
    allowed, hidden = _may_read_questions(admin, state)
    return [_row(r, allowed, hidden) for r in rows]


def _day(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


@router.get("/feedback", summary="Answers users rated, newest first, with filters")
async def feedback_log(
    admin: Admin,
    state: State,
    user: str | None = None,
    rating: Literal["up", "down"] | None = None,
    outcome: OutcomeFilter = None,
    since: Annotated[dt.date | None, Query(description="From this day (UTC), inclusive.")] = None,
    until: Annotated[dt.date | None, Query(description="To this day (UTC), inclusive.")] = None,
    limit: int = Query(200, ge=1, le=1000),
) -> dict[str, Any]:
    rows = await state.store.interactions(
        user=user,
        outcome=outcome,
        rated=True,
        rating=rating,
        since=_day(since) if since else None,
        until=_day(until + dt.timedelta(days=1)) if until else None,
        limit=limit,
    )
    allowed, hidden = _may_read_questions(admin, state)
    return {
        "summary": {
            "up": sum(r.rating == "up" for r in rows),
            "down": sum(r.rating == "down" for r in rows),
        },
        "rows": [_row(r, allowed, hidden) for r in rows],
    }


@router.get("/log/{turn_id}", summary="One turn: its log, response, feedback and gateway events")
async def turn_detail(turn_id: str, admin: Admin, state: State) -> dict[str, Any]:
    store = state.runtime.store
    turn = await store.get_turn(turn_id)
    if turn is None:
        raise HTTPException(404, f"No turn {turn_id}.")
    conversation = await store.get_conversation(turn.conversation_id)
    user = conversation.user if conversation else None
    logged = await store.interactions(user=user, since=turn.created_at, limit=1000)
    row = next((r for r in logged if r.turn_id == turn.id), None)
    events = await store.events(turn_id=turn.id, limit=1000)
    allowed, hidden = _may_read_questions(admin, state)
    feedback = turn.state.get("feedback")
    if not allowed:  # the answer, its log and a comment quote the question: none is shown
        rated = {"rating": feedback["rating"], "at": feedback.get("at")} if feedback else None
        return {"id": turn.id, "conversation_id": turn.conversation_id, "user": user,
                "message": hidden, "status": turn.status,
                "outcome": row.result if row else None, "feedback": rated,
                "events": [_event(e) for e in reversed(events)]}  # fmt: skip
    return {
        "id": turn.id,
        "conversation_id": turn.conversation_id,
        "user": user,
        "message": turn.user_message,
        "status": turn.status,
        "outcome": row.result if row else None,
        "log": turn.state.get("log"),
        "response": turn.state.get("response"),
        "feedback": feedback,
        "events": [_event(e) for e in reversed(events)],
    }


@router.get("/audit", summary="Gateway decisions (audit events) with filters")
async def audit(
    _: Admin,
    state: State,
    user: str | None = None,
    tool: str | None = None,
    decision: Decision | None = None,
    since: dt.datetime | None = None,
    limit: int = Query(100, ge=1, le=1000),
) -> list[dict[str, Any]]:
    events = await state.runtime.store.events(
        user=user, tool=tool, decision=decision, since=since, limit=limit
    )
    return [_event(e) for e in events]


def _event(event: Any) -> dict[str, Any]:
    return {
        "at": event.at.isoformat(),
        "user": event.user,
        "tool": event.tool,
        "decision": str(event.decision),
        "reason": event.reason,
        "latency_ms": event.latency_ms,
        "proposal_id": event.proposal_id,
        "turn_id": event.turn_id,
    }


# ------------------------------------------------------------------ search index


@router.get("/index", summary="The search index: cards, cards still keyword-only, sync progress")
async def index_status(_: Admin, state: State) -> dict[str, Any]:
    retriever = getattr(state.runtime, "retriever", None)
    if retriever is None:
        return {"available": False}
    tenant = state.runtime.settings.retrieval.index_tenant
    cards, waiting = await asyncio.gather(
        asyncio.to_thread(retriever.index.count, tenant),
        asyncio.to_thread(retriever.keyword_only, tenant),
    )
    waiting = min(waiting, cards)  # two reads a moment apart: never more waiting than there are
    return {
        "available": True,
        "documents": cards,
        "embedded": cards - waiting,
        "keyword_only": waiting,
        "jobs": state.runtime.index_progress.as_dict(),
    }


# ------------------------------------------------------------------ knowledge


class KnowledgeUpload(BaseModel):
    name: str = Field(min_length=1, max_length=200, pattern=r"^[\w .-]+\.md$")
    text: str = Field(min_length=1, max_length=2_000_000)


def _no_indexer() -> HTTPException:
    return HTTPException(
        501,
        "Knowledge indexing is not available on this server: no knowledge indexer is installed. "
        "Documents can be added once the retrieval component is configured.",
    )


@router.post("/knowledge", summary="Upload a Markdown knowledge document and index it")
async def upload_knowledge(body: KnowledgeUpload, _: Admin, state: State) -> dict[str, Any]:
    if state.knowledge is None:
        raise _no_indexer()
    try:
        return await state.knowledge.upload(body.name, body.text)
    except ValueError as exc:  # malformed front matter: the document must change
        raise HTTPException(400, str(exc)) from exc


@router.post("/knowledge/reindex", summary="Re-index every knowledge document")
async def reindex_knowledge(_: Admin, state: State) -> dict[str, Any]:
    if state.knowledge is None:
        raise _no_indexer()
    return await state.knowledge.reindex()
