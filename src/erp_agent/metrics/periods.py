"""Periods and time grains of metric queries: parsing, fiscal years, comparison periods and the
bucket each date falls in."""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from erp_agent.errors import ToolInputError

GRAINS = ("day", "week", "month", "quarter", "year", "fiscal_year")
GRAIN_LABELS = {
    "day": "Day",
    "week": "Week",
    "month": "Month",
    "quarter": "Quarter",
    "year": "Year",
    "fiscal_year": "Fiscal year",
}
COMPARISONS = ("previous_period", "same_period_last_year")


@dataclass(frozen=True)
class Period:
    start: dt.date | None
    end: dt.date | None

    def text(self) -> str | None:
        if self.start and self.end:
            return f"{self.start.isoformat()} to {self.end.isoformat()}"
        if self.start:
            return f"from {self.start.isoformat()}"
        if self.end:
            return f"up to {self.end.isoformat()}"
        return None


@dataclass(frozen=True)
class FiscalYear:
    name: str
    start: dt.date
    end: dt.date


def _date(value: Any, key: str) -> dt.date | None:
    if value in (None, ""):
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ToolInputError(
            f"period {key} {value!r} is not a date; give YYYY-MM-DD, e.g. 2026-04-01"
        ) from None


def parse_period(raw: Mapping[str, Any] | None, fiscal_years: Sequence[FiscalYear]) -> Period:
    """``{"from", "to"}`` (either may be left out) or ``{"fiscal_year": name}``."""
    if not raw:
        return Period(None, None)
    if not isinstance(raw, Mapping):
        raise ToolInputError('period must be {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}')
    unknown = set(raw) - {"from", "to", "fiscal_year"}
    if unknown:
        raise ToolInputError(
            f"period has unknown keys {', '.join(sorted(unknown))}; use from/to or fiscal_year"
        )
    if raw.get("fiscal_year"):
        name = str(raw["fiscal_year"])
        for fy in fiscal_years:
            if fy.name == name:
                return Period(fy.start, fy.end)
        known = ", ".join(fy.name for fy in fiscal_years) or "none readable"
        raise ToolInputError(f"unknown fiscal year {name!r}; the ERP's fiscal years: {known}")
    start, end = _date(raw.get("from"), "from"), _date(raw.get("to"), "to")
    if start and end and start > end:
        raise ToolInputError(f"period from {start} is after to {end}")
    return Period(start, end)


def month_end(day: dt.date) -> dt.date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def shift_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _whole_months(period: Period) -> int | None:
    if not (period.start and period.end) or period.start.day != 1:
        return None
    if period.end != month_end(period.end):
        return None
    return (period.end.year - period.start.year) * 12 + period.end.month - period.start.month + 1


@dataclass(frozen=True)
class Shift:
    """How a comparison period maps onto the current one: months or days forward."""

    months: int = 0
    days: int = 0

    def forward(self, day: dt.date) -> dt.date:
        return shift_months(day, self.months) + dt.timedelta(days=self.days)


def comparison(period: Period, how: str | Period) -> tuple[Period, Shift]:
    """The period to compare with, and the shift that maps its dates onto ``period``.

    ``previous_period`` means what people mean by "than last month": whole months against as
    many whole months before; a month, quarter or year to date against the same days of the
    one before (1–5 Dec against 1–5 Nov, never 26–30 Nov); any other span against the same
    number of days just before it. ``same_period_last_year`` is the same dates a year earlier.
    An explicit ``Period`` is itself the comparison ("Q3 against Q1")."""
    if not (period.start and period.end):
        raise ToolInputError(
            f"compare_to {how!r} needs a period with both from and to, e.g. "
            '{"from": "2026-04-01", "to": "2026-06-30"}'
        )
    if isinstance(how, Period):
        if not (how.start and how.end):
            raise ToolInputError("compare_period needs both from and to")
        return how, _shift_between(how.start, period.start)
    if how == "same_period_last_year":
        return _shifted(period, 12), Shift(months=12)
    if how != "previous_period":
        raise ToolInputError(f"compare_to must be one of {', '.join(COMPARISONS)}")
    months = _whole_months(period)
    if months:
        start = shift_months(period.start, -months)
        return Period(start, month_end(shift_months(start, months - 1))), Shift(months=months)
    unit = _to_date_unit(period)
    if unit is not None:
        return _shifted(period, unit), Shift(months=unit)
    days = (period.end - period.start).days + 1
    return (
        Period(period.start - dt.timedelta(days=days), period.start - dt.timedelta(days=1)),
        Shift(days=days),
    )


def _shifted(period: Period, months: int) -> Period:
    """The same dates ``months`` earlier (a month's end stays its month's end)."""
    assert period.start
    assert period.end
    start, end = shift_months(period.start, -months), shift_months(period.end, -months)
    if period.end == month_end(period.end):
        end = month_end(end)
    return Period(start, end)


def _to_date_unit(period: Period) -> int | None:
    """Months in the calendar unit a period runs to date in (1 a month, 3 a quarter, 12 a
    year), when it starts on that unit's first day and ends inside it; else None."""
    start, end = period.start, period.end
    if not (start and end) or start.day != 1:
        return None
    if (start.year, start.month) == (end.year, end.month):
        return 1
    if (
        start.month % 3 == 1
        and start.year == end.year
        and (end.month - 1) // 3 == (start.month - 1) // 3
    ):
        return 3
    if start.month == 1 and start.year == end.year:
        return 12
    return None


def _shift_between(earlier: dt.date, later: dt.date) -> Shift:
    if earlier.day == later.day == 1:
        return Shift(months=(later.year - earlier.year) * 12 + later.month - earlier.month)
    return Shift(days=(later - earlier).days)


def bucket(day: dt.date, grain: str, fiscal_years: Sequence[FiscalYear]) -> tuple[str, dt.date]:
    """(label, first day) of the ``grain`` bucket ``day`` falls in: 2026-03, 2026-Q1, 2026-W09."""
    if grain == "day":
        return day.isoformat(), day
    if grain == "week":
        monday = day - dt.timedelta(days=day.weekday())
        iso = monday.isocalendar()
        return f"{iso.year}-W{iso.week:02d}", monday
    if grain == "month":
        return f"{day.year}-{day.month:02d}", day.replace(day=1)
    if grain == "quarter":
        q = (day.month - 1) // 3 + 1
        return f"{day.year}-Q{q}", dt.date(day.year, 3 * q - 2, 1)
    if grain == "fiscal_year":
        for fy in fiscal_years:
            if fy.start <= day <= fy.end:
                return fy.name, fy.start
    return str(day.year), dt.date(day.year, 1, 1)


def fiscal_years_aligned_to_months(fiscal_years: Sequence[FiscalYear]) -> bool:
    return all(fy.start.day == 1 for fy in fiscal_years)


def bucket_bounds(
    label: str, grain: str, fiscal_years: Sequence[FiscalYear]
) -> tuple[dt.date, dt.date] | None:
    """The first and last day of the ``grain`` bucket labelled ``label`` (``bucket``'s
    inverse); None for a label that names no bucket of that grain."""
    try:
        if grain == "day":
            day = dt.date.fromisoformat(label)
            return day, day
        if grain == "week":
            year, week = label.split("-W")
            monday = dt.date.fromisocalendar(int(year), int(week), 1)
            return monday, monday + dt.timedelta(days=6)
        if grain == "month":
            first = dt.date.fromisoformat(f"{label}-01")
            return first, month_end(first)
        if grain == "quarter":
            year, quarter = label.split("-Q")
            first = dt.date(int(year), 3 * int(quarter) - 2, 1)
            return first, month_end(shift_months(first, 2))
        if grain == "fiscal_year":
            for fy in fiscal_years:
                if fy.name == label:
                    return fy.start, fy.end
        year_start = dt.date(int(label), 1, 1)
        return year_start, dt.date(int(label), 12, 31)
    except ValueError:
        return None
