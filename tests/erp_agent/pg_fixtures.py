"""A fresh PostgreSQL database per test (dropped after), on the server ERP_AGENT_TEST_PG names.

The role needs CREATEDB (`.ci/run` grants it). A missing server FAILS the test: a `postgres`
test that skips would prove nothing.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from retrieval_fixtures import PG_DSN
from sqlalchemy.engine import make_url


def _admin() -> object:
    import psycopg

    try:
        return psycopg.connect(PG_DSN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {PG_DSN} ({exc}). Run .ci/pgvector.sh as root, or "
            "point ERP_AGENT_TEST_PG at a server whose role may create databases."
        )


@contextmanager
def pg_database(prefix: str = "erp_t") -> Iterator[str]:
    """Yield a SQLAlchemy URL (``postgresql+psycopg://…``) of a new, empty database."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = _admin()
    admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[attr-defined]
    try:
        url = make_url(PG_DSN).set(drivername="postgresql+psycopg", database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        try:
            _drop(admin, name)
        finally:
            admin.close()  # type: ignore[attr-defined]


def _drop(admin: object, name: str) -> None:
    """Drop the database, its clients ended. An autovacuum worker that has just started on it
    is a process the test role may not end (InsufficientPrivilege): it is done in moments, so
    the drop is tried again, for up to five seconds."""
    import psycopg

    statement = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
    for _ in range(20):
        try:
            admin.execute(statement)  # type: ignore[attr-defined]
            return
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ObjectInUse):
            time.sleep(0.25)
    admin.execute(statement)  # type: ignore[attr-defined]


def terminate_clients(column: str, value: str) -> int:
    """End every client connection whose ``pg_stat_activity`` ``column`` (datname,
    application_name) is ``value``; how many there were. Only clients: an autovacuum worker on
    a new database is a superuser process the test role may not end."""
    import psycopg
    from psycopg import sql

    query = sql.SQL(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE {} = %s "
        "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    ).format(sql.Identifier(column))
    with psycopg.connect(PG_DSN, autocommit=True, connect_timeout=5) as admin:
        return len(admin.execute(query, (value,)).fetchall())
