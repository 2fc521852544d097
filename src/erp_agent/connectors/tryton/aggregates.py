"""Exact aggregates over canonical records read from Tryton.

Tryton has no generic grouped read (no ``read_group``): figures are computed here from every
matching row, read as the user in pages, with ``Decimal`` arithmetic. Where Tryton answers a
figure itself (an account's balance, the aged balance), the reports read that instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from erp_agent.connectors.query import AggregateRequest, AggregateResult, DatePart, Func


def _part(value: Any, part: DatePart) -> int | None:
    if not value:
        return None
    text = str(value)
    year, month = int(text[:4]), int(text[5:7])
    return {DatePart.YEAR: year, DatePart.MONTH: month, DatePart.QUARTER: (month + 2) // 3}[part]


def _number(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    return Decimal(str(value))


def compute(
    rows: Sequence[Mapping[str, Any]], request: AggregateRequest, *, detail: str
) -> AggregateResult:
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        key = tuple(
            _part(row.get(g.field), g.part) if g.part else row.get(g.field)
            for g in request.group_by
        )
        groups.setdefault(key, []).append(row)
    out = []
    for key in sorted(groups, key=lambda k: tuple((v is None, str(v)) for v in k)):
        members = groups[key]
        result: dict[str, Any] = {g.alias: key[i] for i, g in enumerate(request.group_by)}
        for m in request.measures:
            values = [v for r in members if m.field and (v := _number(r.get(m.field))) is not None]
            if m.func is Func.COUNT:
                result[m.alias] = len(members)
            elif not values:
                result[m.alias] = None
            elif m.func is Func.SUM:
                result[m.alias] = float(sum(values, Decimal(0)))
            elif m.func is Func.AVG:
                result[m.alias] = float(sum(values, Decimal(0)) / len(values))
            else:
                result[m.alias] = float(min(values) if m.func is Func.MIN else max(values))
        result["count_records"] = len(members)
        out.append(result)
    return AggregateResult(
        out, len(rows), "chunked", detail,
        [g.alias for g in request.group_by], [m.alias for m in request.measures],
    )  # fmt: skip
