"""Retention and deletion on the SQL store: a conversation, everything of one user, and what is
older than the retention settings. A mixin of ``SQLStore``; each method is one transaction.

Proposals and audit events are kept: they are the record of what was done in the ERP, not of
what was asked (their conversation link is cleared when the conversation goes).
"""

from __future__ import annotations

import datetime as dt
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from erp_agent.store.tables import (
    conversation_state,
    conversations,
    erp_grants,
    interactions,
    proposals,
    turns,
    web_sessions,
)


class _Transactional(Protocol):
    def _transaction(
        self, action: str, *, write: bool
    ) -> AbstractAsyncContextManager[AsyncConnection]: ...


async def _drop_conversations(connection: AsyncConnection, ids: list[str]) -> int:
    if not ids:
        return 0
    await connection.execute(
        update(proposals).where(proposals.c.conversation_id.in_(ids)).values(conversation_id=None)
    )
    await connection.execute(
        delete(conversation_state).where(conversation_state.c.conversation_id.in_(ids))
    )
    await connection.execute(delete(turns).where(turns.c.conversation_id.in_(ids)))
    await connection.execute(delete(conversations).where(conversations.c.id.in_(ids)))
    return len(ids)


class Retention:
    """Mixed into SQLStore."""

    async def delete_conversation(self: _Transactional, conversation_id: str) -> bool:
        async with self._transaction(f"delete conversation {conversation_id}", write=True) as c:
            return await _drop_conversations(c, [conversation_id]) > 0

    async def delete_user_data(self: _Transactional, user: str) -> dict[str, int]:
        async with self._transaction(f"delete the data of {user}", write=True) as connection:
            ids = list(
                await connection.scalars(
                    select(conversations.c.id).where(conversations.c.user == user)
                )
            )
            gone = await _drop_conversations(connection, ids)
            logged = await connection.execute(
                delete(interactions).where(interactions.c.user == user)
            )
            sessions = await connection.execute(
                delete(web_sessions).where(web_sessions.c.user == user)
            )
            await connection.execute(delete(erp_grants).where(erp_grants.c.user == user))
        return {
            "conversations": gone,
            "interactions": int(logged.rowcount or 0),
            "sessions": int(sessions.rowcount or 0),
        }

    async def purge_older_than(
        self: _Transactional,
        *,
        conversations_before: dt.datetime | None,
        interactions_before: dt.datetime | None,
    ) -> dict[str, int]:
        async with self._transaction("purge by the retention settings", write=True) as connection:
            gone = 0
            if conversations_before is not None:
                old = select(conversations.c.id).where(
                    conversations.c.updated_at < conversations_before
                )
                gone = await _drop_conversations(connection, list(await connection.scalars(old)))
            logged = 0
            if interactions_before is not None:
                result = await connection.execute(
                    delete(interactions).where(interactions.c.at < interactions_before)
                )
                logged = int(result.rowcount or 0)
        return {"conversations": gone, "interactions": logged}
