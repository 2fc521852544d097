"""The document lifecycle: insert, save, submit, cancel, delete — validated like Frappe does.

A document is a plain dict: its fields, the standard columns, and one list of row dicts per
table field. Domain rules live in controllers (``demo_erp.controllers``), called at the same
points Frappe calls a DocType controller's hooks.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from demo_erp import permissions
from demo_erp.context import Ctx
from demo_erp.controllers import controller_for
from demo_erp.exceptions import (
    CharacterLengthExceededError,
    DocstatusTransitionError,
    DuplicateEntryError,
    LinkExistsError,
    LinkValidationError,
    MandatoryError,
    TimestampMismatchError,
    UpdateAfterSubmitError,
    ValidationError,
)
from demo_erp.meta import (
    CHILD_STANDARD_FIELDS,
    INT_TYPES,
    NUMERIC_TYPES,
    STANDARD_FIELDS,
    DocField,
    DocType,
    all_doctypes,
    get_meta,
)
from demo_erp.records import load, message, require_meta
from demo_erp.workflow_rules import validate_workflow

Doc = dict[str, Any]
_STATUS_LABEL = {0: "0 (Draft)", 1: "1 (Submitted)", 2: "2 (Cancelled)"}
_DATE_KEYS = ("posting_date", "transaction_date", "attendance_date", "from_date")


@contextmanager
def transaction(conn: sqlite3.Connection, write: bool = True) -> Iterator[None]:
    """One request, one transaction: nothing half-written on error."""
    if conn.in_transaction:
        yield
        return
    conn.execute("begin immediate" if write else "begin")
    try:
        yield
    except BaseException:
        conn.execute("rollback")
        raise
    conn.execute("commit")


# ---------------------------------------------------------------- reading


def strip_hidden(ctx: Ctx, meta: DocType, doc: Doc) -> Doc:
    hidden = permissions.hidden_fields(ctx, meta)
    return {k: v for k, v in doc.items() if k not in hidden}


def get(ctx: Ctx, doctype: str, name: str, ptype: str = "read") -> Doc:
    """A document as this user may see it (Frappe's ``frappe.get_doc`` + ``check_permission``)."""
    meta = require_meta(doctype)
    permissions.check_doctype(ctx, doctype, ptype)
    doc = load(ctx, doctype, name)
    permissions.check_doc(ctx, doctype, ptype, doc)
    return strip_hidden(ctx, meta, doc)


# ---------------------------------------------------------------- naming


def _doc_year(doc: Mapping[str, Any], today: dt.date) -> str:
    for key in _DATE_KEYS:
        value = doc.get(key)
        if value:
            return str(value)[:4]
    return str(today.year)


def next_series(ctx: Ctx, prefix: str, digits: int) -> str:
    row = ctx.conn.execute("select current from __Series where name = ?", (prefix,)).fetchone()
    current = (row["current"] if row else 0) + 1
    ctx.conn.execute(
        "insert into __Series (name, current) values (?, ?) "
        "on conflict(name) do update set current = excluded.current",
        (prefix, current),
    )
    return f"{prefix}{current:0{digits}d}"


def make_name(ctx: Ctx, meta: DocType, doc: Doc) -> str:
    rule = meta.autoname
    if meta.istable or rule == "hash":
        return secrets.token_hex(5)
    kind, _, arg = rule.partition(":")
    if kind == "field":
        value = str(doc.get(arg) or "").strip()
        if not value:
            return ""
        return value
    if kind == "abbr":
        value = str(doc.get(arg) or "").strip()
        company = doc.get("company")
        abbr_row = ctx.conn.execute(
            'select abbr from "tabCompany" where name = ?', (company,)
        ).fetchone()
        return f"{value} - {abbr_row['abbr']}" if abbr_row and value else value
    if kind == "series":
        pattern = arg.replace(".YYYY.", _doc_year(doc, ctx.today))
        head, _, hashes = pattern.rpartition(".")
        return next_series(ctx, head.replace(".", ""), len(hashes) or 5)
    return str(doc.get("name") or "")


# ---------------------------------------------------------------- validation


def _coerce_value(meta: DocType, f: DocField, value: Any, row_label: str) -> Any:
    if value is None or value == "":
        return 0 if f.fieldtype in NUMERIC_TYPES else None
    if f.fieldtype in NUMERIC_TYPES:
        if isinstance(value, bool):
            value = int(value)
        try:
            number = float(value)
        except (TypeError, ValueError) as exc:
            raise ValidationError(
                f"{row_label}{f.label}: '{value}' is not a valid number",
                title="Invalid Value",
            ) from exc
        if f.fieldtype in INT_TYPES:
            return int(number)
        return round(number, 2) if f.fieldtype == "Currency" else number
    if f.fieldtype in ("Date", "Datetime"):
        text = str(value)
        try:
            if f.fieldtype == "Date":
                return dt.date.fromisoformat(text[:10]).isoformat()
            return dt.datetime.fromisoformat(text).isoformat(sep=" ")
        except ValueError as exc:
            raise ValidationError(f"{row_label}{f.label}: '{value}' is not a valid date") from exc
    if isinstance(value, (dict, list)):
        raise ValidationError(
            f"{row_label}{f.label}: a {f.fieldtype} cannot hold {type(value).__name__}"
        )
    text = str(value)
    if f.length and len(text) > f.length:
        raise CharacterLengthExceededError(
            f"{meta.name}: '{f.label}' ({text[:30]}…) will get truncated, as max characters "
            f"allowed is {f.length}",
            title="Value too big",
        )
    if f.fieldtype == "Select" and f.select_options and text not in f.select_options:
        options = ", ".join(o for o in f.select_options if o)
        raise ValidationError(
            f'{row_label}{f.label} cannot be "{text}". It should be one of {options}',
            title="Invalid Value",
        )
    return text


def _clean(meta: DocType, raw: Mapping[str, Any], row_label: str = "") -> Doc:
    """Keep known fields only, coerced to their types (unknown keys are ignored, as in Frappe)."""
    doc: Doc = {}
    for f in meta.fields:
        if f.is_table or f.fieldname not in raw:
            continue
        doc[f.fieldname] = _coerce_value(meta, f, raw[f.fieldname], row_label)
    return doc


def _apply_defaults(meta: DocType, doc: Doc) -> None:
    for f in meta.fields:
        if f.is_table:
            continue
        if doc.get(f.fieldname) in (None, "") and f.default is not None:
            doc[f.fieldname] = _coerce_value(meta, f, f.default, "")
        doc.setdefault(f.fieldname, 0 if f.fieldtype in NUMERIC_TYPES else None)


def _validate_mandatory(meta: DocType, doc: Doc) -> None:
    missing: list[str] = []
    messages: list[dict[str, Any]] = []
    for f in meta.fields:
        if not f.reqd:
            continue
        value = doc.get(f.fieldname)
        if f.is_table:
            if not value:
                missing.append(f.fieldname)
                messages.append(message(f"Error: Data missing in table: {f.label}", indicator=None))
            continue
        if value is None or value == "":
            missing.append(f.fieldname)
            messages.append(
                message(f"Error: Value missing for {meta.name}: {f.label}", indicator=None)
            )
    for table in meta.table_fields:
        child = require_meta(table.options)
        for row in doc.get(table.fieldname) or []:
            for f in child.fields:
                if f.reqd and row.get(f.fieldname) in (None, ""):
                    missing.append(f"{table.fieldname}[{row.get('idx')}].{f.fieldname}")
                    messages.append(
                        message(
                            f"Error: <strong>{child.name}</strong> Row #{row.get('idx')}: "
                            f"Value missing for: {f.label}",
                            indicator=None,
                        )
                    )
    if missing:
        raise MandatoryError(
            f"[{meta.name}, {doc.get('name') or 'new-' + meta.name.lower().replace(' ', '-')}]: "
            + ", ".join(missing),
            messages=messages,
        )


def _validate_links(ctx: Ctx, meta: DocType, doc: Doc, row_label: str = "") -> None:
    for f in meta.fields:
        if f.fieldtype not in ("Link", "Dynamic Link"):
            continue
        value = doc.get(f.fieldname)
        if value in (None, ""):
            continue
        # A Dynamic Link's target DocType is the value of the field its options name.
        target_name = doc.get(f.options) if f.fieldtype == "Dynamic Link" else f.options
        if not target_name or get_meta(str(target_name)) is None:
            raise LinkValidationError(f"{row_label}{f.label}: {target_name} is not a DocType")
        target = require_meta(str(target_name))
        sql = f'select docstatus from "{target.table_name}" where name = ?'
        row = ctx.conn.execute(sql, (value,)).fetchone()
        if row is None:
            raise LinkValidationError(f"Could not find {row_label}{f.label}: {value}")
    for table in meta.table_fields:
        child = require_meta(table.options)
        for row in doc.get(table.fieldname) or []:
            _validate_links(ctx, child, row, f"Row #{row.get('idx')}: ")


def _build_children(meta: DocType, raw: Mapping[str, Any], doc: Doc) -> None:
    for table in meta.table_fields:
        if table.fieldname not in raw:
            doc.setdefault(table.fieldname, [])
            continue
        rows = raw[table.fieldname]
        if rows is None:
            rows = []
        if not isinstance(rows, list):
            raise ValidationError(f"{table.label} must be a list of rows")
        child = require_meta(table.options)
        built = []
        for i, row in enumerate(rows, start=1):
            if not isinstance(row, Mapping):
                raise ValidationError(f"{table.label} Row #{i} must be an object")
            clean = _clean(child, row, f"Row #{i}: ")
            _apply_defaults(child, clean)
            clean["idx"] = i
            if row.get("name"):
                clean["name"] = row["name"]
            built.append(clean)
        doc[table.fieldname] = built


# ---------------------------------------------------------------- writing


def _write(ctx: Ctx, meta: DocType, doc: Doc, is_new: bool) -> None:
    columns = [c for c in meta.column_names if c in doc]
    values = [doc[c] for c in columns]
    quoted = ", ".join(f'"{c}"' for c in columns)
    marks = ", ".join("?" for _ in columns)
    if is_new:
        try:
            ctx.conn.execute(f'insert into "{meta.table_name}" ({quoted}) values ({marks})', values)
        except sqlite3.IntegrityError as exc:
            raise DuplicateEntryError(
                f"{meta.name} {doc['name']} already exists",
                messages=[
                    message(f"{meta.name} {doc['name']} already exists", title="Duplicate Name")
                ],
            ) from exc
    else:
        assignments = ", ".join(f'"{c}" = ?' for c in columns)
        ctx.conn.execute(
            f'update "{meta.table_name}" set {assignments} where name = ?', [*values, doc["name"]]
        )
    for table in meta.table_fields:
        child = require_meta(table.options)
        ctx.conn.execute(
            f'delete from "{child.table_name}" where parent = ? and parentfield = ? and parenttype = ?',
            (doc["name"], table.fieldname, meta.name),
        )
        for row in doc.get(table.fieldname) or []:
            row.update(
                parent=doc["name"],
                parentfield=table.fieldname,
                parenttype=meta.name,
                owner=doc["owner"],
                creation=row.get("creation") or doc["modified"],
                modified=doc["modified"],
                modified_by=doc["modified_by"],
                docstatus=doc["docstatus"],
            )
            row.setdefault("name", secrets.token_hex(5))
            cols = [c for c in child.column_names if c in row]
            ctx.conn.execute(
                f'insert into "{child.table_name}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) '
                f"values ({', '.join('?' for _ in cols)})",
                [row[c] for c in cols],
            )
            row["doctype"] = child.name


def _prepare(
    ctx: Ctx, meta: DocType, doc: Doc, before: Doc | None = None, action: str = "save"
) -> None:
    # Controllers share one class across doctypes, so the document names its own doctype.
    doc["doctype"] = meta.name
    validate_workflow(ctx, doc, before, action)
    controller = controller_for(meta.name)
    controller.validate(ctx, doc)
    _validate_mandatory(meta, doc)
    _validate_links(ctx, meta, doc)


def insert(
    ctx: Ctx, doctype: str, data: Mapping[str, Any], ignore_permissions: bool = False
) -> Doc:
    """Create a document; ``docstatus: 1`` in the payload also submits it, as in Frappe."""
    meta = require_meta(doctype)
    if meta.istable:
        raise ValidationError(f"Cannot insert a child row of {doctype} on its own")
    if not ignore_permissions:
        permissions.check_doctype(ctx, doctype, "create")
    doc = _clean(meta, data)
    _build_children(meta, data, doc)
    _apply_defaults(meta, doc)
    if meta.autoname == "prompt" or data.get("name"):
        doc["name"] = data.get("name") or ""
    wants_submit = int(data.get("docstatus") or 0)
    if wants_submit not in (0, 1) or (wants_submit and not meta.is_submittable):
        raise DocstatusTransitionError(
            f"Cannot change docstatus from 0 (Draft) to {_STATUS_LABEL.get(wants_submit, wants_submit)}"
        )
    now = ctx.now()
    doc.update(owner=ctx.user, creation=now, modified=now, modified_by=ctx.user, docstatus=0, idx=0)
    _prepare(ctx, meta, doc)
    if not doc.get("name"):
        doc["name"] = make_name(ctx, meta, doc)
    if not doc["name"]:
        _validate_mandatory(meta, doc)
        raise ValidationError(f"Name is required for {doctype}")
    if not ignore_permissions and not permissions.matches_user_permissions(ctx, meta, doc):
        permissions.check_doc(ctx, doctype, "create", doc)
    _write(ctx, meta, doc, is_new=True)
    controller_for(meta.name).after_insert(ctx, doc)
    if wants_submit:
        return submit(ctx, doctype, doc["name"], ignore_permissions=ignore_permissions)
    doc["doctype"] = meta.name
    return doc


def _check_update_after_submit(meta: DocType, old: Doc, new: Doc) -> None:
    for f in meta.fields:
        if f.is_table or f.allow_on_submit or f.fieldname not in new:
            continue
        if old.get(f.fieldname) != new.get(f.fieldname):
            raise UpdateAfterSubmitError(
                f"Not allowed to change <strong>{f.label}</strong> after submission from "
                f"<strong>{old.get(f.fieldname)}</strong> to <strong>{new.get(f.fieldname)}</strong>",
                title="Cannot Update After Submit",
            )
    for table in meta.table_fields:
        if table.allow_on_submit:
            continue

        child = require_meta(table.options)
        before = [
            tuple(r.get(f.fieldname) for f in child.data_fields)
            for r in old.get(table.fieldname) or []
        ]
        after = [
            tuple(r.get(f.fieldname) for f in child.data_fields)
            for r in new.get(table.fieldname) or []
        ]
        if before != after:
            raise UpdateAfterSubmitError(
                f"Not allowed to change <strong>{table.label}</strong> after submission",
                title="Cannot Update After Submit",
            )


def check_if_latest(old: Doc, payload_modified: Any) -> None:
    """Frappe's ``check_if_latest``: the version the caller read must be the stored one."""
    if payload_modified is None or str(payload_modified) != str(old.get("modified")):
        raise TimestampMismatchError(
            f"Error: Document has been modified after you have opened it ({old.get('modified')}, "
            f"{payload_modified}). Please refresh to get the latest document.",
            title="Message",
        )


def check_docstatus_transition(stored: int, wanted: int) -> str:
    """Frappe's ``check_docstatus_transition``: the action a save from ``stored`` to ``wanted``
    is (save, submit, update_after_submit, cancel), or its refusal, in Frappe's words."""
    if stored == 0:
        if wanted == 0:
            return "save"
        if wanted == 1:
            return "submit"
        if wanted == 2:
            raise DocstatusTransitionError(
                "Cannot change docstatus from 0 (Draft) to 2 (Cancelled)"
            )
    elif stored == 1:
        if wanted == 1:
            return "update_after_submit"
        if wanted == 2:
            return "cancel"
        if wanted == 0:
            raise DocstatusTransitionError(
                "Cannot change docstatus from 1 (Submitted) to 0 (Draft)"
            )
    elif stored == 2:
        raise ValidationError("Cannot edit cancelled document")
    raise ValidationError("Invalid docstatus")


def save(
    ctx: Ctx,
    doctype: str,
    name: str,
    updates: Mapping[str, Any],
    check_modified: bool = False,
    ignore_permissions: bool = False,
) -> Doc:
    """Update a document, as Frappe's ``Document.save``: ``modified`` in ``updates`` (or
    ``check_modified``) must match the stored one; ``docstatus`` 1 submits, 2 cancels."""
    meta = require_meta(doctype)
    old = load(ctx, doctype, name)
    if not ignore_permissions:
        permissions.check_doctype(ctx, doctype, "write")
        permissions.check_doc(ctx, doctype, "write", old)
    if check_modified or "modified" in updates:
        check_if_latest(old, updates.get("modified"))
    current = int(old["docstatus"])
    target = updates.get("docstatus")
    action = check_docstatus_transition(current, current if target is None else int(target))
    if action == "submit":
        _save_fields(ctx, meta, old, updates, ignore_permissions)
        return submit(ctx, doctype, name, ignore_permissions=ignore_permissions)
    if action == "cancel":
        return cancel(ctx, doctype, name, ignore_permissions=ignore_permissions)
    return _save_fields(ctx, meta, old, updates, ignore_permissions)


def _save_fields(
    ctx: Ctx, meta: DocType, old: Doc, updates: Mapping[str, Any], ignore_permissions: bool
) -> Doc:
    if int(old["docstatus"]) == 2:
        raise ValidationError("Cannot edit cancelled document")
    writable = permissions.writable_permlevels(ctx, meta)
    changes = _clean(meta, updates)
    if not ignore_permissions:
        # Fields above the user's write level keep their stored value, as in Frappe.
        changes = {
            k: v
            for k, v in changes.items()
            if (meta.get_field(k) or meta.fields[0]).permlevel in writable
        }
    new = {**old, **changes}
    _build_children(
        meta,
        {k: v for k, v in updates.items() if k in {t.fieldname for t in meta.table_fields}},
        new,
    )
    if int(old["docstatus"]) == 1:
        _check_update_after_submit(meta, old, new)
        validate_workflow(ctx, new, old, "update_after_submit")
        controller_for(meta.name).on_update_after_submit(ctx, old, new)
    else:
        _prepare(ctx, meta, new, old)
    new.update(modified=ctx.now(), modified_by=ctx.user)
    if not ignore_permissions and not permissions.matches_user_permissions(ctx, meta, new):
        permissions.check_doc(ctx, meta.name, "write", new)
    _write(ctx, meta, new, is_new=False)
    new["doctype"] = meta.name
    return new


def submit(ctx: Ctx, doctype: str, name: str, ignore_permissions: bool = False) -> Doc:
    meta = require_meta(doctype)
    doc = load(ctx, doctype, name)
    if not meta.is_submittable:
        raise ValidationError(f"Cannot submit {doctype}: it is not a submittable document type")
    if not ignore_permissions:
        permissions.check_doctype(ctx, doctype, "submit")
        permissions.check_doc(ctx, doctype, "submit", doc)
    if check_docstatus_transition(int(doc["docstatus"]), 1) == "update_after_submit":
        # Frappe's submit() of a submitted document is a save after submit: nothing but
        # ``modified`` changes, and no error is raised.
        return _save_fields(ctx, meta, doc, {}, ignore_permissions)
    post_submit(ctx, meta, doc)
    _write(ctx, meta, doc, is_new=False)
    controller_for(doctype).after_submit(ctx, doc)
    return load(ctx, doctype, name)


def post_submit(ctx: Ctx, meta: DocType, doc: Doc) -> None:
    """What a submit does to a loaded draft before the document itself is written: validate
    it again, ``before_submit``, docstatus 1 and ``on_submit`` (the ledgers are posted). The
    ledger previews run exactly this inside a savepoint they roll back."""
    controller = controller_for(meta.name)
    _prepare(ctx, meta, doc, dict(doc), "submit")
    controller.before_submit(ctx, doc)
    doc.update(docstatus=1, modified=ctx.now(), modified_by=ctx.user)
    controller.on_submit(ctx, doc)


def cancel(ctx: Ctx, doctype: str, name: str, ignore_permissions: bool = False) -> Doc:
    meta = require_meta(doctype)
    doc = load(ctx, doctype, name)
    if not ignore_permissions:
        permissions.check_doctype(ctx, doctype, "cancel")
        permissions.check_doc(ctx, doctype, "cancel", doc)
    check_docstatus_transition(int(doc["docstatus"]), 2)
    linked = submitted_links(ctx, doctype, name)
    if linked:  # Frappe's check_no_back_links_exist: a submitted document still points here
        raise LinkExistsError(link_exists_message(doctype, name, *linked[0]))
    validate_workflow(ctx, doc, dict(doc), "cancel")
    doc.update(docstatus=2, modified=ctx.now(), modified_by=ctx.user)
    controller_for(doctype).on_cancel(ctx, doc)
    _write(ctx, meta, doc, is_new=False)
    return load(ctx, doctype, name)


def _desk(doctype: str, name: str) -> str:
    return f'<a href="/app/{doctype.lower().replace(" ", "-")}/{name}">{name}</a>'


def link_exists_message(doctype: str, name: str, linked_doctype: str, linked_name: str) -> str:
    """Frappe's LinkExistsError, in its words (``raise_link_exists_exception``)."""
    return (
        f"Cannot delete or cancel because {doctype} {_desk(doctype, name)} "
        f"is linked with {linked_doctype} {_desk(linked_doctype, linked_name)}"
    )


def submitted_links(ctx: Ctx, doctype: str, name: str) -> list[tuple[str, str]]:
    """The submitted documents that point at ``doctype`` ``name`` through a Link field of
    theirs or of one of their rows (Frappe's ``check_if_doc_is_linked`` for a cancel: a
    cancel is refused while any is submitted; ``amended_from`` does not count)."""
    found: list[tuple[str, str]] = []
    for other in all_doctypes().values():
        for f in other.link_fields(doctype):
            if f.fieldname == "amended_from":
                continue
            if other.istable:
                sql = f'select distinct parenttype, parent from "{other.table_name}" where "{f.fieldname}" = ?'
                pairs = [(str(r[0]), str(r[1])) for r in ctx.conn.execute(sql, (name,))]
            else:
                sql = f'select name from "{other.table_name}" where "{f.fieldname}" = ? and docstatus = 1'
                pairs = [(other.name, str(r[0])) for r in ctx.conn.execute(sql, (name,))]
            for pair in pairs:
                if pair == (doctype, name) or pair in found:
                    continue
                if other.istable:
                    parent = require_meta(pair[0])
                    row = ctx.conn.execute(
                        f'select docstatus from "{parent.table_name}" where name = ?', (pair[1],)
                    ).fetchone()
                    if row is None or int(row[0] or 0) != 1:
                        continue
                found.append(pair)
    return found


def _linked_from(ctx: Ctx, doctype: str, name: str) -> tuple[str, str] | None:
    for other in all_doctypes().values():
        for f in other.link_fields(doctype):
            sql = f'select {"parenttype, parent" if other.istable else "?, name"} from "{other.table_name}" where "{f.fieldname}" = ? limit 1'
            params: list[Any] = [name] if other.istable else [other.name, name]
            row = ctx.conn.execute(sql, params).fetchone()
            if row is not None and not (other.name == doctype and row[1] == name):
                return str(row[0]), str(row[1])
    return None


def delete(ctx: Ctx, doctype: str, name: str, ignore_permissions: bool = False) -> None:
    """Delete a draft or master; a Deleted Document row keeps what was removed."""
    meta = require_meta(doctype)
    doc = load(ctx, doctype, name)
    if not ignore_permissions:
        permissions.check_doctype(ctx, doctype, "delete")
        permissions.check_doc(ctx, doctype, "delete", doc)
    if int(doc["docstatus"]) == 1:
        raise ValidationError(
            f"{doctype} {name}: Submitted Record cannot be deleted. You must Cancel it first."
        )
    linked = _linked_from(ctx, doctype, name)
    if linked:
        raise LinkExistsError(
            f'Cannot delete or cancel because {doctype} <a href="/app/{doctype.lower().replace(" ", "-")}/{name}">{name}</a> '
            f'is linked with {linked[0]} <a href="/app/{linked[0].lower().replace(" ", "-")}/{linked[1]}">{linked[1]}</a>',
            title="Cannot delete or cancel",
        )
    now = ctx.now()
    ctx.conn.execute(
        'insert into "tabDeleted Document" (name, owner, creation, modified, modified_by, docstatus, '
        "idx, deleted_name, deleted_doctype, restored, data) values (?, ?, ?, ?, ?, 0, 0, ?, ?, 0, ?)",
        (
            secrets.token_hex(5),
            ctx.user,
            now,
            now,
            ctx.user,
            name,
            doctype,
            json.dumps(doc, default=str),
        ),
    )
    ctx.conn.execute(f'delete from "{meta.table_name}" where name = ?', (name,))
    for table in meta.table_fields:
        child = require_meta(table.options)
        ctx.conn.execute(
            f'delete from "{child.table_name}" where parent = ? and parenttype = ?', (name, doctype)
        )


__all__ = [
    "CHILD_STANDARD_FIELDS",
    "STANDARD_FIELDS",
    "Doc",
    "cancel",
    "delete",
    "get",
    "insert",
    "save",
    "submit",
    "transaction",
]
