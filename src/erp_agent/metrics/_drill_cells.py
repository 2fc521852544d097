"""The records behind one figure of a metric, each with its share: the metric computed again
the way the figure was (``MetricComputer.read``), grouped additionally by record and restricted
to the figure's cell (``drill.py`` says which figures and how they are shown)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from erp_agent.catalog import Entity, Metric
from erp_agent.catalog.metrics import Dimension
from erp_agent.connectors.query import Filter, Op
from erp_agent.metrics._cells import Cell
from erp_agent.metrics.compute import MetricComputer
from erp_agent.metrics.periods import Period, bucket_bounds
from erp_agent.metrics.request import MetricQuery

RECORD = "__record"  # the pseudo dimension that groups a metric by record
ID_CHUNK = 400  # ids per listing call (and the most a narrowing filter names)
_HAVING = {
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, "=": lambda a, b: a == b, "!=": lambda a, b: a != b,
}  # fmt: skip


@dataclass
class Cut:
    """The figure's cell: its dimension values, time bucket and currency (or unit)."""

    dims: tuple[Any, ...]
    label: str | None
    slot: Any
    whole: bool = False  # a total: every group of its currency
    others: bool = False  # the "All others" row: the groups not shown above it
    shown: set[tuple[Any, ...]] = field(default_factory=set)  # for others: what is shown


def same(a: Any, b: Any) -> bool:
    return a == b or (a is not None and b is not None and str(a) == str(b))


async def _narrowing(
    computer: MetricComputer, entity: Entity, query: MetricQuery, cut: Cut
) -> list[Filter] | None:
    """ERP filters for the cut's own dimension values: they only leave out records of other
    groups (every record is still checked against the cut here). None: nothing can match."""
    if cut.whole or cut.others:
        return []
    out: list[Filter] = []
    for dim, value in zip(query.dimensions, cut.dims, strict=True):
        path = dim.path_for(entity.name, entity.fields)
        if dim.age_ranges or path is None:
            continue
        if "." not in path:
            out.append(
                Filter(path, Op.EQ, value) if value is not None else Filter(path, Op.IS_NOT_SET)
            )
            continue
        if value is None:
            continue
        ids = await computer._matching_ids(entity, path, Op.EQ, value)
        if not ids:
            return None
        if len(ids) <= ID_CHUNK:
            out.append(Filter(path.split(".")[0], Op.IN, ids))
    return out


async def records(
    computer: MetricComputer,
    query: MetricQuery,
    metric: Metric,
    period: Period,
    cut: Cut,
    spec: Mapping[str, Any],
) -> tuple[dict[Any, Cell], str]:
    """Each record's share of the cut: record id -> its cell."""
    entity = computer.catalog.entity(metric.entity)
    record = Dimension(name=RECORD, label="Record", paths={entity.name: entity.identifier.name})
    grouped = dataclasses.replace(query, metric=metric, dimensions=[*query.dimensions, record])
    narrow = await _narrowing(computer, entity, query, cut)
    if narrow is None:
        return {}, "nothing matched"
    grain = query.grain
    labelled = False
    if grain and metric.cumulative:
        # A balance at a bucket's end (or the closing balance of a total): everything dated
        # on or before that day.
        end = period.end or computer.today
        if cut.label:
            bounds = bucket_bounds(cut.label, grain, computer.fiscal_years)
            end = min(end, bounds[1]) if bounds else end
        computed = await computer.read(
            grouped, metric, Period(None, end), cumulative=True, grain=None, narrow=narrow
        )
    elif grain and cut.label:
        bounds = bucket_bounds(cut.label, grain, computer.fiscal_years)
        span = period
        if bounds is not None:
            start = max(bounds[0], period.start) if period.start else bounds[0]
            end = min(bounds[1], period.end) if period.end else bounds[1]
            span = Period(start, end)
        computed = await computer.read(
            grouped, metric, span, cumulative=metric.cumulative, grain=grain, narrow=narrow
        )
        labelled = True
    elif grain and cut.others:
        computed = await computer.read(
            grouped, metric, period, cumulative=metric.cumulative, grain=grain, narrow=narrow
        )
        labelled = True
    else:
        computed = await computer.read(
            grouped, metric, period, cumulative=metric.cumulative, grain=None, narrow=narrow
        )
    n = len(query.dimensions)
    members: dict[tuple[Any, ...], dict[Any, Cell]] = {}
    for key, cell in computed.groups.items():
        if not same(key[-1], cut.slot):
            continue
        dims, record_id = key[:n], key[n]
        label = key[n + 1] if labelled and len(key) > n + 2 else None
        if not cut.whole and not cut.others:
            if not all(same(a, b) for a, b in zip(dims, cut.dims, strict=True)):
                continue
            if labelled and not same(label, cut.label):
                continue
        member = (*dims, *((label,) if labelled else ()))
        members.setdefault(member, {}).setdefault(record_id, Cell()).add(cell)
    if cut.others:
        members = _others(query, metric, members, cut, spec)
    found: dict[Any, Cell] = {}
    for records in members.values():
        for record_id, cell in records.items():
            found.setdefault(record_id, Cell()).add(cell)
    return found, "; ".join(dict.fromkeys([*computed.sources, *computed.notes]))


def _others(
    query: MetricQuery,
    metric: Metric,
    members: dict[tuple[Any, ...], dict[Any, Cell]],
    cut: Cut,
    spec: Mapping[str, Any],
) -> dict[tuple[Any, ...], dict[Any, Cell]]:
    """The groups an "All others" row summed: those past ``having`` not shown above it."""
    having = spec.get("having")
    n = len(query.dimensions)
    kept: dict[tuple[Any, ...], dict[Any, Cell]] = {}
    for member, records in members.items():
        if query.grain and query.dimensions and not same(member[n], cut.label):
            continue
        shown_as = member[:n] if query.grain and query.dimensions else member
        if any(all(same(a, b) for a, b in zip(shown_as, s, strict=True)) for s in cut.shown):
            continue
        if having:
            total = Cell()
            for cell in records.values():
                total.add(cell)
            value = total.value(metric.measure)
            wanted = Decimal(str(having.get("value")))
            if value is None or not _HAVING[str(having.get("op"))](value, wanted):
                continue
        kept[member] = records
    return kept
