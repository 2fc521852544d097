"""Turns that run apart from the request that asked: ``POST /api/chat`` with ``background``
stores the turn as ``queued`` and answers with its id at once; a queue worker (or, without a
queue, this process) runs it, and its SSE messages go to ``ServerState.turn_events``, which any
worker's ``GET /api/turns/{id}/events`` reads.

``execute`` is the one way a stored turn is run, by whichever process: it counts the tries
(a turn that kills its worker every time is stopped after ``queue_max_attempts``), resumes a
turn a dead worker left running from its last saved step, and does nothing for one already
finished (a message the broker delivered twice).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.channels.faults import user_message
from erp_agent.coordination.turn_events import END
from erp_agent.engine import interrupted
from erp_agent.engine.response import ResponseJSON, TurnResponse
from erp_agent.errors import StoreError
from erp_agent.events import FAILED, Event, EventBus, TextDelta, TurnFinished
from erp_agent.masking import mask_secrets
from erp_agent.server.blocks import for_web
from erp_agent.server.recovery import session_of
from erp_agent.server.state import ServerState
from erp_agent.store.records import Conversation, Turn

log = logging.getLogger(__name__)
QUEUED = "queued"


class ProgressFeed:
    """Engine events → the turn's SSE messages, published in order by one task."""

    def __init__(self, state: ServerState, turn_id: str) -> None:
        self.state = state
        self.turn_id = turn_id
        self.queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()
        self.task = asyncio.create_task(self._pump())

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.queue.put_nowait(("delta", {"text": event.text}))
        elif event.progress:
            self.queue.put_nowait(("progress", event.as_dict()))

    def send(self, event: str, data: Any) -> None:
        self.queue.put_nowait((event, data))

    async def _pump(self) -> None:
        while True:
            # What arrived while the last batch was being sent goes in one batch.
            batch = [await self.queue.get()]
            while not self.queue.empty():
                batch.append(self.queue.get_nowait())
            items = [item for item in batch if item is not None]
            await self.state.turn_events.publish_many(self.turn_id, items)
            if len(items) < len(batch):  # the end (close puts None last)
                return

    async def close(self) -> None:
        self.queue.put_nowait((END, None))
        self.queue.put_nowait(None)
        await self.task


def web_payload(response: TurnResponse) -> ResponseJSON:
    payload = response.as_dict()
    payload["blocks"] = for_web(response.blocks)
    return payload


async def submit(
    state: ServerState, session: Session, message: str, conversation_id: str | None
) -> Turn:
    """Store the turn as queued, then hand it to the queue (or to a task of this process)."""
    store = state.store
    conversation = await store.get_conversation(conversation_id) if conversation_id else None
    if conversation is None or conversation.user != session.user:
        conversation = Conversation(
            id=f"conv_{secrets.token_urlsafe(10)}",
            user=session.user,
            org=session.org,
            title=mask_secrets(message)[:80],
        )
        await store.create_conversation(conversation)
    past = await store.turns(conversation.id)
    turn = Turn(
        id=f"turn_{secrets.token_urlsafe(10)}",
        conversation_id=conversation.id,
        seq=len(past) + 1,
        user_message=mask_secrets(message),
        status=QUEUED,
        state={"background": interrupted.QUEUE} if state.queue is not None else {},
    )
    await store.save_turn(turn)
    if state.queue is not None:
        await state.queue.enqueue(turn.id, session.id, message, conversation.id)
    else:
        state.keep(execute(state, turn.id, session.id, message, conversation.id))
    return turn


async def execute(
    state: ServerState, turn_id: str, session_id: str, message: str, conversation_id: str
) -> TurnResponse | None:
    """Run (or resume) the stored turn ``turn_id`` to its end; None if it had ended already."""
    store = state.store
    turn = await store.get_turn(turn_id)
    if turn is None:
        raise StoreError(f"There is no turn {turn_id} to run.")
    if turn.status not in (QUEUED, "running"):
        return None  # delivered again after it finished
    feed = ProgressFeed(state, turn_id)
    try:
        response = await _run(state, feed, turn, session_id, message, conversation_id)
        feed.send("response", web_payload(response))
        return response
    except Exception as exc:
        log.exception("background turn %s failed", turn_id)
        feed.send("error", {"message": user_message(exc)})
        raise
    finally:
        await feed.close()


async def _run(
    state: ServerState,
    feed: ProgressFeed,
    turn: Turn,
    session_id: str,
    message: str,
    conversation_id: str,
) -> TurnResponse:
    store, settings = state.store, state.runtime.settings
    attempts = int(turn.state.get("attempts", 0)) + 1
    if attempts > settings.queue_max_attempts:
        why = f"it stopped the server {attempts - 1} times in a row, so it was not tried again"
        return await _close(state, turn, why)
    turn.state["attempts"] = attempts
    await store.save_turn(turn)
    session = await session_of(state, session_id)
    if session is None:
        return await _close(state, turn, "the sign-in it ran as has ended")
    engine = state.runtime.engine(state.models(session))
    bus = EventBus()
    bus.subscribe(feed)
    if turn.status == QUEUED:
        return await engine.run_turn(
            session, message, conversation_id=conversation_id, bus=bus, turn_id=turn.id
        )
    return await engine.continue_turn(session, turn.id, bus=bus)


async def _close(state: ServerState, turn: Turn, why: str) -> TurnResponse:
    response = await interrupted.close(state.store, turn, why)
    conversation = await state.store.get_conversation(turn.conversation_id)
    bus = EventBus()
    bus.attach(state.runtime.listeners, state.runtime.async_listeners)
    if conversation is not None:
        bus.bind(conversation_id=conversation.id, user=conversation.user, org=conversation.org)
    await bus.publish(
        TurnFinished(turn.id, outcome=FAILED, shown="interrupted", message=turn.user_message)
    )
    return response
