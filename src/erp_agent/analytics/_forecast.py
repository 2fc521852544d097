"""Monthly forecast with a 95 % prediction interval.

≥ 24 months: Holt–Winters with additive trend and additive 12-month seasonality, smoothing
parameters fitted by least squares on one-step-ahead errors (scipy). Less history cannot
estimate a season, so: a straight line when the trend is significant (p < 0.05), else simple
exponential smoothing. Intervals follow Hyndman & Athanasopoulos, *Forecasting: Principles
and Practice*, table 9.8 (the additive models' h-step variances).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import optimize, stats

from erp_agent.analytics._result import (
    AnalysisResult,
    Row,
    chart,
    fmt,
    month_label,
    monthly,
    num,
)
from erp_agent.errors import ToolInputError

SEASON = 12
SEASONAL_MIN = 2 * SEASON
MIN_MONTHS = 3
Z95 = float(stats.norm.ppf(0.975))
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Fit:
    method: str
    point: Floats
    lower: Floats
    upper: Floats
    params: dict[str, float]
    sigma: float


# ------------------------------------------------------------------ Holt–Winters (additive)


def _hw_start(y: Floats) -> tuple[float, float, Floats]:
    """Initial state from the first two seasons (classical decomposition): the trend from the
    change in seasonal means, each season's deviation from its own detrended mean, and the
    level one step before the first month, so the first prediction is on the data."""
    means = np.array([y[:SEASON].mean(), y[SEASON : 2 * SEASON].mean()])
    trend = float((means[1] - means[0]) / SEASON)
    offsets = np.arange(SEASON) - (SEASON - 1) / 2
    season = np.mean(
        [y[k * SEASON : (k + 1) * SEASON] - means[k] - trend * offsets for k in (0, 1)], axis=0
    )
    season = season - season.mean()
    level = float(means[0] - trend * ((SEASON - 1) / 2 + 1))
    return level, trend, season.astype(float)


def _hw_run(
    y: Floats, alpha: float, beta: float, gamma: float
) -> tuple[float, Floats, float, Floats]:
    """One pass: returns (level, seasonals, trend, one-step errors)."""
    level, trend, season = _hw_start(y)
    errors = np.empty(len(y))
    for t, value in enumerate(y):
        s = season[t % SEASON]
        errors[t] = value - (level + trend + s)
        new_level = alpha * (value - s) + (1 - alpha) * (level + trend)
        trend = beta * (new_level - level) + (1 - beta) * trend
        season[t % SEASON] = gamma * (value - new_level) + (1 - gamma) * s
        level = new_level
    return level, season, trend, errors


def holt_winters(y: Floats, horizon: int) -> Fit:
    def sse(p: Floats) -> float:
        return float(np.sum(_hw_run(y, *p)[3] ** 2))

    bounds = [(0.0, 1.0)] * 3
    best = min(
        (
            optimize.minimize(sse, np.array(start), method="L-BFGS-B", bounds=bounds)
            for start in ((0.3, 0.1, 0.1), (0.7, 0.05, 0.3))
        ),
        key=lambda r: float(r.fun),
    )
    alpha, beta, gamma = (float(v) for v in best.x)
    level, season, trend, errors = _hw_run(y, alpha, beta, gamma)
    n = len(y)
    h = np.arange(1, horizon + 1)
    point = level + h * trend + season[(n + h - 1) % SEASON]
    sigma = float(np.sqrt(np.sum(errors**2) / max(n - 3, 1)))
    var = np.array(
        [
            1 + sum((alpha * (1 + j * beta) + gamma * (j % SEASON == 0)) ** 2 for j in range(1, k))
            for k in h
        ]
    )
    width = Z95 * sigma * np.sqrt(var)
    params = {"alpha": alpha, "beta": beta, "gamma": gamma}
    return Fit(
        "holt-winters additive (12-month season)",
        point,
        point - width,
        point + width,
        params,
        sigma,
    )


# ------------------------------------------------------------------ short histories


def simple_smoothing(y: Floats, horizon: int) -> Fit:
    def run(alpha: float) -> tuple[float, Floats]:
        level = float(y[0])
        errors = np.empty(len(y) - 1)
        for t, value in enumerate(y[1:]):
            errors[t] = value - level
            level = alpha * value + (1 - alpha) * level
        return level, errors

    result = optimize.minimize_scalar(
        lambda a: float(np.sum(run(a)[1] ** 2)), bounds=(0.0, 1.0), method="bounded"
    )
    alpha = float(result.x)
    level, errors = run(alpha)
    sigma = float(np.sqrt(np.sum(errors**2) / max(len(errors) - 1, 1)))
    h = np.arange(1, horizon + 1)
    point = np.full(horizon, level)
    width = Z95 * sigma * np.sqrt(1 + (h - 1) * alpha**2)
    return Fit(
        "simple exponential smoothing", point, point - width, point + width, {"alpha": alpha}, sigma
    )


def linear(y: Floats, horizon: int) -> Fit:
    n = len(y)
    x = np.arange(n, dtype=float)
    fit = stats.linregress(x, y)
    resid = y - (fit.intercept + fit.slope * x)
    s = float(np.sqrt(np.sum(resid**2) / (n - 2)))
    x0 = np.arange(n, n + horizon, dtype=float)
    point = fit.intercept + fit.slope * x0
    sxx = float(np.sum((x - x.mean()) ** 2))
    width = stats.t.ppf(0.975, n - 2) * s * np.sqrt(1 + 1 / n + (x0 - x.mean()) ** 2 / sxx)
    return Fit(
        "linear trend",
        point,
        point - width,
        point + width,
        {
            "slope": float(fit.slope),
            "intercept": float(fit.intercept),
            "p_value": float(fit.pvalue),
        },
        s,
    )


def fit_series(y: Floats, horizon: int) -> Fit:
    if len(y) >= SEASONAL_MIN:
        return holt_winters(y, horizon)
    if len(y) >= 4 and float(stats.linregress(np.arange(len(y)), y).pvalue) < 0.05:
        return linear(y, horizon)
    return simple_smoothing(y, horizon)


# ------------------------------------------------------------------ the analysis


def forecast(
    rows: Iterable[Row], *, months_ahead: int = 6, date: str = "date", amount: str = "amount"
) -> AnalysisResult:
    """Rows: ``{date, amount}`` documents or monthly totals. Forecasts the next months.

    The last month is used as given; if it is still running, filter it out first.
    """
    if not 1 <= months_ahead <= 24:
        raise ToolInputError("months_ahead must be between 1 and 24")
    series = monthly(rows, date, amount)
    if len(series) < MIN_MONTHS:
        raise ToolInputError(
            f"a forecast needs at least {MIN_MONTHS} months of history; {len(series)} found"
        )
    y = series.to_numpy(dtype=float)
    fit = fit_series(y, months_ahead)
    future = pd.period_range(series.index[-1] + 1, periods=months_ahead, freq="M")
    labels = [month_label(p) for p in series.index]
    future_labels = [month_label(p) for p in future]
    total = float(fit.point.sum())
    table = [
        {"month": m, "forecast": num(p), "lower_95": num(lo), "upper_95": num(hi)}
        for m, p, lo, hi in zip(future_labels, fit.point, fit.lower, fit.upper, strict=True)
    ]
    last12 = float(y[-12:].sum()) if len(y) >= 12 else None
    kpis = {
        "method": fit.method,
        "history_months": len(y),
        "months_ahead": months_ahead,
        "params": {k: num(v, 4) for k, v in fit.params.items()},
        "residual_sd": num(fit.sigma),
        "forecast_total": num(total),
        "forecast_total_lower_95": num(float(fit.lower.sum())),
        "forecast_total_upper_95": num(float(fit.upper.sum())),
        "next_month": table[0],
    }
    observations = [
        f"Method: {fit.method}, fitted on {len(y)} months ({labels[0]} to {labels[-1]}).",
        f"Next month ({future_labels[0]}) is forecast at {fmt(fit.point[0])}, with a 95% "
        f"prediction interval of {fmt(fit.lower[0])} to {fmt(fit.upper[0])}.",
        f"The {months_ahead} months to {future_labels[-1]} total {fmt(total)}.",
    ]
    if last12 is not None and months_ahead == 12:
        change = (total - last12) / last12 * 100 if last12 > 0 else None
        if change is not None:
            observations.append(
                f"That is {change:+.1f}% on the last 12 months' actual {fmt(last12)}."
            )
    if len(y) < SEASONAL_MIN:
        observations.append(
            f"With under {SEASONAL_MIN} months of history no seasonality is modelled."
        )
    pad = [None] * len(y)
    return AnalysisResult(
        kpis=kpis,
        chart=chart(
            "line",
            labels + future_labels,
            [
                ("Actual", [num(v) for v in y] + [None] * months_ahead),
                ("Forecast", pad + [num(v) for v in fit.point]),
                ("Lower 95%", pad + [num(v) for v in fit.lower]),
                ("Upper 95%", pad + [num(v) for v in fit.upper]),
            ],
        ),
        observations=observations,
        table=table,
    )
