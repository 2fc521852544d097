"""The exact running figures of a metric's groups, shared by every way a metric is computed
(an ERP aggregate, rows read here, the latest record, or the ERP's own report)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from erp_agent.catalog import MeasureFunc
from erp_agent.catalog.metrics import MetricMeasure

Key = tuple[Any, ...]


def dec(value: Any) -> Decimal:
    return Decimal(str(value)) if value is not None else Decimal(0)


@dataclass
class Latest:
    """The value on the latest record of a group, with the record it came from."""

    order: tuple[str, str]  # (date, record id): the later pair wins, as ERPNext orders
    value: Decimal
    details: dict[str, Any]


@dataclass
class Cell:
    """The exact running figures of one group: the measure field's sum (``total``), the sums
    of any other fields it needs (a net's second field, companion figures), the count, the
    extremes, the distinct values, or the latest record."""

    total: Decimal = Decimal(0)
    count: int = 0
    low: Decimal | None = None
    high: Decimal | None = None
    distinct: set[Any] = field(default_factory=set)
    sums: dict[str, Decimal] = field(default_factory=dict)
    latest: Latest | None = None

    def add(self, other: Cell) -> None:
        self.total += other.total
        self.count += other.count
        if other.low is not None:
            self.low = other.low if self.low is None else min(self.low, other.low)
        if other.high is not None:
            self.high = other.high if self.high is None else max(self.high, other.high)
        self.distinct |= other.distinct
        for name, value in other.sums.items():
            self.sums[name] = self.sums.get(name, Decimal(0)) + value
        if other.latest is not None and (
            self.latest is None or other.latest.order > self.latest.order
        ):
            self.latest = other.latest

    def sum_of(self, measure: MetricMeasure) -> Decimal:
        """A sum or net measure over this group (a companion figure's value)."""
        first = self.sums.get(str(measure.field), Decimal(0))
        return first - self.sums.get(measure.minus, Decimal(0)) if measure.minus else first

    def value(self, measure: MetricMeasure) -> Decimal | None:
        func = measure.func
        if func is MeasureFunc.SUM:
            return self.total
        if func is MeasureFunc.NET:
            return self.total - self.sums.get(str(measure.minus), Decimal(0))
        if func is MeasureFunc.COUNT:
            return Decimal(self.count)
        if func is MeasureFunc.AVG:
            return self.total / self.count if self.count else None
        if func is MeasureFunc.MIN:
            return self.low
        if func is MeasureFunc.MAX:
            return self.high
        if func is MeasureFunc.LATEST:
            return self.latest.value if self.latest else None
        return Decimal(len(self.distinct))


@dataclass
class Computed:
    """A metric's groups: key = (dimension values..., [period label], currency or unit)."""

    groups: dict[Key, Cell]
    period_starts: dict[str, dt.date]
    record_count: int
    sources: list[str]
    filters: list[str]
    notes: list[str] = field(default_factory=list)
