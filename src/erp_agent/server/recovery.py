"""Crash recovery while the server runs: proposals a crash or a timeout left ``executing`` are
decided as their user (see ``erp_agent.gateway.reconcile``), at start and then periodically."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

from erp_agent.errors import ErpAgentError
from erp_agent.gateway.session import Session
from erp_agent.server.security import session_from_row
from erp_agent.server.state import ServerState
from erp_agent.store.models import Proposal

log = logging.getLogger(__name__)
MIN_INTERVAL, MAX_INTERVAL = 1.0, 30.0


async def session_of(state: ServerState, session_id: str) -> Session | None:
    """The signed-in session with this id, if it is still valid (its ERP credential opened)."""
    row = await state.db.session_by_id(session_id)
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
        except ErpAgentError as exc:  # the store or the ERP is down: try again next time
            log.warning("reconciling interrupted confirms failed: %s", exc)
        await asyncio.sleep(interval_for(state))
