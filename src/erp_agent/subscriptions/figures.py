"""What a run found, in the terms its tools returned: the figures (a metric's per-currency or
per-unit totals, a count, a value), the rows listed, the definition in words, and whether an
alert's condition holds. Nothing is added up here: totals are the tool's own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, TypedDict

from erp_agent.subscriptions.models import Condition

OPS = ("<", "<=", ">", ">=", "=", "!=")
OP_WORDS = {"<": "falls below", "<=": "is at most", ">": "rises above", ">=": "is at least",
            "=": "equals", "!=": "is not"}  # fmt: skip


class Figure(TypedDict):
    value: str  # exact, as text (Decimal)
    unit: str  # currency or unit of measure, "" when none


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def figures(data: Any) -> list[Figure]:
    """The headline figures of one tool result (empty when it has none)."""
    if not isinstance(data, Mapping):
        return []
    found: list[Figure] = []
    totals = data.get("totals")
    if isinstance(totals, list):
        for total in totals:
            if isinstance(total, Mapping) and (value := _decimal(total.get("value"))) is not None:
                unit = total.get("currency") or total.get("unit") or total.get("uom") or ""
                found.append({"value": str(value), "unit": str(unit)})
        if found or "rows" in data:
            return found
    for key in ("count", "value", "total"):
        value = _decimal(data.get(key))
        if value is not None:
            return [{"value": str(value), "unit": str(data.get("currency") or "")}]
    return found


def rows_listed(data: Any) -> int:
    if isinstance(data, Mapping):
        for key in ("rows", "records"):
            if isinstance(data.get(key), list):
                return len(data[key])
        for key in ("groups", "count", "record_count"):
            if isinstance(data.get(key), int):
                return int(data[key])
    return 0


def definition(data: Any) -> str:
    """The result's definition in words: what was counted, with which filters."""
    if not isinstance(data, Mapping):
        return ""
    found = data.get("definition")
    if isinstance(found, str):
        return found
    if not isinstance(found, Mapping):
        return ""
    text = str(found.get("text") or "")
    filters = [str(f) for f in found.get("filters") or []]
    if found.get("period"):
        filters.append(f"period {found['period']}")
    return f"{text} Filters: {'; '.join(filters)}." if filters else text


def label(data: Any, fallback: str) -> str:
    if isinstance(data, Mapping) and isinstance(data.get("label"), str):
        return str(data["label"])
    return fallback


def figure_text(found: Sequence[Figure]) -> str:
    if not found:
        return "nothing found (0)"
    return "; ".join(_formatted(f) for f in found)


def _formatted(figure: Figure) -> str:
    value = Decimal(figure["value"])
    text = f"{value:,.2f}" if value != value.to_integral_value() else f"{value:,.0f}"
    return f"{text} {figure['unit']}".strip()


def holds(condition: Condition, data: Any) -> bool:
    """Whether the alert's condition holds for this result: over the figures (any of them,
    one per currency or unit; none found counts as 0) or the number of rows listed."""
    op = str(condition.get("op", ">"))
    threshold = Decimal(str(condition.get("value", 0)))
    if condition.get("on") == "rows":
        return compare(op, Decimal(rows_listed(data)), threshold)
    values = [Decimal(f["value"]) for f in figures(data)] or [Decimal(0)]
    return any(compare(op, v, threshold) for v in values)


def compare(op: str, left: Decimal, right: Decimal) -> bool:
    results = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right,
               "=": left == right, "!=": left != right}  # fmt: skip
    return results.get(op, left > right)


def condition_text(condition: Condition) -> str:
    what = "the number of rows" if condition.get("on") == "rows" else "the figure"
    value = Decimal(str(condition.get("value", 0)))
    shown = f"{value:,.0f}" if value == value.to_integral_value() else f"{value:,}"
    return f"when {what} {OP_WORDS.get(str(condition.get('op')), condition.get('op'))} {shown}"
