"""``SQLStore``: the Store on SQLAlchemy Core with an async engine (SQLite or PostgreSQL).

The queries are dialect-neutral; what differs per database lives in the engine set-up. Every
method is one transaction, and every database failure leaves as a ``StoreError``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from erp_agent.errors import ConfigError, StoreError
from erp_agent.store import rows, schema
from erp_agent.store.base import GRANTS_KEPT, SIGN_IN_FAILURES_KEPT, Store
from erp_agent.store.postgres_setup import configure_postgres, json_without_nul
from erp_agent.store.records import (
    ApiKey,
    AuditEvent,
    Conversation,
    Decision,
    Proposal,
    ProposalStatus,
    Turn,
    Unrequested,
    utcnow,
)
from erp_agent.store.sql_errors import store_error
from erp_agent.store.sql_retention import Retention
from erp_agent.store.sql_server_tables import ServerTables
from erp_agent.store.sqlite_setup import (
    WRITE_OPTION,
    configure_sqlite,
    migration_lock,
    sqlite_directory,
)
from erp_agent.store.tables import (
    api_keys,
    audit_events,
    conversation_state,
    conversations,
    erp_grants,
    proposals,
    sign_in_failures,
    turns,
)
from erp_agent.store.upsert import upsert

# Per process: N workers hold up to N × 10 connections (PostgreSQL's default limit is 100).
SERVER_POOL = {"pool_size": 5, "max_overflow": 5, "pool_timeout": 30}
PG_CONNECT = {"connect_timeout": 10}  # seconds (libpq's), for a host that drops packets

MIGRATION_LOCK = "SELECT pg_advisory_xact_lock(hashtext('erp_agent.store.migrate'))"

# Strict JSON: NaN/Infinity are not JSON and PostgreSQL would refuse them.
_json_dumps = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False)


def open_store(url: str) -> Store:
    """The store at ``url``, e.g. ``sqlite+aiosqlite:///path/store.sqlite``.

    Opening connects to nothing; call ``migrate()`` before first use.
    """
    return SQLStore(url)


def _parse_url(url: str) -> URL:
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError as error:
        # The URL is not echoed: unparsed, its password could not be masked.
        raise ConfigError(
            "The store URL is not a database URL. "
            "Use, for example, sqlite+aiosqlite:///path/store.sqlite."
        ) from error
    if parsed.drivername == "sqlite":
        # aiosqlite is the one async SQLite driver, so a plain sqlite:// URL can only mean it.
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif parsed.drivername in ("postgres", "postgresql"):
        # psycopg 3 (installed) speaks async; a plain postgresql:// URL means it.
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


class SQLStore(ServerTables, Retention, Store):
    """The store in a SQL database reached through an async SQLAlchemy engine.

    ``lock_timeout`` (SQLite only) is how long a write waits for another writer's lock before
    failing with ``StoreError``.
    """

    def __init__(self, url: str, *, lock_timeout: float = 5.0) -> None:
        parsed = _parse_url(url)
        is_sqlite = parsed.get_backend_name() == "sqlite"
        is_postgres = parsed.get_backend_name() == "postgresql"
        try:
            self._engine: AsyncEngine = create_async_engine(
                parsed,
                json_serializer=_json_dumps if is_sqlite else json_without_nul(_json_dumps),
                # A database that does not answer is reported (503), not waited for forever.
                connect_args=(
                    {"timeout": lock_timeout} if is_sqlite else PG_CONNECT if is_postgres else {}
                ),
                # A server database: connections checked before use, so a restart of the
                # database costs a reconnect rather than a failed turn.
                **({} if is_sqlite else {"pool_pre_ping": True, **SERVER_POOL}),
            )
        except (sa_exc.ArgumentError, sa_exc.InvalidRequestError, ImportError) as error:
            raise ConfigError(
                f"Cannot open the store {parsed.render_as_string(hide_password=True)}: "
                f"{str(error).rstrip('. ')}. "
                "Use an installed async driver, for example sqlite+aiosqlite:///path/store.sqlite."
            ) from error
        # A StaticPool (SQLite in memory) hands every caller the same connection: transactions
        # must then take turns, or two of them would interleave on it.
        self._one_at_a_time = asyncio.Lock() if isinstance(self._engine.pool, StaticPool) else None
        self._directory: Path | None = None
        if is_sqlite:
            configure_sqlite(self._engine.sync_engine)
            self._directory = sqlite_directory(parsed)
        elif is_postgres:
            configure_postgres(self._engine.sync_engine)

    @property
    def engine(self) -> AsyncEngine:
        """The async engine, for stores that share this database (e.g. tool results)."""
        return self._engine

    @property
    def url(self) -> URL:
        return self._engine.url

    def _check_directory(self, action: str) -> None:
        if self._directory is not None and not self._directory.is_dir():
            # Checked first: the commonest set-up mistake, and a failed aiosqlite connect leaves
            # a worker thread that can outlive (and trip over) a closing event loop.
            where = self._engine.url.render_as_string(hide_password=True)
            raise StoreError(
                f"Could not {action} in the store {where}: the directory {self._directory} "
                "does not exist (create it, or point the store at another path)."
            )

    @asynccontextmanager
    async def _transaction(self, action: str, *, write: bool) -> AsyncIterator[AsyncConnection]:
        self._check_directory(action)
        try:
            async with AsyncExitStack() as stack:
                if self._one_at_a_time is not None:
                    await stack.enter_async_context(self._one_at_a_time)
                connection = await stack.enter_async_context(self._engine.connect())
                if write:
                    await connection.execution_options(**{WRITE_OPTION: True})
                await stack.enter_async_context(connection.begin())
                yield connection
        except StoreError:
            raise
        except (sa_exc.SQLAlchemyError, OSError) as error:
            raise store_error(action, error, self._engine.url) from error

    # schema

    async def migrate(self) -> None:
        self._check_directory("migrate the schema")
        async with migration_lock(self._directory, self._engine.url.database):
            head = schema.shipped_head()
            if head is None or await self.schema_version() != head:
                # A migration is due: Alembic and the scripts load before the write lock.
                await asyncio.to_thread(schema.load_migrations)
            async with self._transaction("migrate the schema", write=True) as connection:
                if connection.dialect.name == "postgresql":
                    # Workers started at once take turns (the lock ends with the transaction):
                    # the first migrates, the others then find the schema at head. Raced, two
                    # would create the same table and one would fail to start.
                    await connection.execute(text(MIGRATION_LOCK))
                await connection.run_sync(schema.upgrade_to_head)

    async def schema_version(self) -> str | None:
        """The applied migration revision, or None on a database never migrated."""
        async with self._transaction("read the schema version", write=False) as connection:
            return await connection.run_sync(schema.current_revision)

    async def close(self) -> None:
        await self._engine.dispose()

    # proposals

    async def add_proposal(self, proposal: Proposal) -> None:
        async with self._transaction(f"add proposal {proposal.id}", write=True) as connection:
            await connection.execute(insert(proposals).values(rows.proposal_values(proposal)))

    async def get_proposal(self, proposal_id: str) -> Proposal | None:
        query = select(proposals).where(proposals.c.id == proposal_id)
        async with self._transaction(f"read proposal {proposal_id}", write=False) as connection:
            row = (await connection.execute(query)).mappings().first()
        return None if row is None else rows.proposal_from_row(row)

    async def claim_proposal(self, proposal_id: str, *, at: dt.datetime | None = None) -> bool:
        # One conditional UPDATE: the database decides which of two racing confirms wins.
        claim = (
            update(proposals)
            .where(proposals.c.id == proposal_id)
            .where(proposals.c.status == ProposalStatus.PENDING.value)
            .values(status=ProposalStatus.EXECUTING.value, claimed_at=at or utcnow())
        )
        async with self._transaction(f"claim proposal {proposal_id}", write=True) as connection:
            result = await connection.execute(claim)
        return result.rowcount == 1

    async def set_checkpoint(self, proposal_id: str, checkpoint: dict[str, Any]) -> None:
        note = update(proposals).where(proposals.c.id == proposal_id).values(checkpoint=checkpoint)
        action = f"note the checkpoint of proposal {proposal_id}"
        async with self._transaction(action, write=True) as connection:
            if (await connection.execute(note)).rowcount != 1:
                raise StoreError(f"There is no proposal {proposal_id}.")

    async def set_warning(self, proposal_id: str, warning: Unrequested) -> None:
        note = update(proposals).where(proposals.c.id == proposal_id).values(warning=warning)
        action = f"note the content warning of proposal {proposal_id}"
        async with self._transaction(action, write=True) as connection:
            if (await connection.execute(note)).rowcount != 1:
                raise StoreError(f"There is no proposal {proposal_id}.")

    async def finish_proposal(
        self,
        proposal_id: str,
        status: ProposalStatus,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        decided_at: dt.datetime | None = None,
        superseded_by: str | None = None,
        expected: ProposalStatus | None = None,
    ) -> bool:
        """Set the final status, result and error; ``decided_at`` defaults to now. Raises
        ``StoreError`` if there is no such proposal; with ``expected``, changes nothing and
        returns False unless the proposal is in that status."""
        finish = (
            update(proposals)
            .where(proposals.c.id == proposal_id)
            .values(
                status=status.value,
                result=result,
                error=error,
                decided_at=decided_at or utcnow(),
                superseded_by=superseded_by,
            )
        )
        if expected is not None:
            finish = finish.where(proposals.c.status == expected.value)
        async with self._transaction(f"finish proposal {proposal_id}", write=True) as connection:
            changed = await connection.execute(finish)
            if changed.rowcount == 1:
                return True
            exists = await connection.execute(
                select(proposals.c.id).where(proposals.c.id == proposal_id)
            )
            if exists.first() is None:
                raise StoreError(f"There is no proposal {proposal_id} to finish.")
        return False

    async def list_proposals(
        self,
        *,
        user: str | None = None,
        status: ProposalStatus | None = None,
        conversation_id: str | None = None,
        limit: int = 100,
    ) -> list[Proposal]:
        """Newest first."""
        query = select(proposals)
        if user is not None:
            query = query.where(proposals.c.user == user)
        if status is not None:
            query = query.where(proposals.c.status == status.value)
        if conversation_id is not None:
            query = query.where(proposals.c.conversation_id == conversation_id)
        query = query.order_by(proposals.c.created_at.desc(), proposals.c.id.desc()).limit(limit)
        async with self._transaction("list proposals", write=False) as connection:
            found = (await connection.execute(query)).mappings().all()
        return [rows.proposal_from_row(row) for row in found]

    # audit

    async def record_event(self, event: AuditEvent) -> None:
        """Store the event; an event without an id gets the one the database assigned."""
        async with self._transaction(f"record a {event.tool} event", write=True) as connection:
            added = await connection.execute(insert(audit_events).values(rows.event_values(event)))
        if event.id is None and added.inserted_primary_key is not None:
            event.id = added.inserted_primary_key[0]

    async def events(
        self,
        *,
        user: str | None = None,
        tool: str | None = None,
        decision: Decision | None = None,
        since: dt.datetime | None = None,
        turn_id: str | None = None,
        proposal_id: str | None = None,
        limit: int = 100,
    ) -> list[AuditEvent]:
        """Newest first; ``since`` is inclusive."""
        query = select(audit_events)
        if turn_id is not None:
            query = query.where(audit_events.c.turn_id == turn_id)
        if proposal_id is not None:
            query = query.where(audit_events.c.proposal_id == proposal_id)
        if user is not None:
            query = query.where(audit_events.c.user == user)
        if tool is not None:
            query = query.where(audit_events.c.tool == tool)
        if decision is not None:
            query = query.where(audit_events.c.decision == decision.value)
        if since is not None:
            query = query.where(audit_events.c.at >= since)
        query = query.order_by(audit_events.c.at.desc(), audit_events.c.id.desc()).limit(limit)
        async with self._transaction("read audit events", write=False) as connection:
            found = (await connection.execute(query)).mappings().all()
        return [rows.event_from_row(row) for row in found]

    # conversations and turns

    async def create_conversation(
        self, conversation: Conversation, first_turn: Turn | None = None
    ) -> None:
        values = rows.conversation_values(conversation)
        if first_turn is not None:
            values["updated_at"] = max(values["updated_at"], first_turn.updated_at)
        action = f"create conversation {conversation.id}"
        async with self._transaction(action, write=True) as connection:
            await connection.execute(insert(conversations).values(values))
            if first_turn is not None:
                await connection.execute(insert(turns).values(rows.turn_values(first_turn)))

    async def get_conversation(self, conversation_id: str) -> Conversation | None:
        query = select(conversations).where(conversations.c.id == conversation_id)
        action = f"read conversation {conversation_id}"
        async with self._transaction(action, write=False) as connection:
            row = (await connection.execute(query)).mappings().first()
        return None if row is None else rows.conversation_from_row(row)

    async def list_conversations(self, user: str, *, limit: int = 50) -> list[Conversation]:
        """The user's conversations, most recently active (``updated_at``) first."""
        query = (
            select(conversations)
            .where(conversations.c.user == user)
            .order_by(conversations.c.updated_at.desc(), conversations.c.id.desc())
            .limit(limit)
        )
        async with self._transaction("list conversations", write=False) as connection:
            found = (await connection.execute(query)).mappings().all()
        return [rows.conversation_from_row(row) for row in found]

    async def conversation_state(self, conversation_id: str) -> dict[str, Any]:
        query = select(conversation_state.c.state).where(
            conversation_state.c.conversation_id == conversation_id
        )
        action = f"read the state of conversation {conversation_id}"
        async with self._transaction(action, write=False) as connection:
            found = (await connection.execute(query)).scalar_one_or_none()
        return dict(found) if isinstance(found, dict) else {}

    async def save_conversation_state(self, conversation_id: str, state: Mapping[str, Any]) -> None:
        values = {"state": state, "updated_at": dt.datetime.now(dt.UTC)}
        action = f"save the state of conversation {conversation_id}"
        row = {"conversation_id": conversation_id, **values}
        statement = upsert(self._engine.dialect.name, conversation_state, row, ["conversation_id"])
        async with self._transaction(action, write=True) as connection:
            await connection.execute(statement)

    async def save_turn(self, turn: Turn) -> None:
        """Insert or update the turn, and move its conversation's ``updated_at`` up to the
        turn's, so that ``list_conversations`` orders by latest activity."""
        values = rows.turn_values(turn)
        statement = upsert(self._engine.dialect.name, turns, values, ["id"])
        async with self._transaction(f"save turn {turn.id}", write=True) as connection:
            await connection.execute(statement)
            await connection.execute(
                update(conversations)
                .where(conversations.c.id == turn.conversation_id)
                .where(conversations.c.updated_at < turn.updated_at)
                .values(updated_at=turn.updated_at)
            )

    async def get_turn(self, turn_id: str) -> Turn | None:
        query = select(turns).where(turns.c.id == turn_id)
        async with self._transaction(f"read turn {turn_id}", write=False) as connection:
            row = (await connection.execute(query)).mappings().first()
        return None if row is None else rows.turn_from_row(row)

    async def running_turns(self, *, updated_before: dt.datetime) -> list[Turn]:
        query = (
            select(turns)
            .where(turns.c.status == "running")
            .where(turns.c.updated_at < updated_before)
            .order_by(turns.c.updated_at)
        )
        async with self._transaction("read the running turns", write=False) as connection:
            found = (await connection.execute(query)).mappings().all()
        return [rows.turn_from_row(row) for row in found]

    async def turns(self, conversation_id: str) -> list[Turn]:
        """The conversation's turns in order (``seq`` ascending)."""
        query = (
            select(turns).where(turns.c.conversation_id == conversation_id).order_by(turns.c.seq)
        )
        action = f"read the turns of conversation {conversation_id}"
        async with self._transaction(action, write=False) as connection:
            found = (await connection.execute(query)).mappings().all()
        return [rows.turn_from_row(row) for row in found]

    # failed sign-ins

    async def add_sign_in_failure(self, keys: Sequence[str], at: dt.datetime) -> None:
        async with self._transaction("record a failed sign-in", write=True) as connection:
            await connection.execute(
                delete(sign_in_failures).where(sign_in_failures.c.at < at - SIGN_IN_FAILURES_KEPT)
            )
            if keys:
                await connection.execute(
                    insert(sign_in_failures), [{"key": key, "at": at} for key in keys]
                )

    async def sign_in_failures(self, key: str, since: dt.datetime) -> list[dt.datetime]:
        query = (
            select(sign_in_failures.c.at)
            .where(sign_in_failures.c.key == key)
            .where(sign_in_failures.c.at >= since)
            .order_by(sign_in_failures.c.at)
        )
        async with self._transaction("read failed sign-ins", write=False) as connection:
            return list((await connection.execute(query)).scalars())

    async def clear_sign_in_failures(self, key: str) -> None:
        async with self._transaction("clear failed sign-ins", write=True) as connection:
            await connection.execute(delete(sign_in_failures).where(sign_in_failures.c.key == key))

    # ------------------------------------------------------------ ERP grants

    async def saved_grants(self, key: str, since: dt.datetime) -> dict[str, Any] | None:
        query = (
            select(erp_grants.c.grants)
            .where(erp_grants.c.key == key)
            .where(erp_grants.c.checked_at >= since)
        )
        async with self._transaction("read saved grants", write=False) as connection:
            found = (await connection.execute(query)).scalar()
        return dict(found) if isinstance(found, dict) else None

    async def save_grants(
        self, key: str, user: str, grants: dict[str, Any], at: dt.datetime
    ) -> None:
        async with self._transaction("save grants", write=True) as connection:
            await connection.execute(
                delete(erp_grants).where(
                    (erp_grants.c.key == key) | (erp_grants.c.checked_at < at - GRANTS_KEPT)
                )
            )
            await connection.execute(
                insert(erp_grants).values(key=key, user=user, grants=grants, checked_at=at)
            )

    async def forget_grants(self, user: str) -> None:
        async with self._transaction("forget grants", write=True) as connection:
            await connection.execute(delete(erp_grants).where(erp_grants.c.user == user))

    # ------------------------------------------------------------ API keys

    async def add_api_key(self, key: ApiKey) -> None:
        async with self._transaction(f"add API key {key.id}", write=True) as connection:
            await connection.execute(insert(api_keys).values(**dataclasses.asdict(key)))

    async def api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        query = select(api_keys).where(api_keys.c.key_hash == key_hash)
        async with self._transaction("read an API key", write=False) as connection:
            row = (await connection.execute(query)).mappings().first()
        return None if row is None else ApiKey(**dict(row))

    async def list_api_keys(
        self, *, org: str | None = None, user: str | None = None
    ) -> list[ApiKey]:
        query = select(api_keys).order_by(api_keys.c.created_at.desc(), api_keys.c.id)
        if org is not None:
            query = query.where(api_keys.c.org == org)
        if user is not None:
            query = query.where(api_keys.c.user == user)
        async with self._transaction("list API keys", write=False) as connection:
            return [ApiKey(**dict(r)) for r in (await connection.execute(query)).mappings()]

    async def revoke_api_key(self, key_id: str, at: dt.datetime) -> bool:
        statement = (
            update(api_keys)
            .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
            .values(revoked_at=at)
        )
        async with self._transaction(f"revoke API key {key_id}", write=True) as connection:
            return bool((await connection.execute(statement)).rowcount)

    async def set_api_key_credentials(self, user: str, credential: str) -> None:
        statement = (
            update(api_keys)
            .where(api_keys.c.user == user, api_keys.c.kind == "user")
            .where(api_keys.c.revoked_at.is_(None))
            .values(credential=credential)
        )
        async with self._transaction(f"update API keys of {user}", write=True) as connection:
            await connection.execute(statement)
