"""Monthly trend with growth rates and a linear projection; period-over-period comparison."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from decimal import Decimal
from typing import Literal

import numpy as np
import pandas as pd

from erp_agent.analytics._result import (
    AnalysisResult,
    Row,
    chart,
    dates,
    fmt,
    frame,
    money,
    month_label,
    monthly,
    num,
    pct,
)
from erp_agent.errors import ToolInputError

Period = Literal["year", "quarter", "month"]


def _growth(current: float, previous: float) -> float | None:
    # Growth from zero (or a negative base) has no meaningful percentage.
    return None if previous <= 0 else (current - previous) / previous * 100


def monthly_trend(
    rows: Iterable[Row], *, months_ahead: int = 3, date: str = "date", amount: str = "amount"
) -> AnalysisResult:
    """Totals per month, month-on-month growth, and a least-squares line projected ahead.

    Rows: ``{date, amount}`` documents, or one row per month already totalled.
    """
    series = monthly(rows, date, amount)
    if len(series) < 2:
        raise ToolInputError("a trend needs at least two months of data; widen the filters")
    values = series.to_numpy(dtype=float)
    x = np.arange(len(values), dtype=float)
    slope, intercept = np.polyfit(x, values, 1)
    fitted = slope * x + intercept
    ss_res = float(np.sum((values - fitted) ** 2))
    ss_tot = float(np.sum((values - values.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    future = pd.period_range(series.index[-1] + 1, periods=months_ahead, freq="M")
    projected = slope * np.arange(len(values), len(values) + months_ahead) + intercept
    labels = [month_label(p) for p in series.index]
    growth = [None] + [_growth(values[i], values[i - 1]) for i in range(1, len(values))]
    yoy = _growth(values[-1], values[-13]) if len(values) >= 13 else None  # same month last year
    valid = [g for g in growth if g is not None]
    total = sum((money(v) for v in values), start=money(0))
    kpis = {
        "months": len(values),
        "first_month": labels[0],
        "last_month": labels[-1],
        "total": num(total),
        "average_per_month": num(total / len(values)),
        "last_month_total": num(values[-1]),
        "last_month_growth_pct": None if growth[-1] is None else num(growth[-1], 1),
        "last_month_yoy_pct": None if yoy is None else num(yoy, 1),
        "average_monthly_growth_pct": num(float(np.mean(valid)), 1) if valid else None,
        "trend_slope_per_month": num(slope),
        "trend_r2": num(r2, 3),
        "projection": [
            {"month": month_label(p), "amount": num(v)}
            for p, v in zip(future, projected, strict=True)
        ],
    }
    best = int(np.argmax(values))
    worst = int(np.argmin(values))
    direction = "rising" if slope > 0 else "falling" if slope < 0 else "flat"
    observations = [
        f"Over {len(values)} months ({labels[0]} to {labels[-1]}) the total was {fmt(total)}, "
        f"an average of {fmt(total / len(values))} a month.",
        f"The fitted trend is {direction} by {fmt(abs(slope))} a month (R² {r2:.2f}).",
        f"The highest month was {labels[best]} at {fmt(values[best])}; the lowest was "
        f"{labels[worst]} at {fmt(values[worst])}.",
        f"{labels[-1]} came in at {fmt(values[-1])}, {pct(growth[-1])} on the month before"
        + (f" and {pct(yoy)} on the same month last year." if yoy is not None else "."),
    ]
    if months_ahead:
        observations.append(
            f"If the linear trend holds, {month_label(future[-1])} would be about "
            f"{fmt(projected[-1])} (a straight-line projection, not a forecast of seasonality)."
        )
    table = [
        {"month": label, "amount": num(v), "growth_pct": None if g is None else num(g, 1)}
        for label, v, g in zip(labels, values, growth, strict=True)
    ][-12:]  # the chart has every month; the table, the last year
    return AnalysisResult(
        kpis=kpis,
        chart=chart(
            "line",
            labels + [month_label(p) for p in future],
            [
                ("Actual", [num(v) for v in values] + [None] * months_ahead),
                ("Trend", [num(v) for v in fitted] + [num(v) for v in projected]),
            ],
        ),
        observations=observations,
        table=table,
    )


# ------------------------------------------------------------------ period over period


def period_start(day: dt.date, period: Period) -> dt.date:
    if period == "year":
        return day.replace(month=1, day=1)
    if period == "quarter":
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    return day.replace(day=1)


def _shift(day: dt.date, months: int) -> dt.date:
    """The same day ``months`` earlier, clipped to the month's end (31 Mar → 28/29 Feb)."""
    index = day.year * 12 + day.month - 1 - months
    year, month = divmod(index, 12)
    last = (pd.Timestamp(year=year, month=month + 1, day=1) + pd.offsets.MonthEnd(0)).day
    return dt.date(year, month + 1, min(day.day, last))


_MONTHS = {"year": 12, "quarter": 3, "month": 1}


def comparison_windows(
    as_of: dt.date, period: Period, *, year_on_year: bool = False
) -> tuple[tuple[dt.date, dt.date], tuple[dt.date, dt.date]]:
    """(current, previous) date windows, both inclusive and equally far into their period.

    The previous window is the preceding period (quarter on quarter), or the same period a
    year earlier when ``year_on_year``; comparing to-date with to-date keeps it like for like.
    """
    start = period_start(as_of, period)
    back = 12 if year_on_year else _MONTHS[period]
    return (start, as_of), (_shift(start, back), _shift(as_of, back))


def _label(start: dt.date, period: Period) -> str:
    if period == "year":
        return str(start.year)
    if period == "quarter":
        return f"{start.year}-Q{(start.month - 1) // 3 + 1}"
    return start.strftime("%Y-%m")


def period_comparison(
    rows: Iterable[Row],
    *,
    as_of: dt.date,
    period: Period = "year",
    year_on_year: bool = False,
    date: str = "date",
    amount: str = "amount",
    count: str | None = None,
) -> AnalysisResult:
    """This period to date against the previous one (or the same one a year earlier), to the
    same point. Rows: ``{date, amount}`` documents, rows outside both windows ignored; or
    totals already taken over each window, with ``count`` naming their number of records."""
    (cur_from, cur_to), (prev_from, prev_to) = comparison_windows(
        as_of, period, year_on_year=year_on_year
    )
    df = frame(rows, [date, amount] + ([count] if count else []))
    days = dates(df[date])

    def window(lo: dt.date, hi: dt.date) -> tuple[int, Decimal]:
        inside = (days >= pd.Timestamp(lo)) & (days <= pd.Timestamp(hi))
        picked = [money(v) for v in df[amount][inside]]
        n = int(pd.to_numeric(df[count][inside]).sum()) if count else len(picked)
        return n, sum(picked, start=Decimal(0))

    cur_n, current = window(cur_from, cur_to)
    prev_n, previous = window(prev_from, prev_to)
    change = current - previous
    change_pct = None if previous <= 0 else float(change / previous * 100)
    cur_label = _label(cur_from, period)
    prev_label = _label(prev_from, period)
    kind = "year on year" if year_on_year or period == "year" else f"{period} on {period}"
    kpis = {
        "comparison": kind,
        "current_period": cur_label,
        "current_from": cur_from.isoformat(),
        "current_to": cur_to.isoformat(),
        "current_total": num(current),
        "current_count": cur_n,
        "previous_period": prev_label,
        "previous_from": prev_from.isoformat(),
        "previous_to": prev_to.isoformat(),
        "previous_total": num(previous),
        "previous_count": prev_n,
        "change": num(change),
        "change_pct": None if change_pct is None else num(change_pct, 1),
    }
    word = "up" if change > 0 else "down" if change < 0 else "unchanged"
    observations = [
        f"{cur_label} to {cur_to.isoformat()}: {fmt(current)} over {cur_n} records, against "
        f"{fmt(previous)} over {prev_n} in {prev_label} to {prev_to.isoformat()} ({kind}, "
        "to the same point in the period).",
        f"That is {word} {fmt(abs(change))}"
        + (
            f" ({pct(change_pct)})."
            if change_pct is not None
            else " (no percentage: the earlier period had no positive total)."
        ),
    ]
    if cur_n and prev_n:
        cur_avg, prev_avg = current / cur_n, previous / prev_n
        observations.append(f"The average per record was {fmt(cur_avg)} against {fmt(prev_avg)}.")
    return AnalysisResult(
        kpis=kpis,
        chart=chart("bar", [prev_label, cur_label], [("Total", [num(previous), num(current)])]),
        observations=observations,
        table=[
            {
                "period": prev_label,
                "from": prev_from.isoformat(),
                "to": prev_to.isoformat(),
                "total": num(previous),
                "count": prev_n,
            },
            {
                "period": cur_label,
                "from": cur_from.isoformat(),
                "to": cur_to.isoformat(),
                "total": num(current),
                "count": cur_n,
            },
        ],
    )
