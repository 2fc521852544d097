"""Period columns, as ERPNext's financial statements and analytics reports build them."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from dateutil.relativedelta import relativedelta

from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError
from demo_erp.reports._common import fiscal_year, get_date

MONTHS_PER = {"Monthly": 1, "Quarterly": 3, "Half-Yearly": 6, "Yearly": 12}


@dataclass(frozen=True)
class Period:
    key: str
    label: str
    from_date: dt.date
    to_date: dt.date
    fiscal_year: str  # of to_date: P&L accumulation restarts with each fiscal year


def _fiscal_year_dates(ctx: Ctx, name: Any) -> tuple[dt.date, dt.date]:
    row = ctx.conn.execute(
        'select year_start_date, year_end_date from "tabFiscal Year" where name = ?', (name,)
    ).fetchone()
    if row is None:
        raise ValidationError(f"Fiscal Year {name} not found")
    return dt.date.fromisoformat(row[0]), dt.date.fromisoformat(row[1])


def _label(periodicity: str, start: dt.date, end: dt.date) -> str:
    if periodicity == "Yearly":
        return str(start.year) if start.year == end.year else f"{start.year}-{end.year}"
    return f"{start:%b %y}-{end:%b %y}"


def financial_periods(ctx: Ctx, filters: dict[str, Any], accumulated: bool) -> list[Period]:
    """ERPNext ``get_period_list``: periods of the fiscal years (or date range) chosen."""
    periodicity = str(filters.get("periodicity") or "Yearly")
    if periodicity not in MONTHS_PER:
        raise ValidationError(f"Invalid periodicity: {periodicity}")
    date_range = filters.get("filter_based_on") == "Date Range"
    if date_range:
        start = get_date(filters, "period_start_date")
        end = get_date(filters, "period_end_date")
    else:
        current = fiscal_year(ctx, ctx.today)[0]
        from_fy = filters.get("from_fiscal_year") or filters.get("fiscal_year") or current
        to_fy = filters.get("to_fiscal_year") or from_fy
        start = _fy_start(ctx, from_fy)
        end = _fy_end(ctx, to_fy)
    if start > end:
        raise ValidationError("From Date must be before To Date")
    step = MONTHS_PER[periodicity]
    months = (end.year * 12 + end.month) - (start.year * 12 + start.month) + 1
    periods: list[tuple[dt.date, dt.date]] = []
    cursor = start
    for i in range(-(-months // step)):
        first = cursor.replace(day=1) if i == 0 and date_range else cursor
        nxt = first + relativedelta(months=step)
        to_date = min(nxt - dt.timedelta(days=1), end)
        periods.append((cursor, to_date))
        cursor = nxt
        if to_date == end:
            break
    out = []
    for from_date, to_date in periods:
        if periodicity == "Monthly" and not accumulated:
            label = f"{to_date:%b %Y}"
        elif not accumulated:
            label = _label(periodicity, from_date, to_date)
        else:
            label = _label(periodicity, fiscal_year(ctx, from_date)[1], to_date)
        key = f"{to_date:%b_%Y}".lower()
        out.append(Period(key, label, from_date, to_date, fiscal_year(ctx, to_date)[0]))
    return out


def _fy_start(ctx: Ctx, name: Any) -> dt.date:
    if _is_calendar_fallback(ctx, name):
        return dt.date(int(name), 1, 1)
    return _fiscal_year_dates(ctx, name)[0]


def _fy_end(ctx: Ctx, name: Any) -> dt.date:
    if _is_calendar_fallback(ctx, name):
        return dt.date(int(name), 12, 31)
    return _fiscal_year_dates(ctx, name)[1]


def _is_calendar_fallback(ctx: Ctx, name: Any) -> bool:
    """A 4-digit year with no Fiscal Year record stands for the calendar year."""
    if not re.fullmatch(r"\d{4}", str(name)):
        return False
    row = ctx.conn.execute('select 1 from "tabFiscal Year" where name = ?', (str(name),))
    return row.fetchone() is None


# ---------------------------------------------------------------- analytics (Sales Analytics)

_INCREMENT = {"Monthly": 1, "Quarterly": 3, "Half-Yearly": 6, "Yearly": 12}


def analytics_period_ends(
    ctx: Ctx, range_: str, from_date: dt.date, to_date: dt.date
) -> list[dt.date]:
    """ERPNext ``get_period_date_ranges``: the end date of each column (at most 52)."""
    if range_ in ("Monthly", "Quarterly", "Half-Yearly"):
        start = from_date.replace(day=1)
    elif range_ == "Yearly":
        start = fiscal_year(ctx, from_date)[1]
    else:
        start = from_date - dt.timedelta(days=from_date.weekday())
    ends: list[dt.date] = []
    for _ in range(52):
        if range_ == "Weekly":
            end = start + dt.timedelta(days=6)
        else:
            end = start + relativedelta(months=_INCREMENT.get(range_, 1), days=-1)
        end = min(end, to_date)
        ends.append(end)
        start = end + dt.timedelta(days=1)
        if end == to_date:
            break
    return ends


def analytics_period(ctx: Ctx, range_: str, day: dt.date) -> str:
    """The column label a date falls in: 'Week 5 2025', 'Jan 2025', 'Quarter 1 2025', FY name."""
    if range_ == "Weekly":
        return f"Week {day.isocalendar()[1]} {day.year}"
    if range_ == "Monthly":
        return f"{day:%b} {day.year}"
    if range_ == "Quarterly":
        return f"Quarter {(day.month - 1) // 3 + 1} {day.year}"
    if range_ == "Half-Yearly":
        return f"Half {(day.month - 1) // 6 + 1} {day.year}"
    return fiscal_year(ctx, day)[0]


def scrub(label: str) -> str:
    """Frappe's ``scrub``: lower case, spaces and dashes to underscores."""
    return label.replace(" ", "_").replace("-", "_").lower()
