"""Preparing a create: names resolved, the document filled by the ERP, a summary a person reads.

The agent never prices a line: rates, UOMs, price list, currency and taxes come from the ERP's
own form helpers (``Connector.fill_document``), run as the user. A line the ERP has no price for
stops the proposal with a question instead of a guessed rate.
"""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Entity
from erp_agent.catalog.templates import format_value
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import Args, Change, ToolContext
from erp_agent.tools.factories import _records, _resolve


def _money(value: Any, currency: str | None) -> str:
    return f"{currency + ' ' if currency else ''}{format_value(value, 'money')}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _quantity(value: Any) -> str:
    number = float(value or 0)
    return f"{number:g}" if number == int(number) else f"{number:,.3f}".rstrip("0")


def filled_summary(entity: Entity, document: dict[str, Any]) -> str:
    """``Create Quotation for Acme Ltd: 3 × Blue Widget at KES 715.00; total KES 2,488.20``."""
    who = _records.party(entity, document) or document.get("party") or ""
    currency = document.get("currency")
    lines = [
        f"{_quantity(line.get('qty'))} × {line.get('item_name') or line.get('item')} at "
        f"{_money(line.get('rate'), currency)}"
        for line in document.get("items") or []
        if isinstance(line, dict)
    ]
    text = f"Create {entity.label}" + (f" for {who}" if who else "")
    if lines:
        text += (
            ": " + ", ".join(lines[:3]) + (f" and {len(lines) - 3} more" if len(lines) > 3 else "")
        )
    amount = entity.amount_field
    if not lines and amount and amount != "total" and document.get(amount) is not None:
        # A document of one sum (a payment): that sum, in its account's currency.
        currency = currency or next(
            (str(v) for k, v in document.items() if k.endswith("_currency") and v), None
        )
        text += f"; {entity.field(amount).label.lower()} {_money(document[amount], currency)}"
        settled = [str(r["document"]) for r in document.get("references") or []
                   if isinstance(r, dict) and r.get("document")]  # fmt: skip
        if settled:
            text += f" against {', '.join(settled)}"
    if document.get("total") is not None:
        text += f"; total {_money(document['total'], currency)}"
        if document.get("tax_total"):
            text += f" incl. taxes {_money(document['tax_total'], currency)}"
    return text


async def prepare_create(ctx: ToolContext, entity: Entity, args: Args) -> Change:
    values = await _resolve.resolve_links(ctx, entity, dict(args))
    await _resolve.refuse_duplicate(ctx, entity, values)
    filled = await ctx.connector.fill_document(ctx.session.credential, entity.name, values)
    if filled is None:
        return Change(
            payload=values,
            summary=_records.creation_summary(entity, values),
            document=dict(values),
        )
    if filled.unpriced:
        items = [r for r in values.get("items") or [] if isinstance(r, dict)]
        named = ", ".join(str(items[i].get("item")) for i in filled.unpriced if i < len(items))
        raise ToolInputError(
            f"{_sentence('; '.join(filled.notes))}. The ERP has no rate for {named}, and I "
            "never guess one: at what rate should it be? (e.g. 'at 1,500 each'). "
            "Nothing was prepared."
        )
    return Change(
        payload=filled.payload,
        summary=filled_summary(entity, filled.document),
        document=filled.document,
    )
