"""The response cache in the chat stream: a new conversation's question answered from the
cache is still a turn of its own (stored, logged with no tokens, counted in the metrics), so
the conversation can go on from it."""

from __future__ import annotations

import json
import secrets
from typing import Any

from erp_agent.engine.events import ANSWERED, EventBus, TurnFinished
from erp_agent.engine.response import TurnResponse
from erp_agent.gateway.session import Session
from erp_agent.masking import mask_secrets
from erp_agent.server.blocks import for_web
from erp_agent.server.state import ServerState
from erp_agent.store.models import Conversation, Turn


async def answer(state: ServerState, session: Session, message: str) -> dict[str, Any] | None:
    """The cached response as a new turn of a new conversation (stored before it is shown),
    or None on a miss."""
    assert state.cache is not None
    hit = await state.cache.get(session, message)
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
    return {**response, "blocks": for_web(list(response.get("blocks", [])))}


async def remember(
    state: ServerState, session: Session, message: str, response: TurnResponse
) -> None:
    """Keep a new conversation's answer, tagged with the entities its tools read."""
    assert state.cache is not None
    registry = state.runtime.registry
    entities = [
        tool.entity
        for call in response.tools_called
        if (tool := registry.get(str(call.get("name")))) is not None and tool.entity
    ]
    await state.cache.put(session, message, response.as_dict(), entities)
