"""One turn as a Server-Sent Events stream: progress events while the agent works, text deltas
when the model streams, then the structured response (or an error)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from erp_agent.engine import interrupted
from erp_agent.engine.events import Event, EventBus, TextDelta
from erp_agent.engine.response import TurnResponse
from erp_agent.errors import ErpAgentError, ErpAuthenticationError, ErpSessionExpired
from erp_agent.gateway.session import Session
from erp_agent.masking import mask_secrets
from erp_agent.server.blocks import for_web
from erp_agent.server.db import TurnLogRow
from erp_agent.server.state import ServerState

log = logging.getLogger(__name__)
KEEPALIVE_SECONDS = 15.0


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


def error_text(exc: BaseException) -> str:
    if isinstance(exc, (ErpSessionExpired, ErpAuthenticationError)):
        return "Your ERP session has ended. Sign in again."
    if isinstance(exc, ErpAgentError):
        return str(exc)
    return "Something went wrong on the server; nothing was written. Please try again."


async def run_and_record(
    state: ServerState,
    session: Session,
    message: str,
    conversation_id: str | None,
    bus: EventBus,
) -> TurnResponse:
    """Run the turn and record it (metrics, turn log) even if the client has gone away."""
    started = time.perf_counter()
    engine = state.runtime.engine(state.models(session))
    if conversation_id:
        # A turn of this conversation that a crash left running is finished first.
        await interrupted.recover_conversation(engine, session, conversation_id, bus)
    response = await engine.run_turn(session, message, conversation_id=conversation_id, bus=bus)
    seconds = time.perf_counter() - started
    state.metrics.observe_turn(response, seconds)
    await state.db.log_turn(
        TurnLogRow(
            turn_id=response.turn_id,
            conversation_id=response.conversation_id,
            user=session.user,
            org=session.org,
            message=mask_secrets(message)[:500],
            model=response.model,
            outcome=response.outcome,
            prompt_tokens=response.usage.prompt_tokens,
            cached_tokens=response.usage.cached_tokens,
            completion_tokens=response.usage.completion_tokens,
            tools=[str(c.get("name", "")) for c in response.tools_called],
            latency_ms=round(seconds * 1000, 1),
        )
    )
    return response


async def stream_turn(
    state: ServerState, session: Session, message: str, conversation_id: str | None
) -> AsyncIterator[str]:
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    bus = EventBus()
    bus.subscribe(queue.put_nowait)
    task = asyncio.create_task(run_and_record(state, session, message, conversation_id, bus))
    state.running.add(task)
    task.add_done_callback(state.running.discard)
    task.add_done_callback(lambda _: queue.put_nowait(None))
    while True:
        try:
            event = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
        except TimeoutError:
            yield ": keepalive\n\n"  # proxies close idle streams
            continue
        if event is None:
            break
        if isinstance(event, TextDelta):
            yield sse("delta", {"text": event.text})
        else:
            yield sse("progress", event.as_dict())
    try:
        response = task.result()
    except Exception as exc:
        log.exception("turn failed for %s", session.user)
        yield sse("error", {"message": error_text(exc)})
        return
    payload = response.as_dict()
    payload["blocks"] = for_web(payload["blocks"])
    yield sse("response", payload)
