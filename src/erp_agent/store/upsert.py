"""Insert-or-update in one statement, in the dialect's own form: ``INSERT … ON CONFLICT``,
which PostgreSQL and SQLite (3.24+) share. One round trip where UPDATE-then-INSERT took two,
and no window between them for another worker's INSERT of the same key."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.sql.dml import Insert


def _insert(dialect: str, table: Table) -> Any:
    # Imported when used: the PostgreSQL dialect package alone costs a noticeable part of a
    # terminal command's start, and a SQLite store never needs it.
    module = "postgresql" if dialect == "postgresql" else "sqlite"
    return importlib.import_module(f"sqlalchemy.dialects.{module}").insert(table)


def upsert(dialect: str, table: Table, values: Mapping[str, Any], keys: Sequence[str]) -> Insert:
    """The row ``values``, replacing the one with the same ``keys`` if there is one."""
    statement = _insert(dialect, table).values(dict(values))
    changed = {name: statement.excluded[name] for name in values if name not in keys}
    result: Insert = statement.on_conflict_do_update(index_elements=list(keys), set_=changed)
    return result


def insert_new(dialect: str, table: Table, values: Mapping[str, Any]) -> Insert:
    """The row ``values`` unless one with its key is there already (then nothing changes)."""
    result: Insert = _insert(dialect, table).values(dict(values)).on_conflict_do_nothing()
    return result
