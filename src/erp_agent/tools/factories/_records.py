"""How a proposal names a document and what changes in it: summaries and field diffs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import Entity, Field, FieldType
from erp_agent.catalog.templates import format_value
from erp_agent.store.records import FieldChange

# Links that say whose document it is, in the order a person would name them.
_PARTY_LINKS = ("customer", "supplier", "employee", "party", "lead")


def party(entity: Entity, record: Mapping[str, Any]) -> str | None:
    """Who or what the record is about: its title, a ``*_name`` field, or its party link."""
    title = entity.title_field
    if title is not None and record.get(title.name):
        return str(record[title.name])
    for name, field in entity.fields.items():
        if name.endswith("_name") and field.is_scalar and record.get(name):
            return str(record[name])
    for name in _PARTY_LINKS:
        if name in entity.fields and record.get(name):
            return str(record[name])
    return None


def _rows_text(entity: Entity, record: Mapping[str, Any]) -> list[str]:
    out = []
    for name, field in entity.fields.items():
        rows = record.get(name)
        if field.type is FieldType.TABLE and isinstance(rows, list) and rows:
            label = field.label.lower()
            text = f"{len(rows)} {label[:-1] if len(rows) == 1 and label.endswith('s') else label}"
            # A table of sums (a claim's expenses) says how much: what the person confirms.
            money = [n for n, f in field.fields.items() if f.type is FieldType.MONEY and f.required]
            if money and all(isinstance(r, Mapping) for r in rows):
                total = sum(float(r.get(money[0]) or 0) for r in rows)
                text += f", {format_value(total, 'money')}"
            lines = [r for r in rows if isinstance(r, Mapping) and r.get("item") and r.get("qty")]
            if 0 < len(lines) == len(rows) <= 3:
                # A few lines are said as what moves: "60 × SKU-3185-SLV".
                text = ", ".join(f"{format_value(r['qty'], 'number')} × {r['item']}" for r in lines)
            out.append(text)
    return out


def _key_values(entity: Entity, record: Mapping[str, Any]) -> list[str]:
    """What kind of document it is, in its own values: a leave application's leave type and
    its dates ("Sick Leave, 2026-12-01 to 2026-12-02"), a stock transfer's two warehouses."""
    out = [
        str(record[name])
        for name, f in entity.fields.items()
        if f.required and f.type is FieldType.LINK and record.get(name)
        and f.target not in ("company", *_PARTY_LINKS) and name not in _PARTY_LINKS
    ]  # fmt: skip
    if record.get("from_date") and record.get("to_date"):
        out.append(f"{record['from_date']} to {record['to_date']}")
    if record.get("from_warehouse") and record.get("to_warehouse"):
        # Goods moved: from where to where, and as what ("Material Transfer").
        kind = record.get("entry_type")
        out.append(f"{kind + ' ' if kind else ''}from {record['from_warehouse']} to "
                   f"{record['to_warehouse']}")  # fmt: skip
    return out


def creation_summary(entity: Entity, values: Mapping[str, Any]) -> str:
    """``Create Quotation for Acme Ltd (2 items)``; ``Create Leave Application for HR-EMP-8:
    Sick Leave, 2026-12-01 to 2026-12-02``."""
    who = party(entity, values)
    text = f"Create {entity.label}" + (f" for {who}" if who else "")
    if values.get("id"):
        text += f" named {values['id']}"
    keys = _key_values(entity, values)
    if keys:
        text += ": " + ", ".join(keys)
    rows = _rows_text(entity, values)
    return text + (f" ({', '.join(rows)})" if rows else "")


def key_figures(entity: Entity, record: Mapping[str, Any]) -> str:
    """``SINV-0001 (Acme Ltd; date 2026-11-30; total KES 1,200.00; status Draft)``."""
    parts: list[str] = []
    who = party(entity, record)
    if who and who != record.get("id"):
        parts.append(who)
    if entity.date_field and record.get(entity.date_field):
        parts.append(f"{entity.field(entity.date_field).label.lower()} {record[entity.date_field]}")
    if entity.amount_field and record.get(entity.amount_field) is not None:
        field = entity.field(entity.amount_field)
        amount = format_value(record[entity.amount_field], field.type.value)
        currency = record.get("currency")
        parts.append(f"{field.label.lower()} {currency + ' ' if currency else ''}{amount}")
    if entity.status_field and record.get(entity.status_field):
        parts.append(f"status {record[entity.status_field]}")
    ident = str(record.get("id", ""))
    return f"{ident} ({'; '.join(parts)})" if parts else ident


def _project(rows: object, keys: set[str]) -> object:
    # A table update replaces the rows; ERP rows carry computed fields the new rows lack, so
    # they are compared on the fields given.
    if not isinstance(rows, list):
        return rows
    return [{k: r.get(k) for k in sorted(keys)} if isinstance(r, Mapping) else r for r in rows]


def _same(field: Field, before: object, after: object) -> bool:
    if field.type is FieldType.TABLE and isinstance(after, list):
        keys = {k for r in after if isinstance(r, Mapping) for k in r}
        return _project(before, keys) == after
    if before is None or after is None:
        return before in (None, "") and after in (None, "")
    if field.type is FieldType.BOOLEAN:
        return bool(before) == bool(after)
    if field.type in {FieldType.DATE, FieldType.DATETIME}:
        return str(before)[: len(str(after))] == str(after)
    return before == after


def diff(
    entity: Entity, current: Mapping[str, Any], values: Mapping[str, Any]
) -> list[FieldChange]:
    """``[{field, label, before, after}]`` for each value that differs from the record."""
    out: list[FieldChange] = []
    for name, after in values.items():
        field = entity.field(name)
        before = current.get(name)
        if not _same(field, before, after):
            out.append({"field": name, "label": field.label, "before": before, "after": after})
    return out
