"""Connector-neutral query types: canonical filters, aggregate requests and their results."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Op(StrEnum):
    """Every filter operator a connector must translate."""

    EQ = "="
    NE = "!="
    GT = ">"
    GE = ">="
    LT = "<"
    LE = "<="
    LIKE = "like"
    NOT_LIKE = "not like"
    IN = "in"
    NOT_IN = "not in"
    BETWEEN = "between"
    IS_SET = "is set"
    IS_NOT_SET = "is not set"
    DESCENDANTS_OF = "descendants of"
    ANCESTORS_OF = "ancestors of"


@dataclass(frozen=True)
class Filter:
    """``field op value`` on a canonical field (a table row field as ``items.item``)."""

    field: str
    op: Op
    value: Any = None


class Func(StrEnum):
    SUM = "sum"
    COUNT = "count"
    AVG = "avg"
    MIN = "min"
    MAX = "max"


class DatePart(StrEnum):
    YEAR = "year"
    QUARTER = "quarter"
    MONTH = "month"


@dataclass(frozen=True)
class Measure:
    func: Func
    field: str | None = None  # None only for count

    @property
    def alias(self) -> str:
        return f"{self.func}_{self.field or 'records'}"


@dataclass(frozen=True)
class GroupKey:
    field: str
    part: DatePart | None = None

    @property
    def alias(self) -> str:
        return f"{self.part}_{self.field}" if self.part else self.field


@dataclass(frozen=True)
class AggregateRequest:
    measures: tuple[Measure, ...]
    group_by: tuple[GroupKey, ...] = ()
    filters: tuple[Filter, ...] = ()


@dataclass
class AggregateResult:
    """Exact figures, with how they were computed and over how many records."""

    rows: list[dict[str, Any]]
    record_count: int
    method: str  # "pushdown" or "chunked"
    detail: str = ""
    group_by: list[str] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)
