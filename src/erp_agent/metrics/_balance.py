"""A balance by time grain: the balance at the end of each period (everything dated on or
before it), from one opening figure and the movements of each period, added up in order."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from erp_agent.catalog import Metric
from erp_agent.metrics._cells import Cell, Computed, Key
from erp_agent.metrics.periods import Period, bucket
from erp_agent.metrics.request import MetricQuery

if TYPE_CHECKING:
    from erp_agent.metrics.compute import MetricComputer


async def running_balance(
    computer: MetricComputer, query: MetricQuery, metric: Metric, period: Period
) -> Computed:
    end = period.end or computer.today
    grain = str(query.grain)
    moves = await computer.read(
        query, metric, Period(period.start, end), cumulative=False, grain=grain
    )
    opening = Computed({}, {}, 0, [], [])
    if period.start is not None:
        before = Period(None, period.start - dt.timedelta(days=1))
        opening = await computer.read(query, metric, before, cumulative=True, grain=None)
    first = period.start or min(moves.period_starts.values(), default=end)
    labels: dict[str, dt.date] = {}
    day = first
    while day <= end:
        label, start = bucket(day, grain, computer.fiscal_years)
        labels.setdefault(label, start)
        day += dt.timedelta(days=1)
    dims = len(query.dimensions)
    series: dict[Key, Cell] = {}
    for key, cell in opening.groups.items():
        series.setdefault(key, Cell()).add(cell)
    for key in moves.groups:
        series.setdefault((*key[:dims], key[-1]), Cell())
    groups: dict[Key, Cell] = {}
    for member, start_cell in series.items():
        running = Cell()
        running.add(start_cell)
        for label in labels:
            moved = moves.groups.get((*member[:dims], label, member[-1]))
            if moved is not None:
                running.add(moved)
            snapshot = Cell()
            snapshot.add(running)
            groups[(*member[:dims], label, member[-1])] = snapshot
    words = [
        *moves.filters,
        f"the balance at the end of each {grain.replace('_', ' ')}: everything dated on or "
        "before that day",
    ]
    return Computed(
        groups,
        labels,
        opening.record_count + moves.record_count,
        list(dict.fromkeys([*opening.sources, *moves.sources])),
        words,
        list(dict.fromkeys([*opening.notes, *moves.notes])),
    )
