"""A Frappe user's data scope beyond roles: User Permissions, shared documents, "if owner" rules.

All three are read as the user (Frappe answers each user about themselves). A part the ERP
will not tell this user makes the scope unknown (None), never empty: the caller then treats
the user as one of a kind.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient
from erp_agent.connectors.scope import DataScope
from erp_agent.errors import ErpError, ErpRefusal

_USER_PERMISSIONS = "frappe.core.doctype.user_permission.user_permission.get_user_permissions"
_NOT_FOUND = {"DoesNotExistError"}
META_TTL = 600.0  # seconds a DocType's permission rows are reused (they change with a deploy)


def _restriction(allow: str, row: Mapping[str, Any]) -> str:
    # A permission that applies to one DocType only is a different restriction from one that
    # applies to all: the same value, other documents visible.
    applicable = row.get("applicable_for")
    return f"{allow} (for {applicable})" if applicable else allow


async def data_scope(client: FrappeClient, cred: Credential) -> DataScope | None:
    try:
        permissions = await client.method(cred, _USER_PERMISSIONS)
    except ErpError:
        return None
    if not isinstance(permissions, Mapping):
        return None
    restrictions: dict[str, set[str]] = {}
    for allow, rows in permissions.items():
        if not isinstance(rows, list):
            return None
        for row in rows:
            if not isinstance(row, Mapping) or "doc" not in row:
                return None
            restrictions.setdefault(_restriction(str(allow), row), set()).add(str(row["doc"]))
    shared = await _shared_documents(client, cred)
    if shared is None:
        return None
    for doctype, name in shared:
        restrictions.setdefault(f"shared {doctype}", set()).add(name)
    return DataScope.of(restrictions)


async def _shared_documents(client: FrappeClient, cred: Credential) -> list[tuple[str, str]] | None:
    """Documents shared with this user alone (Frappe's DocShare): each widens what they see.
    A site without sharing has none; a site that will not list them to the user → unknown."""
    try:
        rows = await client.get_list(
            cred,
            "DocShare",
            fields=["share_doctype", "share_name"],
            filters=[["user", "=", cred.user], ["read", "=", 1]],
            page_length=0,
        )
    except ErpRefusal as exc:
        return [] if exc.refusal.exc_type in _NOT_FOUND else None
    except ErpError:
        return None
    return [(str(r.get("share_doctype")), str(r.get("share_name"))) for r in rows]


class OwnerRules:
    """Which DocTypes a set of roles reads only through "if owner" permission rows, from the
    DocType's own permission rows (``getdoctype``, what the desk computes rights from)."""

    def __init__(self, client: FrappeClient) -> None:
        self.client = client
        self._perms: dict[str, tuple[float, list[Mapping[str, Any]]]] = {}

    async def _rows(self, cred: Credential, doctype: str) -> list[Mapping[str, Any]] | None:
        found = self._perms.get(doctype)
        if found is not None and found[0] > time.monotonic():
            return found[1]
        try:
            docs = await self.client.getdoctype(cred, doctype)
        except ErpError:
            return None
        meta = next((d for d in docs if isinstance(d, Mapping) and d.get("name") == doctype), None)
        rows = meta.get("permissions") if meta is not None else None
        if not isinstance(rows, list):
            return None
        kept = [r for r in rows if isinstance(r, Mapping)]
        self._perms[doctype] = (time.monotonic() + META_TTL, kept)
        return kept

    async def owner_only(
        self, cred: Credential, roles: frozenset[str], doctypes: Mapping[str, str]
    ) -> frozenset[str] | None:
        """The entities (of ``doctypes``: entity → DocType) these roles read only their own
        records of; None when a DocType's rules could not be read."""
        out: set[str] = set()
        for entity, doctype in doctypes.items():
            rows = await self._rows(cred, doctype)
            if rows is None:
                return None
            reads = [
                r
                for r in rows
                if r.get("role") in roles and not r.get("permlevel") and r.get("read")
            ]
            if reads and all(r.get("if_owner") for r in reads):
                out.add(entity)
        return frozenset(out)
