"""Role permissions, user permissions and field levels, as Frappe applies them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from demo_erp.context import AUTOMATIC_ROLES, Ctx
from demo_erp.exceptions import PermissionError
from demo_erp.meta import DocType, get_meta

_READ_LIKE = {"read", "select"}


def _rights(ctx: Ctx, meta: DocType, permlevel: int = 0) -> tuple[set[str], set[str]]:
    """(rights on any document, rights only on documents the user owns)."""
    rights: set[str] = set()
    owner_rights: set[str] = set()
    for perm in meta.permissions:
        if perm.permlevel != permlevel or perm.role not in ctx.roles:
            continue
        (owner_rights if perm.if_owner else rights).update(perm.rights)
    return rights, owner_rights


def _ptype(ptype: str) -> str:
    return "read" if ptype in _READ_LIKE else ptype


def has_doctype_permission(ctx: Ctx, meta: DocType, ptype: str) -> bool:
    if ctx.is_admin:
        return True
    rights, owner_rights = _rights(ctx, meta)
    ptype = _ptype(ptype)
    return ptype in rights or ptype in owner_rights


def owner_only(ctx: Ctx, meta: DocType, ptype: str) -> bool:
    """True when the user holds ``ptype`` only through if_owner rows."""
    if ctx.is_admin:
        return False
    rights, owner_rights = _rights(ctx, meta)
    ptype = _ptype(ptype)
    return ptype not in rights and ptype in owner_rights


def matches_user_permissions(ctx: Ctx, meta: DocType, doc: Mapping[str, Any]) -> bool:
    allowed = ctx.user_permissions()
    if not allowed or ctx.is_admin:
        return True
    if meta.name in allowed and doc.get("name") not in allowed[meta.name]:
        return False
    for target, values in allowed.items():
        for f in meta.restricted_links(target):
            value = doc.get(f.fieldname)
            if value and value not in values:
                return False
    return True


def _todo_unrestricted(ctx: Ctx, ptype: str = "read") -> bool:
    """Frappe's ToDo hooks: a role granted ToDo rights other than the automatic ones (All,
    Guest) sees every ToDo; everyone else only those allocated to them or assigned by them."""
    meta = get_meta("ToDo")
    granted = {p.role for p in (meta.permissions if meta else ()) if _ptype(ptype) in p.rights}
    return ctx.is_admin or bool((granted - set(AUTOMATIC_ROLES)) & ctx.roles)


def has_permission(
    ctx: Ctx, doctype: str, ptype: str, doc: Mapping[str, Any] | None = None
) -> bool:
    meta = get_meta(doctype)
    if meta is None:
        return False
    if not has_doctype_permission(ctx, meta, ptype):
        return False
    if doc is None or ctx.is_admin:
        return True
    if owner_only(ctx, meta, ptype) and doc.get("owner") != ctx.user:
        return False
    mine = ctx.user in (doc.get("allocated_to"), doc.get("assigned_by"))
    if doctype == "ToDo" and not mine and not _todo_unrestricted(ctx, ptype):
        return False
    return matches_user_permissions(ctx, meta, doc)


def doctype_denied(ctx: Ctx, doctype: str) -> PermissionError:
    return PermissionError(
        "",
        messages=[
            {
                "message": f"User <strong>{ctx.user}</strong> does not have doctype access via "
                f"role permission for document <strong>{doctype}</strong>",
                "title": "Message",
            }
        ],
        error_message=f"No permission for {doctype}",
    )


def check_doctype(ctx: Ctx, doctype: str, ptype: str) -> None:
    meta = get_meta(doctype)
    if meta is None or not has_doctype_permission(ctx, meta, ptype):
        if _ptype(ptype) == "read":
            raise doctype_denied(ctx, doctype)
        raise PermissionError(
            f"No permission to {ptype} {doctype}",
            error_message=f"Insufficient Permission for {doctype}",
        )


def check_doc(ctx: Ctx, doctype: str, ptype: str, doc: Mapping[str, Any]) -> None:
    """Raise Frappe's PermissionError when the user may not ``ptype`` this document."""
    if has_permission(ctx, doctype, ptype, doc):
        return
    name = doc.get("name") or ""
    if _ptype(ptype) == "read":
        raise PermissionError(
            f"User {ctx.user} does not have access to this document",
            messages=[
                {
                    "message": f"User <strong>{ctx.user}</strong> does not have access to "
                    f"this document: {doctype} - {name}",
                    "title": "Message",
                }
            ],
            error_message=f"No permission for {doctype}",
        )
    raise PermissionError(
        f"No permission to {ptype} {doctype} {name}",
        error_message=f"You need the '{ptype}' permission on <strong>{doctype}</strong> "
        f"{name} to perform this action.",
    )


def readable_permlevels(ctx: Ctx, meta: DocType) -> set[int]:
    if ctx.is_admin:
        return {f.permlevel for f in meta.fields} | {0}
    levels = {0}
    for perm in meta.permissions:
        if perm.role in ctx.roles and "read" in perm.rights:
            levels.add(perm.permlevel)
    return levels


def writable_permlevels(ctx: Ctx, meta: DocType) -> set[int]:
    if ctx.is_admin:
        return {f.permlevel for f in meta.fields} | {0}
    levels = set()
    for perm in meta.permissions:
        if perm.role in ctx.roles and "write" in perm.rights:
            levels.add(perm.permlevel)
    return levels | {0}


def hidden_fields(ctx: Ctx, meta: DocType) -> set[str]:
    """Fields the user may not read (their permlevel is not granted): silently removed."""
    levels = readable_permlevels(ctx, meta)
    return {f.fieldname for f in meta.fields if f.permlevel not in levels}


def list_conditions(ctx: Ctx, meta: DocType, alias: str) -> tuple[list[str], list[Any]]:
    """SQL conditions that restrict a list to the rows this user may see."""
    conds: list[str] = []
    params: list[Any] = []
    if ctx.is_admin:
        return conds, params
    if owner_only(ctx, meta, "read"):
        conds.append(f"{alias}.owner = ?")
        params.append(ctx.user)
    if meta.name == "ToDo" and not _todo_unrestricted(ctx):
        conds.append(f"({alias}.allocated_to = ? or {alias}.assigned_by = ?)")
        params.extend([ctx.user, ctx.user])
    for target, values in ctx.user_permissions().items():
        placeholders = ", ".join("?" for _ in values)
        if target == meta.name:
            conds.append(f"{alias}.name in ({placeholders})")
            params.extend(sorted(values))
        for f in meta.restricted_links(target):
            conds.append(
                f"(ifnull({alias}.\"{f.fieldname}\", '') = '' or "
                f'{alias}."{f.fieldname}" in ({placeholders}))'
            )
            params.extend(sorted(values))
    return conds, params
