"""Pieces both SQL backends share: row <-> Document, and the scope as a WHERE clause."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from erp_agent.retrieval.documents import Document, Kind, Scope
from erp_agent.retrieval.text import identifier_tokens

COLUMNS = (
    "key", "kind", "tenant", "title", "body", "company", "branch", "entity", "record_id",
    "date", "link", "module", "parent", "metadata",
)  # fmt: skip


def ident(doc: Document) -> str | None:
    """The compact record id, for the exact-id leg."""
    found = identifier_tokens(doc.record_id or "")
    return found[0] if found else (doc.record_id or "").lower() or None


def id_terms(doc: Document) -> str:
    """Compact forms of every id the document mentions: one exact keyword each."""
    return " ".join(identifier_tokens(f"{doc.record_id or ''} {doc.title} {doc.text}"))


def checksum(values: Mapping[str, Any]) -> str:
    """What decides whether a stored row must be rewritten: every column but the record's
    ``modified`` stamp (a save that changes nothing shown costs no write and no embedding)."""
    meta = json.loads(values["metadata"])
    meta.pop("modified", None)
    shown = {k: v for k, v in values.items() if k not in ("metadata", "checksum")}
    data = json.dumps([shown, meta], sort_keys=True, default=str)
    return hashlib.sha1(data.encode()).hexdigest()


def row_values(doc: Document) -> dict[str, Any]:
    values = {
        "key": doc.key,
        "kind": str(doc.kind),
        "tenant": doc.tenant,
        "title": doc.title,
        "body": doc.text,
        "company": doc.company,
        "branch": doc.branch,
        "entity": doc.entity,
        "record_id": doc.record_id,
        "date": doc.date.isoformat() if doc.date else None,
        "link": doc.link,
        "module": doc.module,
        "parent": doc.parent,
        "metadata": json.dumps(doc.metadata, sort_keys=True, default=str),
        "ident": ident(doc),
        "ids": id_terms(doc),
    }
    values["checksum"] = checksum(values)
    return values


def to_document(row: Mapping[str, Any]) -> Document:
    date = row["date"]
    if isinstance(date, str):
        date = dt.date.fromisoformat(date)
    meta = row["metadata"]
    return Document(
        key=row["key"],
        kind=Kind(row["kind"]),
        tenant=row["tenant"],
        title=row["title"],
        text=row["body"],
        company=row["company"],
        branch=row["branch"],
        entity=row["entity"],
        record_id=row["record_id"],
        date=date,
        link=row["link"],
        module=row["module"],
        parent=row["parent"],
        metadata=json.loads(meta) if isinstance(meta, str) else dict(meta or {}),
    )


def scope_where(
    scope: Scope, alias: str, param: Callable[[Any], str], in_list: Callable[[list[str]], str]
) -> str:
    """The scope as SQL conditions on table ``alias``; ``param`` adds one bound value and returns
    its placeholder, ``in_list`` renders ``IN (...)`` for a list of values."""
    a = alias
    parts = [f"{a}.tenant = {param(scope.tenant)}"]
    if scope.kinds is not None:
        parts.append(f"{a}.kind {in_list(sorted(map(str, scope.kinds)))}")
    if scope.companies is not None:
        parts.append(f"({a}.company IS NULL OR {a}.company {in_list(sorted(scope.companies))})")
    if scope.branches is not None:
        parts.append(f"({a}.branch IS NULL OR {a}.branch {in_list(sorted(scope.branches))})")
    if scope.entities is not None:
        parts.append(f"{a}.entity {in_list(sorted(scope.entities))}")
    if scope.modules is not None:
        parts.append(f"{a}.module {in_list(sorted(scope.modules))}")
    if scope.date_from is not None:
        parts.append(f"{a}.date >= {param(scope.date_from)}")
    if scope.date_to is not None:
        parts.append(f"{a}.date <= {param(scope.date_to)}")
    return " AND ".join(parts)
