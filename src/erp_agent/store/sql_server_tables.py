"""The server's tables on the SQL store: web sessions, admin settings, the interaction log.

A mixin of ``SQLStore`` (kept apart so each file stays small); it uses the store's one
``_transaction``, so every method is one transaction and fails as a ``StoreError``.
"""

from __future__ import annotations

import datetime as dt
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from sqlalchemy import Date, cast, delete, func, insert, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from erp_agent.store.records import Interaction, WebSession
from erp_agent.store.tables import admin_settings, interactions, web_sessions
from erp_agent.store.upsert import insert_new, upsert


class _Transactional(Protocol):
    @property
    def engine(self) -> AsyncEngine: ...

    def _transaction(
        self, action: str, *, write: bool
    ) -> AbstractAsyncContextManager[AsyncConnection]: ...


def _web_session(row: RowMapping) -> WebSession:
    return WebSession(**{c.name: row[c.name] for c in web_sessions.columns})


def _interaction(row: RowMapping) -> Interaction:
    return Interaction(**{c.name: row[c.name] for c in interactions.columns})


class ServerTables:
    """Mixed into SQLStore."""

    # ------------------------------------------------------------ web sessions

    async def save_web_session(self: _Transactional, row: WebSession) -> None:
        async with self._transaction("save a web session", write=True) as connection:
            await connection.execute(insert(web_sessions).values(**row.__dict__))

    async def web_session(self: _Transactional, token_hash: str) -> WebSession | None:
        query = select(web_sessions).where(web_sessions.c.token_hash == token_hash)
        async with self._transaction("read a web session", write=False) as connection:
            found = (await connection.execute(query)).mappings().first()
        return None if found is None else _web_session(found)

    async def newest_web_session(
        self: _Transactional, *, session_id: str | None = None, user: str | None = None
    ) -> WebSession | None:
        query = select(web_sessions).order_by(web_sessions.c.expires_at.desc()).limit(1)
        if session_id is not None:
            query = query.where(web_sessions.c.session_id == session_id)
        if user is not None:
            query = query.where(web_sessions.c.user == user)
        async with self._transaction("read a web session", write=False) as connection:
            found = (await connection.execute(query)).mappings().first()
        return None if found is None else _web_session(found)

    async def delete_web_session(self: _Transactional, token_hash: str) -> None:
        async with self._transaction("end a web session", write=True) as connection:
            await connection.execute(
                delete(web_sessions).where(web_sessions.c.token_hash == token_hash)
            )

    async def purge_web_sessions(self: _Transactional, now: dt.datetime) -> None:
        async with self._transaction("drop expired web sessions", write=True) as connection:
            await connection.execute(delete(web_sessions).where(web_sessions.c.expires_at < now))

    async def update_web_session_credential(
        self: _Transactional, token_hash: str, credential: bytes
    ) -> None:
        query = (
            update(web_sessions)
            .where(web_sessions.c.token_hash == token_hash)
            .values(credential=credential)
        )
        async with self._transaction("update a web session", write=True) as connection:
            await connection.execute(query)

    async def web_session_credentials(self: _Transactional) -> list[tuple[str, bytes]]:
        query = select(web_sessions.c.token_hash, web_sessions.c.credential)
        async with self._transaction("read web sessions", write=False) as connection:
            return [(str(r[0]), bytes(r[1])) for r in await connection.execute(query)]

    # ------------------------------------------------------------ admin settings

    async def admin_settings(self: _Transactional) -> dict[str, Any]:
        query = select(admin_settings.c.key, admin_settings.c.value)
        async with self._transaction("read the admin settings", write=False) as connection:
            return {row.key: row.value for row in await connection.execute(query)}

    async def set_admin_setting(self: _Transactional, key: str, value: Any) -> None:
        values = {"value": value, "updated_at": dt.datetime.now(dt.UTC)}
        statement = upsert(
            self.engine.dialect.name, admin_settings, {"key": key, **values}, ["key"]
        )
        async with self._transaction(f"save the admin setting {key}", write=True) as connection:
            await connection.execute(statement)

    # ------------------------------------------------------------ interaction log and usage

    async def log_interaction(self: _Transactional, row: Interaction) -> None:
        statement = insert_new(self.engine.dialect.name, interactions, row.__dict__)
        async with self._transaction(f"log turn {row.turn_id}", write=True) as connection:
            await connection.execute(statement)

    async def interactions(
        self: _Transactional,
        *,
        user: str | None = None,
        org: str | None = None,
        outcome: str | None = None,
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        rated: bool = False,
        rating: str | None = None,
        limit: int = 100,
    ) -> list[Interaction]:
        query = select(interactions).order_by(interactions.c.at.desc()).limit(limit)
        if user:
            query = query.where(interactions.c.user == user)
        if org:
            query = query.where(interactions.c.org == org)
        if outcome == "proposal":
            query = query.where(interactions.c.shown == "proposal")
            query = query.where(interactions.c.outcome == "answered")
        elif outcome == "answered":
            query = query.where(interactions.c.outcome == "answered")
            query = query.where(interactions.c.shown != "proposal")
        elif outcome:
            query = query.where(interactions.c.outcome == outcome)
        if since:
            query = query.where(interactions.c.at >= since)
        if until:
            query = query.where(interactions.c.at < until)
        if rated:
            query = query.where(interactions.c.rating.is_not(None))
        if rating:
            query = query.where(interactions.c.rating == rating)
        async with self._transaction("read the interaction log", write=False) as connection:
            return [_interaction(r) for r in (await connection.execute(query)).mappings()]

    async def rate_interaction(
        self: _Transactional, turn_id: str, rating: str, comment: str, at: dt.datetime
    ) -> bool:
        statement = (
            update(interactions)
            .where(interactions.c.turn_id == turn_id)
            .values(rating=rating, comment=comment, rated_at=at)
        )
        async with self._transaction(f"rate turn {turn_id}", write=True) as connection:
            done = await connection.execute(statement)
        return bool(done.rowcount)

    async def usage_by_day(self: _Transactional, since: dt.datetime) -> list[dict[str, Any]]:
        day: ColumnElement[Any]
        if self.engine.dialect.name == "postgresql":
            day = cast(func.timezone("UTC", interactions.c.at), Date)
        else:
            day = func.date(interactions.c.at)  # stored as UTC text
        query = (
            select(
                interactions.c.org,
                day.label("day"),
                func.sum(interactions.c.prompt_tokens).label("prompt"),
                func.sum(interactions.c.cached_tokens).label("cached"),
                func.sum(interactions.c.completion_tokens).label("completion"),
                func.count().label("turns"),
            )
            .where(interactions.c.at >= since)
            .group_by(interactions.c.org, day)
            .order_by(day, interactions.c.org)
        )
        async with self._transaction("read token usage", write=False) as connection:
            found = (await connection.execute(query)).mappings().all()
        return [{**dict(r), "day": str(r["day"])} for r in found]

    async def month_tokens(self: _Transactional, org: str, now: dt.datetime) -> int:
        start = now.astimezone(dt.UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        end = (start + dt.timedelta(days=32)).replace(day=1)
        query = select(
            func.coalesce(
                func.sum(interactions.c.prompt_tokens + interactions.c.completion_tokens), 0
            )
        ).where(interactions.c.org == org, interactions.c.at >= start, interactions.c.at < end)
        async with self._transaction("read this month's token usage", write=False) as connection:
            return int((await connection.execute(query)).scalar_one())
