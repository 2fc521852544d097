"""Retention and deletion: the scheduled purge, a user's data exported (GDPR access) or deleted
by an administrator. Proposals and audit events stay: they record what changed in the ERP."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from pathlib import Path
from typing import Any

from erp_agent.errors import ErpAgentError
from erp_agent.results.store import ExportRecord
from erp_agent.server.state import ServerState
from erp_agent.tools.modules.results import user_folder

log = logging.getLogger(__name__)


def _cutoff(now: dt.datetime, days: int) -> dt.datetime | None:
    return now - dt.timedelta(days=days) if days > 0 else None


def _remove_files(exports: list[ExportRecord]) -> int:
    for export in exports:
        Path(export.path).unlink(missing_ok=True)
    return len(exports)


def _purge_unindexed(folder: Path, before: dt.datetime | None) -> int:
    """Export files older than ``before``: those the index missed (written before exports were
    indexed, or by a worker that stopped between writing the file and indexing it)."""
    if before is None or not folder.is_dir():
        return 0
    gone = 0
    for path in folder.rglob("*"):
        if path.is_file() and dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC) < before:
            path.unlink(missing_ok=True)
            gone += 1
    return gone


async def purge(state: ServerState, now: dt.datetime | None = None) -> dict[str, int]:
    """Everything older than the retention settings; counts of what went."""
    now = now or dt.datetime.now(dt.UTC)
    settings = state.runtime.settings
    keep = settings.retention
    counts = await state.store.purge_older_than(
        conversations_before=_cutoff(now, keep.conversations_days),
        interactions_before=_cutoff(now, keep.interaction_log_days),
    )
    before = _cutoff(now, keep.results_days)
    counts["results"] = await state.runtime.results.forget(before=before) if before else 0
    # Expired exports, from the store's index (whichever worker wrote them), then any file
    # older than the retention that the index does not know.
    expired = await state.runtime.results.drop_exports(expired_at=now)
    counts["exports"] = await asyncio.to_thread(_remove_files, expired)
    folder = Path(settings.data_dir) / "exports"
    counts["exports"] += await asyncio.to_thread(
        _purge_unindexed, folder, _cutoff(now, keep.exports_days)
    )
    return counts


async def keep_purging(state: ServerState) -> None:
    """At start, then every ``purge_interval_hours``; a failing purge is logged and retried."""
    while True:
        try:
            counts = await purge(state)
            if any(counts.values()):
                log.info("Retention purge: %s", counts)
        except ErpAgentError as exc:
            log.warning("The retention purge failed (%s); it runs again later.", exc)
        await asyncio.sleep(state.runtime.settings.retention.purge_interval_hours * 3600)


async def export_user(state: ServerState, user: str) -> dict[str, Any]:
    """What the agent keeps about ``user``: conversations with every turn, log rows, sessions."""
    store = state.store
    conversations = []
    for conversation in await store.list_conversations(user, limit=100_000):
        conversations.append(
            {
                "id": conversation.id,
                "title": conversation.title,
                "created_at": conversation.created_at.isoformat(),
                "updated_at": conversation.updated_at.isoformat(),
                "turns": [
                    {
                        "id": t.id,
                        "question": t.user_message,
                        "status": t.status,
                        "at": t.created_at.isoformat(),
                        "response": t.state.get("response"),
                        "feedback": t.state.get("feedback"),
                    }
                    for t in await store.turns(conversation.id)
                ],
            }
        )
    logged = await store.interactions(user=user, limit=100_000)
    return {
        "user": user,
        "exported_at": dt.datetime.now(dt.UTC).isoformat(),
        "conversations": conversations,
        "interaction_log": [{**r.__dict__, "at": r.at.isoformat()} for r in logged],
        "kept_elsewhere": "Proposals and audit events (what was changed in the ERP, by whom) "
        "are kept as the record of those changes; ask an administrator for them.",
    }


async def delete_user(state: ServerState, user: str) -> dict[str, int]:
    counts = await state.store.delete_user_data(user)
    counts["results"] = await state.runtime.results.forget(user=user)
    mine = await state.runtime.results.drop_exports(user=user)
    counts["exports"] = await asyncio.to_thread(_remove_files, mine)
    folder = user_folder(Path(state.runtime.settings.data_dir) / "exports", user)
    counts["exports"] += await asyncio.to_thread(
        _purge_unindexed, folder, dt.datetime.max.replace(tzinfo=dt.UTC)
    )
    if state.runtime.subscriptions is not None:  # subscriptions, inbox, standing credential
        counts.update(await state.runtime.subscriptions.store.forget_user(user))
    return counts
