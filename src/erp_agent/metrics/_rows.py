"""A metric computed from its records, read as the user, when the ERP cannot do it in one
aggregate: a comparison between two fields (projected qty below the item's reorder level), a
filter through a link, or a figure summed from a linked record (the item's reorder level)."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from erp_agent.catalog import Entity, Metric, MetricFilter
from erp_agent.catalog.metrics import resolve_today
from erp_agent.connectors.query import DatePart, Filter, GroupKey

if TYPE_CHECKING:
    from erp_agent.metrics.compute import MetricComputer

_COUNT_ALIAS = "count_records"


async def read_rows(
    computer: MetricComputer,
    entity: Entity,
    heads: list[str],
    grain_keys: tuple[GroupKey, ...],
    metric: Metric,
    filters: list[Filter],
    row_level: list[MetricFilter],
    sums: list[str],
) -> tuple[list[dict[str, Any]], str]:
    """Every matching record (only the needed fields), row-level filters applied here, shaped
    like an aggregate's rows (one per record)."""
    needed = set(heads)
    if metric.measure.field:
        needed.add(metric.measure.field.split(".")[0])  # a linked field: the link is read
    needed |= {f.split(".")[0] for f in sums}
    if grain_keys:
        needed.add(grain_keys[0].field)
    for flt in row_level:
        needed |= {p.split(".")[0] for p in (flt.field, flt.reference) if p}
    ctx = computer.ctx
    page = await ctx.connector.list(
        ctx.session.credential, entity.name, fields=sorted(needed), filters=filters, limit=0
    )
    records = page.records

    async def values(path: str, rows: list[dict[str, Any]]) -> list[Any]:
        if "." not in path:
            return [r.get(path) for r in rows]
        head = path.split(".")[0]
        mapping = await computer._link_map(entity, path, (r.get(head) for r in rows))
        return [mapping.get(r.get(head)) for r in rows]

    for flt in row_level:
        left = await values(flt.field, records)
        if flt.reference:
            right = await values(flt.reference, records)
        else:
            right = [resolve_today(flt.value, computer.today, ctx.session.user)] * len(records)
        records = [r for r, a, b in zip(records, left, right, strict=True) if compare(a, flt.op, b)]
    summed = {f: await values(f, records) for f in sums}
    out = []
    for i, record in enumerate(records):
        row: dict[str, Any] = {h: record.get(h) for h in heads}
        for key in grain_keys:
            row[key.alias] = date_part(record.get(key.field), key.part)
        if metric.measure.field and "." not in metric.measure.field:
            value = record.get(metric.measure.field)
            row[f"sum_{metric.measure.field}"] = value
            row[f"min_{metric.measure.field}"] = value
            row[f"max_{metric.measure.field}"] = value
        for name, column in summed.items():
            row[f"sum_{name}"] = column[i]
        row[_COUNT_ALIAS] = 1
        out.append(row)
    detail = (
        f"computed exactly here from all {len(page.records)} records read as you "
        f"({len(records)} kept by the comparisons the ERP cannot make in a filter)"
    )
    return out, detail


def date_part(value: Any, part: DatePart | None) -> Any:
    if value is None or part is None:
        return value
    text = str(value)
    year, month = int(text[:4]), int(text[5:7])
    return {DatePart.YEAR: year, DatePart.MONTH: month, DatePart.QUARTER: (month + 2) // 3}[part]


def compare(left: Any, op: str, right: Any) -> bool:
    if op == "is set":
        return left not in (None, "")
    if op == "is not set":
        return left in (None, "")
    if left is None or right is None:
        return False
    if op in ("in", "not in"):
        return (left in right) == (op == "in")
    if op == "between":
        return bool(_num(right[0]) <= _num(left) <= _num(right[1]))
    a, b = _num(left), _num(right)
    return bool({
        "=": a == b, "!=": a != b, ">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b,
    }.get(op, False))  # fmt: skip


def _num(value: Any) -> Any:
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return Decimal(str(value))
    return value
