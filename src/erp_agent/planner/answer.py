"""Wording of answers. Figures are printed from tool results exactly (thousands separators and
the result's own decimals only), so the engine's provenance guard can trace every one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from erp_agent.catalog import Entity, FieldType

MAX_IDS = 10


def fmt(value: Any) -> str:
    """A figure as shown to the user: 16669010.92 → 16,669,010.92; never rounded to fewer
    places than it has (float noise past six places aside)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        # Binary noise of a float sum (13376370.350000001) is not a figure anyone entered;
        # six places keep every cent and every quantity's decimals.
        d = Decimal(str(round(value, 6)))
        if d == d.to_integral_value():
            return f"{int(d):,}"
        places = max(2, -int(d.as_tuple().exponent))
        return f"{d:,.{places}f}"
    return str(value)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def join(items: Iterable[str], word: str = "and") -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {word} " + items[-1]


def record_line(entity: Entity, row: Mapping[str, Any]) -> str:
    """'ACC-SINV-… (Acme Ltd, 2026-10-28, KES 470,246.60, Unpaid)'."""
    parts: list[str] = []
    title = entity.title_field
    for name in ("customer_name", "supplier_name", "employee_name", "party_name", "item_name"):
        if row.get(name):
            parts.append(str(row[name]))
            break
    else:
        if title is not None and row.get(title.name) and row.get(title.name) != row.get("id"):
            parts.append(str(row[title.name]))
        elif title is None:
            # A record known by what it links ("the stock of an item in a warehouse"): those.
            parts += [str(row[n]) for n, f in entity.fields.items()
                      if f.required and f.target and row.get(n)]  # fmt: skip
    if entity.date_field and row.get(entity.date_field):
        parts.append(str(row[entity.date_field]))
    if entity.amount_field and is_number(row.get(entity.amount_field)):
        currency = f"{row['currency']} " if row.get("currency") else ""
        parts.append(f"{currency}{fmt(row[entity.amount_field])}")
    if is_number(row.get("outstanding")) and row.get("outstanding"):
        currency = f"{row['currency']} " if row.get("currency") else ""
        parts.append(f"outstanding {currency}{fmt(row['outstanding'])}")
    if entity.status_field and row.get(entity.status_field):
        parts.append(str(row[entity.status_field]))
    return f"{row.get('id', '')} ({', '.join(parts)})" if parts else str(row.get("id", ""))


_PARTIES = ("customer", "supplier", "employee", "lead")


def capabilities(entity: Entity | None, offered: Iterable[str]) -> str:
    """What the planner can answer, said plainly when a request was not fully understood."""
    names = set(offered)
    if entity is None:
        kinds = sorted(
            {n.split(".")[0].replace("_", " ") for n in names if "." in n}
            - {"tools", "display", "results", "calculator"}
        )
        topics = ", ".join(kinds[:12]) if kinds else "the records your role can read"
        return (
            "I can answer questions about the ERP data you have access to — for example lists "
            "with filters, one document's status, counts, totals by month or by customer, top-N "
            f"with a chart, and the ERP's reports. Topics available now: {topics}."
        )
    plural = entity.plural.lower()
    out = []
    if f"{entity.name}.list" in names:
        # Only the kinds of filter these records really take.
        kinds = [
            kind
            for kind, fits in (
                ("status", lambda f: f.name == entity.status_field),
                ("date", lambda f: f.type in (FieldType.DATE, FieldType.DATETIME)),
                ("amount", lambda f: f.type in (FieldType.MONEY, FieldType.NUMBER)),
                ("party", lambda f: f.type is FieldType.LINK and f.target in _PARTIES),
            )
            if any(f.filterable and fits(f) for f in entity.fields.values())
        ]
        out.append(f"list {plural}" + (f" filtered by {join(kinds, 'or')}" if kinds else ""))
    if f"{entity.name}.get" in names:
        out.append(f"look up one {entity.label.lower()} by its id")
    if f"{entity.name}.count" in names:
        out.append(f"count {plural}")
    if f"{entity.name}.aggregate" in names and entity.amount_field:
        out.append(f"total {plural} by month, quarter or any grouping field, or the top N")
    if any(
        n.startswith(f"{entity.name}.")
        and n.split(".")[1] in ("create", "update", "workflow_action")
        for n in names
    ):
        out.append(f"prepare changes to {plural} for you to confirm")
    if not out:
        return f"I can't see {plural} with your access."
    return f"For {plural} I can: " + "; ".join(out) + "."


OFFLINE_NOTE = "(answered by the offline planner: the configured model is unavailable)"
