"""What outlives a turn's request: the turn's state after every step, the conversation state
the next turn's follow-ups read, the conversation itself, and the turn's end as the event
stream records it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import secrets
import time

from erp_agent.calls.session import Session
from erp_agent.engine import conversation as conv
from erp_agent.engine import guards, history
from erp_agent.engine._run import Run
from erp_agent.engine.routing import SPINE
from erp_agent.events import TurnFinished, true_outcome
from erp_agent.masking import mask_all, mask_secrets
from erp_agent.store.base import Store
from erp_agent.store.records import Conversation


async def save_turn(store: Store, run: Run) -> None:
    """The turn as it is now, so any process can continue it."""
    start = run.turn.state.get("history_len", 0)
    run.turn.state["messages"] = history.to_state(run.messages[start:])
    run.turn.state["offered"] = run.offered
    run.turn.updated_at = dt.datetime.now(dt.UTC)
    # What outlives the request never holds a password or key the user pasted.
    await store.save_turn(
        dataclasses.replace(
            run.turn,
            user_message=mask_secrets(run.turn.user_message),
            state=mask_all(run.turn.state),
        )
    )


async def save_conversation_state(store: Store, run: Run) -> None:
    """What the next turn's follow-up may refer to (see ``engine.conversation``)."""
    called = [c["name"] for c in run.tools_called]
    asked = any(b["type"] == "choices" for b in run.blocks)
    documents = [(entity, doc_id) for entity, doc_id in run.turn.state.get("document_ids", [])]
    documents += [
        (q["tool"].split(".")[0], str(q["args"]["id"]))
        for q in run.queries
        if q["tool"].endswith(".get") and q["args"].get("id")
    ]
    state = conv.advance(
        run.conversation,
        run.turn.user_message,
        queries=run.queries,
        shown=run.shown,
        blocks=run.blocks,
        documents=documents,
        # A question left open resumes the request it interrupted: keep what it was offered.
        tools=[n for n in (run.offered if asked else called) if n not in SPINE],
    )
    await store.save_conversation_state(run.turn.conversation_id, state)


async def open_conversation(
    store: Store, session: Session, conversation_id: str | None, message: str
) -> Conversation:
    """The user's own conversation by id, or a new one (never another user's)."""
    if conversation_id:
        found = await store.get_conversation(conversation_id)
        if found is not None and found.user == session.user:
            return found
    conversation = Conversation(
        id=f"conv_{secrets.token_urlsafe(10)}",
        user=session.user,
        org=session.org,
        title=mask_secrets(message)[:80],
    )
    await store.create_conversation(conversation)
    return conversation


def finished_event(run: Run, outcome: str) -> TurnFinished:
    """The turn's end for the event stream: the true outcome and the turn's usage."""
    statuses = [s["status"] for s in run.log_steps if s["step"] == "tool"]
    stopped = run.guard.consecutive_failures >= guards.MAX_CONSECUTIVE_FAILURES
    return TurnFinished(
        run.turn.id,
        outcome=true_outcome(outcome, statuses, guard_stopped=stopped),
        shown=outcome,
        message=mask_secrets(run.turn.user_message)[:500],
        model=run.model_name,
        prompt_tokens=run.usage.prompt_tokens,
        cached_tokens=run.usage.cached_tokens,
        completion_tokens=run.usage.completion_tokens,
        cache_write_tokens=run.usage.cache_write_tokens,
        tools=tuple(str(c["name"]) for c in run.tools_called),
        latency_ms=round((time.perf_counter() - run.started) * 1000, 2),
    )
