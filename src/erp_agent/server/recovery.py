"""Crash recovery while the server runs, at start and then periodically: proposals a crash or
a timeout left ``executing`` are decided as their user (``erp_agent.gateway.reconcile``), and
turns a crash left ``running`` are continued or closed (``erp_agent.engine.interrupted``)."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

from erp_agent.calls.session import Session
from erp_agent.config import engine_settings
from erp_agent.engine import interrupted
from erp_agent.errors import ErpAgentError
from erp_agent.server.security import session_from_row
from erp_agent.server.state import ServerState
from erp_agent.store.records import Proposal

log = logging.getLogger(__name__)
MIN_INTERVAL, MAX_INTERVAL = 1.0, 30.0


async def session_of(
    state: ServerState, session_id: str | None = None, *, user: str | None = None
) -> Session | None:
    """The signed-in session with this id (or the user's newest), if it is still valid."""
    if session_id is not None:
        row = await state.store.newest_web_session(session_id=session_id)
    else:
        row = await state.store.newest_web_session(user=str(user))
    if row is None or row.expires_at <= dt.datetime.now(dt.UTC):
        return None
    credential = state.vault.open(row.credential)
    if credential is None:
        return None
    return session_from_row(row, credential, read_only=state.read_only)


async def settle_proposals(state: ServerState, session: Session | None = None) -> int:
    """Decide overdue ``executing`` proposals; with ``session``, that user's (e.g. at sign-in,
    when the session they confirmed in has ended). Returns how many were decided."""

    async def lookup(proposal: Proposal) -> Session | None:
        if session is not None:
            return session if proposal.user == session.user else None
        return await session_of(state, proposal.session_id)

    return len(await state.runtime.gateway.sweep(lookup))


async def finish_turns(state: ServerState) -> int:
    """Continue (as their user) or close the turns a crash left running. Returns how many."""
    runtime = state.runtime
    engine_age = interrupted.orphan_age(engine_settings(runtime.settings).turn_deadline)
    now = dt.datetime.now(dt.UTC)
    finished = 0
    for turn in await runtime.store.running_turns(updated_before=now - engine_age):
        if turn.id in interrupted.ACTIVE or turn.state.get("background") == interrupted.QUEUE:
            continue  # running here, or the queue's to hand to another worker
        conversation = await runtime.store.get_conversation(turn.conversation_id)
        session = await session_of(state, user=conversation.user) if conversation else None
        if session is None:
            await interrupted.close(runtime.store, turn, "and could not be resumed")
        elif await interrupted.resume(runtime.engine(state.models(session)), session, turn) is None:
            continue
        finished += 1
    return finished


def interval_for(state: ServerState) -> float:
    timeout = state.runtime.gateway.confirm_timeout.total_seconds()
    return max(MIN_INTERVAL, min(MAX_INTERVAL, timeout / 3))


async def keep_recovering(state: ServerState) -> None:
    """Run until cancelled: one pass now (a restart after a crash), then every interval."""
    while True:
        try:
            decided = await settle_proposals(state)
            if decided:
                log.info("reconciled %d interrupted confirm(s)", decided)
            finished = await finish_turns(state)
            if finished:
                log.info("finished %d interrupted turn(s)", finished)
        except ErpAgentError as exc:  # the store or the ERP is down: try again next time
            log.warning("recovering interrupted work failed: %s", exc)
        await asyncio.sleep(interval_for(state))
