"""Share of total for grouped aggregates, in Decimal: the shares are exact to the rounding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

_PLACES = Decimal("0.01")


def _dec(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def with_shares(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str]
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Each row plus ``share_<column>`` (percent of the column's total, 2 places), and the
    totals. A share is None when the total is zero (no meaningful percentage)."""
    totals = {
        c: sum((_dec(r.get(c)) or Decimal(0) for r in rows), start=Decimal(0)) for c in columns
    }
    out = []
    for row in rows:
        item = dict(row)
        for column in columns:
            value, total = _dec(row.get(column)), totals[column]
            item[f"share_{column}"] = (
                None
                if value is None or total == 0
                else float((value / total * 100).quantize(_PLACES, rounding=ROUND_HALF_UP))
            )
        out.append(item)
    return out, {c: float(t) for c, t in totals.items()}
