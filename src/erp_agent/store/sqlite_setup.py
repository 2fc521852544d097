"""Connection set-up that SQLite needs to behave like a server database. Not SQL in queries:
only what each connection and transaction starts with."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine

# Execution option that marks a transaction that will write (see ``begin`` below).
WRITE_OPTION = "erp_agent_store_write"


def configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver, which otherwise opens transactions late
        # (only before INSERT/UPDATE/DELETE), leaving DDL and reads outside them.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            # PostgreSQL enforces foreign keys; SQLite does so only when asked, per connection.
            cursor.execute("PRAGMA foreign_keys = ON")
            # Readers do not block the writer, nor the writer the readers. WAL mode persists in
            # the file; switching to it needs an exclusive lock that SQLite may refuse at once
            # (no busy wait) while another connection is open, so it is asked for only once.
            cursor.execute("PRAGMA journal_mode")
            if str(cursor.fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode = WAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        # A transaction that will write takes the write lock at BEGIN, waiting for it up to the
        # busy timeout. A deferred one would take a snapshot first and, in WAL mode, fail at once
        # ("database is locked") if another writer committed meanwhile.
        writes = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


def sqlite_directory(url: URL) -> Path | None:
    """The directory of a file database, or None (in memory, or a ``file:`` URI)."""
    database = url.database
    if not database or database == ":memory:" or url.query.get("uri"):
        return None
    return Path(database).parent


@contextlib.asynccontextmanager
async def migration_lock(directory: Path | None, database: str | None) -> AsyncIterator[None]:
    """Workers of one host migrating one SQLite file take turns: a file lock beside the
    database, held from reading the schema version to the last migration. SQLite's own lock
    is not enough, since creating the file and setting WAL mode fail at once when raced."""
    if directory is None or not database:
        yield
        return
    with (directory / f"{Path(database).name}.migrate.lock").open("a") as handle:
        await asyncio.to_thread(fcntl.flock, handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
