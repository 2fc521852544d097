"""One turn as a Server-Sent Events stream: progress events while the agent works, text deltas
when the model streams, then the structured response (or an error)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.channels.faults import user_message
from erp_agent.engine import interrupted
from erp_agent.engine.response import TurnResponse
from erp_agent.events import Event, EventBus, TextDelta
from erp_agent.server import cached
from erp_agent.server.background import ProgressFeed, web_payload
from erp_agent.server.state import ServerState

log = logging.getLogger(__name__)
KEEPALIVE_SECONDS = 15.0


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


async def run_and_record(
    state: ServerState,
    session: Session,
    message: str,
    conversation_id: str | None,
    bus: EventBus,
) -> TurnResponse:
    """Run the turn to its end even if the client has gone away: the event stream's
    subscribers (interaction log, usage, metrics) record it."""
    engine = state.runtime.engine(state.models(session))
    if conversation_id:
        # A turn of this conversation that a crash left running is finished first.
        await interrupted.recover_conversation(engine, session, conversation_id, bus)
    return await engine.run_turn(session, message, conversation_id=conversation_id, bus=bus)


async def stream_turn(
    state: ServerState, session: Session, message: str, conversation_id: str | None
) -> AsyncIterator[str]:
    if conversation_id is None and state.cache is not None:
        cached_payload = await cached.answer(state, session, message)
        if cached_payload is not None:
            yield sse("response", cached_payload)
            return
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    bus = EventBus()
    bus.subscribe(queue.put_nowait)
    # The same messages for a browser on any other worker (GET /api/turns/{id}/events).
    feeds: dict[str, ProgressFeed] = {}

    def fan_out(event: Event) -> None:
        if event.turn_id not in feeds:
            feeds[event.turn_id] = ProgressFeed(state, event.turn_id)
        feeds[event.turn_id](event)

    bus.subscribe(fan_out)
    task = state.keep(run_and_record(state, session, message, conversation_id, bus))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    # The feeds end with the turn, whether or not this browser is still reading.
    task.add_done_callback(lambda done: state.keep(_end_relays(done, feeds)))
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
        elif event.progress:
            yield sse("progress", event.as_dict())
    try:
        response = task.result()
    except Exception as exc:
        log.exception("turn failed for %s", session.user)
        yield sse("error", {"message": user_message(exc)})
        return
    if conversation_id is None and state.cache is not None:
        await cached.remember(state, session, message, response)
    yield sse("response", web_payload(response))


async def _end_relays(done: asyncio.Task[TurnResponse], feeds: dict[str, ProgressFeed]) -> None:
    failure = done.exception() if not done.cancelled() else None
    for feed in feeds.values():
        if failure is not None or done.cancelled():
            feed.send("error", {"message": user_message(failure or Exception())})
        elif feed.turn_id == done.result().turn_id:
            feed.send("response", web_payload(done.result()))
        await feed.close()
