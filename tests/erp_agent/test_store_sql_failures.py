"""Bad input and broken databases: a clear StoreError (or ConfigError), and nothing half-written."""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from erp_agent.errors import ConfigError, StoreError
from erp_agent.store import schema
from erp_agent.store.records import Conversation, Proposal, ProposalStatus, Turn
from erp_agent.store.sql_store import SQLStore, open_store

pytestmark = pytest.mark.anyio


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLStore]:
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}", lock_timeout=0.2)
    await store.migrate()
    yield store
    await store.close()


@pytest.fixture
def lock_holder(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """Another process's view: a connection that holds the write lock until the test ends."""
    connection = sqlite3.connect(tmp_path / "store.sqlite", isolation_level=None)
    yield connection
    connection.close()


def proposal(**changes: object) -> Proposal:
    values: dict[str, object] = {
        "id": "p1", "user": "amina", "session_id": "s1", "org": "Demo", "tool": "lead.create",
        "payload": {"name": "X"}, "payload_hash": "h", "summary": "Create lead X",
    }  # fmt: skip
    values.update(changes)
    return Proposal(**values)  # type: ignore[arg-type]


async def test_missing_directory_says_so(tmp_path: Path) -> None:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'absent' / 'store.sqlite'}")
    with pytest.raises(StoreError, match=r"directory .*absent does not exist") as caught:
        await store.migrate()
    assert "absent" in str(caught.value)
    await store.close()


async def test_a_file_that_is_not_a_database_says_so(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    path.write_bytes(b"these are not the pages you are looking for" * 200)
    store = open_store(f"sqlite+aiosqlite:///{path}")
    with pytest.raises(StoreError, match="not a SQLite database or is damaged"):
        await store.get_proposal("p1")
    await store.close()


async def test_a_locked_database_fails_after_the_lock_timeout_and_then_recovers(
    store: SQLStore, lock_holder: sqlite3.Connection
) -> None:
    lock_holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError, match=r"add proposal p1 .*database is locked.*retry"):
        await store.add_proposal(proposal())
    lock_holder.execute("ROLLBACK")
    await store.add_proposal(proposal())
    assert await store.get_proposal("p1") is not None


async def test_readers_are_not_blocked_by_a_writer(
    store: SQLStore, lock_holder: sqlite3.Connection
) -> None:
    await store.add_proposal(proposal())
    lock_holder.execute("BEGIN IMMEDIATE")
    lock_holder.execute("UPDATE proposals SET summary = 'changing'")
    loaded = await store.get_proposal("p1")
    assert loaded is not None
    assert loaded.summary == "Create lead X"
    lock_holder.execute("ROLLBACK")


async def test_values_that_are_not_json_are_refused_and_nothing_is_stored(
    store: SQLStore,
) -> None:
    with pytest.raises(StoreError, match=r"add proposal p1 .*Decimal"):
        await store.add_proposal(proposal(payload={"total": Decimal("10.10")}))
    with pytest.raises(StoreError, match="add proposal p1"):
        await store.add_proposal(proposal(payload={"ratio": math.nan}))
    assert await store.get_proposal("p1") is None


async def test_naive_datetimes_are_refused(store: SQLStore) -> None:
    with pytest.raises(StoreError, match="naive datetime"):
        await store.add_proposal(proposal(expires_at=dt.datetime(2026, 11, 30, 12)))
    assert await store.list_proposals() == []


async def test_a_failed_turn_update_keeps_the_last_good_state(store: SQLStore) -> None:
    await store.create_conversation(Conversation(id="c1", user="amina", org="Demo"))
    turn = Turn(id="t1", conversation_id="c1", seq=1, user_message="q", state={"step": 1})
    await store.save_turn(turn)
    before = await store.get_conversation("c1")

    turn.state = {"step": 2, "amount": Decimal("1.5")}
    turn.updated_at = turn.updated_at + dt.timedelta(minutes=1)
    with pytest.raises(StoreError, match="save turn t1"):
        await store.save_turn(turn)
    saved = await store.get_turn("t1")
    assert saved is not None
    assert saved.state == {"step": 1}
    assert await store.get_conversation("c1") == before


async def test_duplicate_ids_are_store_errors(store: SQLStore) -> None:
    await store.add_proposal(proposal())
    with pytest.raises(StoreError, match="same key is already stored"):
        await store.add_proposal(proposal(status=ProposalStatus.EXECUTED))
    kept = await store.get_proposal("p1")
    assert kept is not None
    assert kept.status is ProposalStatus.PENDING


def test_a_url_that_is_not_a_database_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="sqlite\\+aiosqlite:///"):
        open_store("store.sqlite")


def test_a_synchronous_driver_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="async driver"):
        open_store(f"sqlite+pysqlite:///{tmp_path / 'store.sqlite'}")


def test_config_errors_do_not_show_the_password() -> None:
    with pytest.raises(ConfigError) as caught:
        open_store("nosuchdb+nodriver://agent:s3cret@db.internal/erp")
    assert "s3cret" not in str(caught.value)


async def test_a_plain_sqlite_url_means_aiosqlite(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    assert store.url.drivername == "sqlite+aiosqlite"
    await store.migrate()
    assert await store.schema_version() == schema.head_revision()
    await store.close()
