"""A document's rows read and written directly, as Frappe's ``frappe.db`` does: no permission
check, no validation, no lifecycle. Below the document lifecycle (``documents``) and the workflow
rules it applies on every save (``workflow_rules``), which both read documents."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from demo_erp.context import Ctx
from demo_erp.exceptions import DoesNotExistError
from demo_erp.meta import DocType, get_meta

Doc = dict[str, Any]


def require_meta(doctype: str) -> DocType:
    meta = get_meta(doctype)
    if meta is None:
        raise DoesNotExistError(f"DocType {doctype} not found")
    return meta


def message(message: str, title: str = "Message", indicator: str | None = "red") -> dict[str, Any]:
    out: dict[str, Any] = {"message": message, "title": title}
    if indicator:
        out["indicator"] = indicator
        out["raise_exception"] = 1
    return out


def _row_to_dict(meta: DocType, row: sqlite3.Row) -> Doc:
    doc = dict(row)
    doc["doctype"] = meta.name
    return doc


def load(ctx: Ctx, doctype: str, name: str) -> Doc:
    """The whole document with its child rows, without any permission check."""
    meta = require_meta(doctype)
    row = ctx.conn.execute(f'select * from "{meta.table_name}" where name = ?', (name,)).fetchone()
    if row is None:
        raise DoesNotExistError(
            f"{doctype} {name} not found", messages=[message(f"{doctype} {name} not found")]
        )
    doc = _row_to_dict(meta, row)
    for table in meta.table_fields:
        child = require_meta(table.options)
        rows = ctx.conn.execute(
            f'select * from "{child.table_name}" where parent = ? and parentfield = ? '
            "and parenttype = ? order by idx",
            (name, table.fieldname, doctype),
        ).fetchall()
        doc[table.fieldname] = [_row_to_dict(child, r) for r in rows]
    return doc


def exists(ctx: Ctx, doctype: str, name: str) -> bool:
    meta = require_meta(doctype)
    sql = f'select 1 from "{meta.table_name}" where name = ?'
    return ctx.conn.execute(sql, (name,)).fetchone() is not None


def db_set(ctx: Ctx, doctype: str, name: str, values: Mapping[str, Any]) -> None:
    """Set columns directly (Frappe's ``db_set``): no validation, but ``modified`` moves on."""
    meta = require_meta(doctype)
    updates = dict(values)
    updates["modified"] = ctx.now()
    updates["modified_by"] = ctx.user
    assignments = ", ".join(f'"{c}" = ?' for c in updates)
    ctx.conn.execute(
        f'update "{meta.table_name}" set {assignments} where name = ?', [*updates.values(), name]
    )
