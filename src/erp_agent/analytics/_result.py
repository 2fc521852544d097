"""What every named analysis returns, and the small helpers they share.

Every figure is computed here in code; ``observations`` are sentences built from those figures,
so the model explains numbers it was given and never derives one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import pandas as pd

from erp_agent.errors import ToolInputError

Row = Mapping[str, Any]
Chart = dict[str, Any]
CHART_TYPES = frozenset({"bar", "line", "pie", "doughnut"})
CENT = Decimal("0.01")


@dataclass
class AnalysisResult:
    """KPIs, a Chart.js-shaped chart, written observations, and a small table (never the rows)."""

    kpis: dict[str, Any]
    chart: Chart
    observations: list[str]
    table: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def chart(kind: str, labels: Sequence[str], datasets: Iterable[tuple[str, Sequence[Any]]]) -> Chart:
    """``{type, data: {labels, datasets: [{label, data}]}}``; values must be JSON numbers."""
    if kind not in CHART_TYPES:
        raise ValueError(f"chart type {kind!r} is not one of {sorted(CHART_TYPES)}")
    return {
        "type": kind,
        "data": {
            "labels": list(labels),
            "datasets": [{"label": label, "data": list(data)} for label, data in datasets],
        },
    }


def money(value: Any) -> Decimal:
    """An amount as an exact Decimal (floats through their shortest repr, not their binary)."""
    if value is None or value == "":
        return Decimal(0)
    if isinstance(value, Decimal):
        return value
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise ToolInputError(f"{value!r} is not a number") from None


def cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def num(value: Decimal | float, places: int = 2) -> float:
    """A figure for JSON, rounded half-up to ``places`` decimals."""
    exact = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    return float(exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def fmt(value: Decimal | float, places: int = 2) -> str:
    """``1,234.50`` — how figures read in observations."""
    return f"{num(value, places):,.{places}f}"


def pct(value: float | Decimal | None, places: int = 1) -> str:
    return "n/a" if value is None else f"{float(value):+.{places}f}%"


def to_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ToolInputError(f"{value!r} is not a date (YYYY-MM-DD)") from None


def frame(rows: Iterable[Row], columns: Sequence[str]) -> pd.DataFrame:
    """Rows as a DataFrame with exactly ``columns``; a missing column is a data-contract error."""
    df = pd.DataFrame(list(rows))
    if df.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ToolInputError(f"rows lack the field(s) {', '.join(missing)}")
    return df[list(columns)]


def dates(values: pd.Series) -> pd.Series:
    """ISO dates (or datetimes) as datetime64, vectorised; an unparsable one is an error."""
    parsed = pd.to_datetime(values.astype(str).str[:10], format="%Y-%m-%d", errors="coerce")
    bad = values[parsed.isna()]
    if len(bad):
        raise ToolInputError(f"{bad.iloc[0]!r} is not a date (YYYY-MM-DD)")
    return parsed


def monthly(rows: Iterable[Row], date: str = "date", amount: str = "amount") -> pd.Series:
    """Totals per calendar month (a PeriodIndex), months with no rows filled with 0.

    Rows may be documents or totals already grouped by month: both sum the same way.
    """
    df = frame(rows, [date, amount])
    if df.empty:
        return pd.Series(dtype=float, index=pd.PeriodIndex([], freq="M"))
    months = dates(df[date]).dt.to_period("M")
    values = pd.to_numeric(df[amount], errors="coerce").fillna(0.0).astype(float)
    totals = values.groupby(months).sum().sort_index()
    full = pd.period_range(totals.index.min(), totals.index.max(), freq="M")
    return totals.reindex(full, fill_value=0.0)


def month_label(period: pd.Period) -> str:
    return str(period.strftime("%Y-%m"))
