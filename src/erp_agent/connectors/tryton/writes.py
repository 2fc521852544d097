"""Writes, lifecycle moves and delta sync against Tryton, as the user.

A write to an existing record carries, in the context, the ``_timestamp`` of the version the
user saw (Tryton's own optimistic lock): a record changed since is refused by Tryton in its own
words ("Records were modified in the meanwhile"). Lifecycle moves click the model's buttons
(``post``, ``quote``, ``confirm``, ``cancel``), which Tryton checks against the user's groups.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from erp_agent.connectors.base import ChangeSet, Record
from erp_agent.connectors.tryton.native import Native, coerce, plain, refuse
from erp_agent.connectors.tryton.native import native_values as _canonical_to_native

if TYPE_CHECKING:
    from erp_agent.connectors.credentials import Credential
    from erp_agent.connectors.tryton.seam import Tryton

_CODED = re.compile(r"\[(.+?)\] .+")  # a product's rec_name: "[W-100] Widget"


async def resolve(connector: Tryton, cred: Credential, relation: str, value: Any) -> Any:
    """A link given by name (a party, a product) as Tryton's id, found as the user."""
    if not isinstance(value, str) or value.isdigit():
        return int(value) if isinstance(value, str) else value

    async def search(domain: list[Any], limit: int) -> list[int]:
        return list(await connector.rpc(cred, f"{relation}.search", domain, 0, limit, None))

    ids = await search([("rec_name", "=", value)], 2)
    coded = _CODED.fullmatch(value)
    if len(ids) != 1 and coded:
        value = coded.group(1)
        ids = await search([("rec_name", "=", value)], 2)
    if len(ids) != 1:
        ids = await search([("rec_name", "ilike", f"%{value}%")], 3)
    if len(ids) != 1:
        many = "several records" if ids else "no record"
        raise refuse(f"{value!r} matches {many} of {relation} you can see; name it exactly.")
    return int(ids[0])


async def native_values(
    connector: Tryton, cred: Credential, native: Native, values: Mapping[str, Any]
) -> dict[str, Any]:
    """Canonical scalar values in Tryton's names, links resolved to ids as the user."""
    out = _canonical_to_native(native, values)
    for fname in list(out):
        meta = native.fields.get(fname, {})
        if meta.get("type") == "many2one":
            out[fname] = await resolve(connector, cred, str(meta["relation"]), out[fname])
    return out


async def stamp(
    connector: Tryton, cred: Credential, native: Native, rid: int, seen: str | None,
    versions: MutableMapping[tuple[str, int, str], str],
) -> dict[str, Any]:  # fmt: skip
    """The context that makes Tryton refuse a write to a record changed since ``seen`` (the
    ``modified`` the user read): the ``_timestamp`` Tryton gave with that version."""
    if seen is None:
        return {}
    known = versions.get((native.model, rid, seen))
    if known is None:
        rows = await connector.rpc(cred, f"{native.model}.read", [rid],
                                   ["_timestamp", "write_date", "create_date"])  # fmt: skip
        current = plain(rows[0].get("write_date") or rows[0].get("create_date"))
        # Unchanged: its current version; changed: the version the user saw, which Tryton
        # refuses in its own words.
        known = str(rows[0]["_timestamp"]) if current == seen else seen
    return {"_timestamp": {f"{native.model},{rid}": known}}


async def click(
    connector: Tryton, cred: Credential, entity: str, record_id: str, action: str,
    modified: str | None,
) -> Record:  # fmt: skip
    """Move a document through its lifecycle with the model's own button."""
    native = await connector._native(cred, entity)
    if native.emap.lifecycle is None or action not in native.emap.lifecycle.buttons:
        raise refuse(f"{native.entity.label} has no {action} in Tryton.")
    rid = await connector._resolve_id(cred, native, record_id)
    if modified is not None:
        current = await connector.version(cred, entity, str(rid))
        if current is not None and current.modified != modified:
            # Tryton's buttons check no version; an empty write with the seen one does.
            context = await connector._timestamp(cred, native, rid, modified)
            await connector.rpc(
                cred, f"{native.model}.write", [rid], {}, write=True, context=context
            )
    button = native.emap.lifecycle.buttons[action]
    await connector.rpc(cred, f"{native.model}.{button}", [rid], write=True)
    return await connector.get(cred, entity, str(rid))


async def changes(
    connector: Tryton, cred: Credential, native: Native, watermark: str | None,
    limit: int,
) -> ChangeSet:  # fmt: skip
    """Records written or created since ``watermark`` (Tryton's ``write_date`` and
    ``create_date``), oldest first. Tryton keeps no tombstones a user can read: deletions are
    not reported."""
    domain = native.domain([])
    if watermark is not None:
        when = coerce("datetime", watermark)
        domain += [["OR", ("write_date", ">=", when),
                    [("write_date", "=", None), ("create_date", ">=", when)]]]  # fmt: skip
    names = list(dict.fromkeys(["id", *native.scalars(), "modified"]))
    # Every change since the watermark, ordered by when it happened (write, else create):
    # Tryton orders by one column only, so the order is made here.
    records = await connector._all(cred, native, domain, names)
    records.sort(key=lambda r: (str(r.get("modified") or ""), str(r["id"])))
    complete = len(records) <= limit
    records = records[:limit]
    for record in records:
        record["_modified"] = record.get("modified")
    marks = [str(r["modified"]) for r in records if r.get("modified")]
    mark = max(marks) if marks else watermark
    if not complete and records:
        mark = str(records[-1]["modified"])
    return ChangeSet(records, [], mark, complete)
