"""The server's own tables: web sessions (credential encrypted), a turn log for usage and the
interaction log, and admin settings. Kept apart from the agent store, whose schema is migrated."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    delete,
    func,
    select,
)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

metadata = MetaData()

web_sessions = Table(
    "web_sessions",
    metadata,
    Column("token_hash", String, primary_key=True),  # sha256 of the cookie: a leak gives no cookie
    Column("session_id", String, nullable=False),
    Column("user", String, nullable=False),
    Column("org", String, nullable=False),
    Column("roles", JSON, nullable=False),
    Column("allowed_tools", JSON, nullable=False),
    Column("csrf", String, nullable=False),
    Column("credential", LargeBinary, nullable=False),  # Fernet token
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

turn_log = Table(
    "turn_log",
    metadata,
    Column("turn_id", String, primary_key=True),
    Column("conversation_id", String, nullable=False),
    Column("user", String, nullable=False, index=True),
    Column("org", String, nullable=False, index=True),
    Column("at", DateTime(timezone=True), nullable=False, index=True),
    Column("message", Text, nullable=False),
    Column("model", String, nullable=False),
    Column("outcome", String, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("cached_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("tools", JSON, nullable=False),
    Column("latency_ms", Float, nullable=False),
)

admin_settings = Table(
    "admin_settings",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", JSON, nullable=False),
)


@dataclass
class WebSession:
    token_hash: str
    session_id: str
    user: str
    org: str
    roles: list[str]
    allowed_tools: list[str]
    csrf: str
    credential: bytes
    created_at: dt.datetime
    expires_at: dt.datetime


@dataclass
class TurnLogRow:
    turn_id: str
    conversation_id: str
    user: str
    org: str
    message: str
    model: str
    outcome: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    tools: list[str] = field(default_factory=list)
    latency_ms: float = 0.0
    at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))


def _utc(value: dt.datetime) -> dt.datetime:
    # SQLite returns naive datetimes; every value written here is UTC.
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


class ServerDB:
    def __init__(self, url: str) -> None:
        memory = url.rstrip("/").endswith(":memory:") or url.endswith("://")
        self.engine: AsyncEngine = create_async_engine(
            url, poolclass=StaticPool if memory else None
        )

    async def create(self) -> None:
        async with self.engine.begin() as conn:
            await conn.run_sync(metadata.create_all)

    async def close(self) -> None:
        await self.engine.dispose()

    async def ping(self) -> None:
        async with self.engine.connect() as conn:
            await conn.execute(select(1))

    # ------------------------------------------------------------ sessions

    async def save_session(self, row: WebSession) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(web_sessions.insert().values(**row.__dict__))

    async def get_session(self, token_hash: str) -> WebSession | None:
        async with self.engine.connect() as conn:
            found = (
                (
                    await conn.execute(
                        select(web_sessions).where(web_sessions.c.token_hash == token_hash)
                    )
                )
                .mappings()
                .first()
            )
        if found is None:
            return None
        row = WebSession(**dict(found))
        row.created_at, row.expires_at = _utc(row.created_at), _utc(row.expires_at)
        return row

    async def session_by_id(self, session_id: str) -> WebSession | None:
        """The newest web session with this gateway session id (reconciliation runs as it)."""
        return await self._newest(web_sessions.c.session_id == session_id)

    async def newest_session_of(self, user: str) -> WebSession | None:
        """The user's newest web session (an interrupted turn is resumed as it)."""
        return await self._newest(web_sessions.c.user == user)

    async def _newest(self, condition: Any) -> WebSession | None:
        query = (
            select(web_sessions)
            .where(condition)
            .order_by(web_sessions.c.expires_at.desc())
            .limit(1)
        )
        async with self.engine.connect() as conn:
            found = (await conn.execute(query)).mappings().first()
        if found is None:
            return None
        row = WebSession(**dict(found))
        row.created_at, row.expires_at = _utc(row.created_at), _utc(row.expires_at)
        return row

    async def delete_session(self, token_hash: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(delete(web_sessions).where(web_sessions.c.token_hash == token_hash))

    async def purge_expired(self, now: dt.datetime) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(delete(web_sessions).where(web_sessions.c.expires_at < now))

    # ------------------------------------------------------------ turn log

    async def log_turn(self, row: TurnLogRow) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(
                sqlite_insert(turn_log).values(**row.__dict__).on_conflict_do_nothing()
            )

    async def turns(
        self,
        *,
        user: str | None = None,
        org: str | None = None,
        tool: str | None = None,
        outcome: str | None = None,
        since: dt.datetime | None = None,
        limit: int = 100,
    ) -> list[TurnLogRow]:
        query = select(turn_log).order_by(turn_log.c.at.desc())
        if user:
            query = query.where(turn_log.c.user == user)
        if org:
            query = query.where(turn_log.c.org == org)
        if outcome:
            query = query.where(turn_log.c.outcome == outcome)
        if since:
            query = query.where(turn_log.c.at >= since)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query.limit(limit * 5 if tool else limit))).mappings().all()
        out = [TurnLogRow(**dict(r)) for r in rows]
        for row in out:
            row.at = _utc(row.at)
        if tool:  # tools is a JSON list; filtering here keeps the query dialect-neutral
            out = [r for r in out if tool in r.tools][:limit]
        return out

    async def usage_by_day(self, since: dt.datetime) -> list[dict[str, Any]]:
        day = func.date(turn_log.c.at)
        query = (
            select(
                turn_log.c.org,
                day.label("day"),
                func.sum(turn_log.c.prompt_tokens).label("prompt"),
                func.sum(turn_log.c.cached_tokens).label("cached"),
                func.sum(turn_log.c.completion_tokens).label("completion"),
                func.count().label("turns"),
            )
            .where(turn_log.c.at >= since)
            .group_by(turn_log.c.org, day)
            .order_by(day)
        )
        async with self.engine.connect() as conn:
            return [dict(r) for r in (await conn.execute(query)).mappings().all()]

    async def month_tokens(self, org: str, now: dt.datetime) -> int:
        start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        query = select(
            func.coalesce(func.sum(turn_log.c.prompt_tokens + turn_log.c.completion_tokens), 0)
        ).where(turn_log.c.org == org, turn_log.c.at >= start)
        async with self.engine.connect() as conn:
            return int((await conn.execute(query)).scalar_one())

    # ------------------------------------------------------------ admin settings

    async def get_setting(self, key: str) -> Any:
        async with self.engine.connect() as conn:
            return (
                await conn.execute(
                    select(admin_settings.c.value).where(admin_settings.c.key == key)
                )
            ).scalar_one_or_none()

    async def set_setting(self, key: str, value: Any) -> None:
        statement = sqlite_insert(admin_settings).values(key=key, value=value)
        async with self.engine.begin() as conn:
            await conn.execute(
                statement.on_conflict_do_update(index_elements=["key"], set_={"value": value})
            )
