"""Delta sync of the sql connector: rows changed since an ``updated_at`` watermark and ids
deleted since it (a ``deleted_at`` column or a tombstones table) — both in the principal's scope."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from erp_agent.connectors.base import ChangeSet, Record
from erp_agent.connectors.sql.principals import Principal
from erp_agent.connectors.sql.statements import Bound, coerce, plain


def changed(
    b: Bound, principal: Principal, names: Sequence[str], watermark: str | None, limit: int
) -> sa.Select[Any]:
    """Rows modified at or after the watermark, oldest first (ties are read again: upserts
    downstream are idempotent)."""
    version = b.table.c[str(b.spec.modified)]
    where = b.scope(principal)
    if watermark:
        where.append(version >= coerce(version, watermark, "watermark"))
    return (
        sa.select(*(b.column(n).label(n) for n in names), version.label("_modified"))
        .where(*where).order_by(version, b.id_column()).limit(limit + 1)
    )  # fmt: skip


def tombstones(
    b: Bound, tables: dict[str, sa.Table], principal: Principal, watermark: str | None
) -> sa.Select[Any] | None:
    """Ids deleted since the watermark, in the principal's scope."""
    if b.spec.deleted is not None:
        at = b.table.c[b.spec.deleted]
        where = [*b.scope(principal, live=False), at.is_not(None)]
        if watermark:
            where.append(at >= coerce(at, watermark, "watermark"))
        return sa.select(b.id_column(), at).where(*where)
    if b.spec.tombstones is not None:
        spec = b.spec.tombstones
        table = tables[spec.table]
        at = table.c[spec.at]
        where = [
            table.c[spec.entity_column] == sa.bindparam("tomb_table", b.spec.table),
            table.c[spec.tenant] == sa.bindparam("tomb_tenant", principal.tenant),
        ]
        if watermark:
            where.append(at >= coerce(at, watermark, "watermark"))
        return sa.select(table.c[spec.id], at).where(*where).order_by(at)
    return None


def change_set(
    rows: list[dict[str, Any]],
    gone: list[tuple[str, Any]],
    watermark: str | None,
    limit: int,
    record: Callable[[dict[str, Any]], Record],
) -> ChangeSet:
    complete = len(rows) <= limit
    rows = rows[:limit]
    marks = [str(plain(r["_modified"])) for r in rows] + [str(plain(at)) for _, at in gone]
    mark = max(marks) if marks else watermark
    if not complete and rows:
        mark = str(plain(rows[-1]["_modified"]))
    records = [{**record(r), "_modified": plain(r["_modified"])} for r in rows]
    return ChangeSet(records, [i for i, _ in gone], mark, complete)
