"""Renaming (and merging) a document, as Frappe's ``frappe.model.rename_doc`` does it.

The checks run in Frappe's order and fail with its words (``validate_rename`` and
``validate_name``): the old name must exist, the new one must differ and be free (or, to merge,
exist), the user needs write permission on the document (and on the target, to merge), and the
DocType must allow renaming. Then the row and its child rows take the new name, a ``field:``
autoname field follows it, and every Link and Dynamic Link that pointed at the old name points
at the new one, without touching ``modified``.
"""

from __future__ import annotations

import re

from demo_erp import documents, permissions, records
from demo_erp.context import Ctx
from demo_erp.exceptions import NameError, ValidationError
from demo_erp.meta import DocType, all_doctypes

# ERPNext declares these as Dynamic Links; the demo's DocTypes keep them as plain Data fields
# beside the field that names the target DocType. A rename follows them all the same.
_TYPED_REFERENCES = (
    ("party", "party_type"),
    ("party_name", "opportunity_from"),
    ("link_name", "link_doctype"),
    ("for_value", "allow"),
)


def validate_name(doctype: str, name: str) -> str:
    """Frappe's ``frappe.model.naming.validate_name``."""
    if not name:
        raise ValidationError(f"No Name Specified for {doctype}")
    if name.startswith(f"New {doctype}"):
        raise NameError("There were some errors setting the name, please contact the administrator")
    name = name.strip()
    if name == doctype:
        raise NameError(f"Name of {doctype} cannot be {name}")
    if re.search(r"[<>]", name):
        raise NameError("Name cannot contain special characters like '<', '>'")
    return name


def _validate(ctx: Ctx, meta: DocType, old: str, new: str, merge: bool) -> str:
    exists = records.exists(ctx, meta.name, new)
    if not records.exists(ctx, meta.name, old):
        raise ValidationError(f"Can't rename {old} to {new} because {old} doesn't exist.")
    if old == new:
        raise ValidationError("No changes made because old and new name are the same.")
    if merge and not exists:
        raise ValidationError(f"{meta.name} {new} does not exist, select a new target to merge")
    if not merge and exists:
        raise ValidationError(f"Another {meta.name} with name {new} exists, select another name")
    if not permissions.has_permission(ctx, meta.name, "write", records.load(ctx, meta.name, old)):
        raise ValidationError(f"You need write permission on {meta.name} {old} to rename")
    if merge and not permissions.has_permission(
        ctx, meta.name, "write", records.load(ctx, meta.name, new)
    ):
        raise ValidationError(f"You need write permission on {meta.name} {new} to merge")
    if not meta.allow_rename:
        raise ValidationError(f"{meta.name} not allowed to be renamed")
    return validate_name(meta.name, new)


def _move_row(ctx: Ctx, meta: DocType, old: str, new: str) -> None:
    ctx.conn.execute(f'update "{meta.table_name}" set name = ? where name = ?', (new, old))
    kind, _, field = meta.autoname.partition(":")
    if kind == "field" and meta.get_field(field) is not None:
        ctx.conn.execute(f'update "{meta.table_name}" set "{field}" = ? where name = ?', (new, new))
    for table in meta.table_fields:
        child = records.require_meta(table.options)
        ctx.conn.execute(
            f'update "{child.table_name}" set parent = ? where parent = ? and parenttype = ?',
            (new, old, meta.name),
        )


def _repoint_links(ctx: Ctx, doctype: str, old: str, new: str) -> None:
    for other in all_doctypes().values():
        for f in other.link_fields(doctype):
            ctx.conn.execute(
                f'update "{other.table_name}" set "{f.fieldname}" = ? where "{f.fieldname}" = ?',
                (new, old),
            )
        typed = [(f.fieldname, f.options) for f in other.fields if f.fieldtype == "Dynamic Link"]
        typed += [
            (value, kind)
            for value, kind in _TYPED_REFERENCES
            if other.get_field(value) is not None and other.get_field(kind) is not None
        ]
        for value, kind in typed:
            ctx.conn.execute(
                f'update "{other.table_name}" set "{value}" = ? '
                f'where "{value}" = ? and "{kind}" = ?',
                (new, old, doctype),
            )


def rename_doc(ctx: Ctx, doctype: str, old: str, new: str, merge: bool = False) -> str:
    """Rename ``old`` to ``new`` (or merge it into the existing ``new``) as the user."""
    meta = records.require_meta(doctype)
    new = _validate(ctx, meta, old, new, merge)
    if not merge:
        _move_row(ctx, meta, old, new)
    _repoint_links(ctx, doctype, old, new)
    if merge:
        documents.delete(ctx, doctype, old)
    ctx.messages.append(
        {
            "message": f"Document renamed from <strong>{old}</strong> to <strong>{new}</strong>",
            "title": "Message",
            "indicator": "green",
            "alert": 1,
        }
    )
    return new
