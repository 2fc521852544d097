"""Bespoke demo databases on SQLite, MariaDB and PostgreSQL for the sql connector's tests.

Each server database gets a unique name (tests of several checkouts may share a server) and is
dropped afterwards. A server that is not reachable fails the test: it never skips.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

from conftest import TEST_TODAY

MAPPING = Path(__file__).parents[2] / "src" / "demo_erp" / "bespoke" / "mapping.yaml"
MARIADB = os.environ.get("ERP_AGENT_TEST_MARIADB", "mysql+pymysql://root@127.0.0.1:3306/test")
POSTGRES = os.environ.get(
    "ERP_AGENT_TEST_SQL_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
DIALECTS = ["sqlite", "mariadb", "postgres"]


@contextmanager
def database(dialect: str, tmp: Path) -> Iterator[str]:
    """A fresh, empty database of ``dialect``; yields its URL."""
    if dialect == "sqlite":
        yield f"sqlite:///{tmp / f'shop-{uuid.uuid4().hex[:8]}.sqlite'}"
        return
    server = MARIADB if dialect == "mariadb" else POSTGRES
    name = f"p_shop_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f"create database {name}"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        pytest.fail(
            f"{dialect} is not reachable at {server} ({exc.orig}); .ci/run starts it "
            f"(or set {'ERP_AGENT_TEST_MARIADB' if dialect == 'mariadb' else 'ERP_AGENT_TEST_SQL_PG'})."
        )
    url = sa.make_url(server).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            if dialect == "postgres":
                conn.execute(sa.text(
                    "select pg_terminate_backend(pid) from pg_stat_activity where datname = :n"
                ), {"n": name})  # fmt: skip
            conn.execute(sa.text(f"drop database if exists {name}"))
        admin.dispose()


def seeded(url: str, *, per_branch: int = 25) -> str:
    from demo_erp.bespoke.seed import seed

    seed(url, today=TEST_TODAY, invoices_per_branch=per_branch)
    return url


def raw(url: str, sql: str, **params: object) -> list[sa.Row[tuple[object, ...]]]:
    """Rows read straight from the database: the independent side of a check."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(sa.text(sql), params))
    finally:
        engine.dispose()


__all__ = ["DIALECTS", "MAPPING", "database", "dt", "raw", "seeded"]
