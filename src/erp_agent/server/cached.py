"""The response cache in the chat stream: a new conversation's question answered from the
cache is still a turn of its own (stored, logged with no tokens, counted in the metrics), so
the conversation can go on from it."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog
from erp_agent.catalog.fields import Field
from erp_agent.coordination.response_cache import ANY_ENTITY, ResponseCache
from erp_agent.engine.response import ToolCalled, TurnResponse
from erp_agent.events import (
    ANSWERED,
    AsyncListener,
    Event,
    EventBus,
    ProposalDecided,
    TurnFinished,
)
from erp_agent.masking import mask_secrets
from erp_agent.results.blocks import blocks_of
from erp_agent.server.blocks import for_web
from erp_agent.server.state import ServerState
from erp_agent.store.records import Conversation, Decision, Turn
from erp_agent.tools.base import ToolRegistry


async def answer(state: ServerState, session: Session, message: str) -> dict[str, Any] | None:
    """The cached response as a new turn of a new conversation (stored before it is shown),
    or None on a miss."""
    assert state.cache is not None
    assert state.cache_scopes is not None
    hit = await state.cache.get(await state.cache_scopes.of(session), message)
    if hit is None:
        state.metrics.cache.labels("any", "miss").inc()
        return None
    state.metrics.cache.labels(hit.kind, "hit").inc()
    conversation = Conversation(
        id=f"conv_{secrets.token_urlsafe(10)}",
        user=session.user,
        org=session.org,
        title=mask_secrets(message)[:80],
    )
    turn = Turn(
        id=f"turn_{secrets.token_urlsafe(10)}",
        conversation_id=conversation.id,
        seq=1,
        user_message=mask_secrets(message),
        status="done",
    )
    response: dict[str, Any] = json.loads(json.dumps(hit.response))
    response.update(
        turn_id=turn.id,
        conversation_id=conversation.id,
        usage={"prompt": 0, "cached": 0, "completion": 0},
        cached={"kind": hit.kind, "question": hit.question},
    )
    turn.state = {"response": response, "cached": hit.kind}
    await state.store.create_conversation(conversation, turn)
    bus = EventBus()
    bus.attach(state.runtime.listeners, state.runtime.async_listeners)
    bus.bind(conversation_id=conversation.id, user=session.user, org=session.org)
    # The interaction log, usage and metrics record the turn's end beside the answer's
    # sending (the turn itself is stored already): a cache hit waits for no log write, and a
    # client gone at once still has its turn recorded.
    state.keep(
        bus.publish(
            TurnFinished(
                turn.id,
                outcome=ANSWERED,
                shown="answered",
                message=turn.user_message[:500],
                model=f"cache ({hit.kind})",
            )
        )
    )
    return {**response, "blocks": for_web(blocks_of(response.get("blocks", [])))}


async def remember(
    state: ServerState, session: Session, message: str, response: TurnResponse
) -> None:
    """Keep a new conversation's answer, tagged with the entities its tools read: for everyone
    whose complete ERP scope equals this user's when it may be shared, else for them alone."""
    assert state.cache is not None
    assert state.cache_scopes is not None
    entities = read_entities(state.runtime.registry, state.runtime.catalog, response.tools_called)
    scopes = state.cache_scopes
    shared = await scopes.shareable(session, message, entities)
    await state.cache.put(
        await scopes.of(session),
        message,
        response.as_dict(),
        entities,
        org=session.org,
        shared=shared,
    )


def read_entities(
    registry: ToolRegistry, catalog: Catalog, calls: Sequence[ToolCalled]
) -> list[str]:
    """The entities a turn's tools read: a tool's own entity, a metric's entity; ``*`` for a
    tool that reads what no one entity names (a report, a search)."""
    out: set[str] = set()
    for call in calls:
        tool = registry.get(str(call.get("name")))
        if tool is None:
            continue
        metric = (call.get("arguments") or {}).get("metric")
        if tool.entity:
            out.add(tool.entity)
        elif isinstance(metric, str) and metric in catalog.metrics:
            out.add(catalog.metric(metric).entity)
        else:
            out.add(ANY_ENTITY)
    return sorted(out)


def affected_entities(catalog: Catalog, entity: str) -> list[str]:
    """A write to ``entity`` can change answers about it, the records it links to (a payment
    settles an invoice) and the records that link to it."""
    out = {entity}
    for name, other in catalog.entities.items():
        for target in _targets(other.fields):
            if name == entity:
                out.add(target)
            elif target == entity:
                out.add(name)
    return sorted(out)


def _targets(fields: Mapping[str, Field]) -> set[str]:
    out: set[str] = set()
    for f in fields.values():
        if f.target:
            out.add(f.target)
        out |= _targets(f.fields)
    return out


def invalidate_on_writes(
    cache: ResponseCache, registry: ToolRegistry, catalog: Catalog
) -> AsyncListener:
    """An event subscriber: a write decided through the gateway (confirmed, or failed in a way
    that may have written) drops the organisation's cached answers that read what it changed."""
    undecided = {Decision.REJECTED, Decision.REFUSED}

    async def on_event(event: Event) -> None:
        if not isinstance(event, ProposalDecided) or event.decision in undecided:
            return
        tool = registry.get(event.tool)
        if tool is None or tool.entity is None:
            await cache.invalidate(event.org, [ANY_ENTITY])
            return
        await cache.invalidate(event.org, affected_entities(catalog, tool.entity))

    return on_event
