"""Migrations: idempotent, and they build exactly the schema that tables.py describes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, create_engine, inspect, text

from erp_agent.store import schema
from erp_agent.store.sql_store import SQLStore
from erp_agent.store.tables import metadata

pytestmark = pytest.mark.anyio


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite"


@pytest.fixture
def inspector_engine(path: Path) -> Iterator[Engine]:
    """A plain synchronous engine on the same file, to look at the schema from outside."""
    engine = create_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()


async def test_migrating_twice_leaves_the_schema_at_head(path: Path) -> None:
    store = SQLStore(f"sqlite+aiosqlite:///{path}")
    try:
        assert await store.schema_version() is None
        await store.migrate()
        await store.migrate()
        assert schema.head_revision() is not None
        assert await store.schema_version() == schema.head_revision()
    finally:
        await store.close()


async def migrate_at_once(url: str, workers: int) -> None:
    """``workers`` stores migrate one database at the same time; all reach the head."""
    stores = [SQLStore(url) for _ in range(workers)]
    try:
        await asyncio.gather(*(store.migrate() for store in stores))
        assert await stores[0].schema_version() == schema.head_revision()
    finally:
        for store in stores:
            await store.close()


async def test_workers_migrating_at_once_all_succeed(path: Path) -> None:
    await migrate_at_once(f"sqlite+aiosqlite:///{path}", 5)


_MIGRATE = (
    "import asyncio, sys\n"
    "from erp_agent.store.sql_store import SQLStore\n"
    "async def main():\n"
    "    store = SQLStore(sys.argv[1])\n"
    "    try:\n"
    "        await store.migrate()\n"
    "    finally:\n"
    "        await store.close()\n"
    "asyncio.run(main())\n"
)


def test_worker_processes_migrating_one_new_file_all_succeed(
    path: Path, inspector_engine: Engine
) -> None:
    # Workers are processes: each creates the file, sets WAL mode and migrates, all at once.
    url = f"sqlite+aiosqlite:///{path}"
    workers = [
        subprocess.Popen([sys.executable, "-c", _MIGRATE, url], stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outcomes = [worker.communicate(timeout=120) for worker in workers]
    failures = [
        err for worker, (_, err) in zip(workers, outcomes, strict=True) if worker.returncode != 0
    ]
    assert failures == []
    with inspector_engine.connect() as connection:
        assert schema.current_revision(connection) == schema.head_revision()


async def test_migrated_schema_matches_the_table_definitions(
    path: Path, inspector_engine: Engine
) -> None:
    store = SQLStore(f"sqlite+aiosqlite:///{path}")
    await store.migrate()
    await store.close()

    with inspector_engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "version_table": schema.VERSION_TABLE}
        )
        diff: list[Any] = compare_metadata(context, metadata)
    assert diff == []

    inspector = inspect(inspector_engine)
    assert set(inspector.get_table_names()) >= {
        "conversations",
        "turns",
        "proposals",
        "audit_events",
        schema.VERSION_TABLE,
    }
    assert inspector.get_unique_constraints("turns") == [
        {"name": "uq_turns_conversation_id_seq", "column_names": ["conversation_id", "seq"]}
    ]
    indexed = {
        table: sorted(tuple(ix["column_names"]) for ix in inspector.get_indexes(table))
        for table in ("proposals", "audit_events", "conversations")
    }
    assert indexed == {
        "proposals": [("conversation_id",), ("status",), ("user",)],
        "audit_events": [("at",), ("tool",), ("turn_id",), ("user",)],
        "conversations": [("user", "updated_at")],
    }


def test_downgrade_and_upgrade_again(path: Path, inspector_engine: Engine) -> None:
    with inspector_engine.begin() as connection:
        command.upgrade(schema.alembic_config(connection), "head")
        command.downgrade(schema.alembic_config(connection), "base")
        assert schema.current_revision(connection) is None
        assert inspect(connection).get_table_names() == [schema.VERSION_TABLE]
        command.upgrade(schema.alembic_config(connection), "head")
        assert schema.current_revision(connection) == schema.head_revision()


async def test_proposals_stored_before_the_business_date_read_back_without_one(
    path: Path, inspector_engine: Engine
) -> None:
    # 0014 adds the column; a proposal stored at 0013 keeps confirming on the gateway's date.
    with inspector_engine.begin() as connection:
        command.upgrade(schema.alembic_config(connection), "0013")
        now = "2026-11-30 09:00:00.000000"
        connection.execute(
            text(
                "INSERT INTO proposals (id, user, session_id, org, tool, payload, payload_hash, "
                "summary, diff, status, created_at, expires_at) VALUES ('old', 'amina', 's1', "
                "'Demo', 'lead.create', '{}', 'h', 'Create Lead', '[]', 'pending', :t, :t)"
            ),
            {"t": now},
        )
    store = SQLStore(f"sqlite+aiosqlite:///{path}")
    try:
        await store.migrate()
        assert await store.schema_version() == schema.head_revision()
        old = await store.get_proposal("old")
        assert old is not None
        assert (old.tool, old.business_date) == ("lead.create", None)
    finally:
        await store.close()


def test_alembic_cli_style_use_without_a_connection_explains_itself() -> None:
    with pytest.raises(RuntimeError, match=r"Store\.migrate\(\)"):
        command.upgrade(schema.alembic_config(), "head")


@pytest.mark.postgres
async def test_workers_migrating_one_new_postgres_database_all_succeed() -> None:
    # `serve --workers N` starts N processes at once: each migrates the same empty database.
    # Unserialised, two of them create the same table and one fails (a duplicate pg_type row).
    from pg_fixtures import pg_database

    with pg_database() as url:
        await migrate_at_once(url, 4)
