"""Fact cards: one self-contained passage per ERP record, rendered from the catalog's template
(customer, branch, date, currency and amounts repeated in every card, so a card read alone is
unambiguous), plus figures derived in code — never left for the model to compute."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.catalog.templates import format_value
from erp_agent.connectors.base import Connector
from erp_agent.retrieval.documents import Document, Kind

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip


def card_key(entity: str, record_id: str) -> str:
    return f"{entity}:{record_id}"


def is_cancelled(connector: Connector, entity: str, record: Mapping[str, Any]) -> bool:
    """Cancelled documents leave the index: they no longer say anything true about the books.
    What "cancelled" looks like is the connector's to know."""
    return connector.is_cancelled(entity, record)


def card_fields(entity: Entity) -> list[str]:
    """The fields a card needs from the ERP (template, scope columns, derived figures)."""
    from erp_agent.catalog.templates import placeholders

    wanted = {"id", "company", "branch", "status", "total", "outstanding", "currency"}
    wanted |= set(placeholders(entity.fact_card))
    if entity.date_field:
        wanted.add(entity.date_field)
    if entity.title_field is not None:
        wanted.add(entity.title_field.name)
    return sorted(
        name for name in wanted if name in entity.fields and entity.fields[name].is_scalar
    )


def derived(entity: Entity, record: Mapping[str, Any]) -> list[str]:
    """Sentences with figures computed here, exactly (Decimal), from the record's own values."""
    out: list[str] = []
    total, outstanding = _number(record.get("total")), _number(record.get("outstanding"))
    if total is not None and outstanding is not None and "outstanding" in entity.fields:
        currency = record.get("currency") or ""
        paid = total - outstanding
        if outstanding == 0 and total > 0:
            out.append(
                f"Fully paid: nothing outstanding of {currency} {format_value(total, 'money')}."
            )
        else:
            out.append(
                f"Paid so far {currency} {format_value(paid, 'money')} of "
                f"{currency} {format_value(total, 'money')}; still owed {currency} "
                f"{format_value(outstanding, 'money')}."
            )
    return out


def render_card(
    entity: Entity,
    record: Mapping[str, Any],
    *,
    tenant: str,
    connector: Connector | None = None,
) -> Document:
    """The card of one canonical record, ready to embed and index."""
    record_id = str(record["id"])
    date = _date(record.get(entity.date_field)) if entity.date_field else None
    # People name the month ("the invoice we sent them in August"); the template has the ISO date.
    when = [f"Dated {_MONTHS[date.month - 1]} {date.year}."] if date else []
    text = " ".join([entity.render_fact_card(record), *derived(entity, record), *when])
    # Where ids are codes, not names (a bespoke database), the card still says who it is.
    title = entity.title_field
    name = record.get(title.name) if title is not None else None
    if name and str(name) not in text:
        text = f"{text} Name: {name}."
    modified = record.get("_modified")
    return Document(
        key=card_key(entity.name, record_id),
        kind=Kind.RECORD,
        tenant=tenant,
        title=f"{entity.label} {record_id}",
        text=text,
        company=_text(record.get("company")),
        branch=_text(record.get("branch")),
        entity=entity.name,
        record_id=record_id,
        date=date,
        link=connector.link(entity.name, record) if connector is not None else None,
        module=entity.modules[0],
        parent=entity.name,
        metadata={"modified": str(modified)} if modified else {},
    )


def _text(value: object) -> str | None:
    return str(value) if value not in (None, "") else None


def _number(value: object) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _date(value: object) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and value:
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None
