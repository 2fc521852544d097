"""Shared fixtures. Fixtures that start servers live next to the tests that need them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from demo_erp import db
from demo_erp.context import ADMINISTRATOR, Ctx, Settings, as_user

# The demo data and every date-relative rule are pinned to this day in tests.
TEST_TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def empty_db(tmp_path: Path) -> Iterator[tuple[Settings, Ctx]]:
    """A fresh demo ERP database with the schema and nothing else; an Administrator context."""
    path = tmp_path / "erp.sqlite"
    conn = db.connect(path)
    db.create_schema(conn)
    settings = Settings(db_path=str(path), today=TEST_TODAY)
    yield settings, as_user(conn, settings, ADMINISTRATOR)
    conn.close()
