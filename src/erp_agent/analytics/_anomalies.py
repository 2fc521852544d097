"""Unusual amounts by the robust (modified) z-score of Iglewicz and Hoaglin:
z = 0.6745 (x − median) / MAD, flagged when |z| > 3.5 — on document amounts and on daily totals.

Median and MAD are not pulled by the outliers themselves, unlike a mean and standard deviation.
When more than half the values are equal the MAD is 0; the mean absolute deviation (× 1.2533,
its ratio to σ for a normal distribution) stands in, as the authors recommend.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from erp_agent.analytics._result import (
    AnalysisResult,
    Row,
    chart,
    dates,
    fmt,
    frame,
    num,
    to_date,
)
from erp_agent.analytics.defaults import THRESHOLD

_K = 0.6745
_MEAN_AD_K = 1.2533


def robust_z(values: Any) -> Any:
    """Modified z-scores of ``values`` (all 0 when every value is the same)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return x
    median = float(np.median(x))
    mad = float(np.median(np.abs(x - median)))
    if mad > 0:
        return _K * (x - median) / mad
    mean_ad = float(np.mean(np.abs(x - median)))
    if mean_ad == 0:
        return np.zeros_like(x)
    return (x - median) / (_MEAN_AD_K * mean_ad)


def anomalies(
    rows: Iterable[Row],
    *,
    threshold: float = THRESHOLD,
    top: int = 20,
    id_field: str = "id",
    date: str = "date",
    amount: str = "amount",
    party: str | None = None,
) -> AnalysisResult:
    """Rows: ``{id, date, amount}`` (+ ``party``). Flags documents and days with |z| > threshold."""
    cols = [id_field, date, amount] + ([party] if party else [])
    df = frame(rows, cols)
    amounts = pd.to_numeric(df[amount], errors="coerce").fillna(0.0).astype(float)
    z = robust_z(amounts.to_numpy())
    docs = df.assign(_amount=amounts, _z=z)
    flagged = docs[np.abs(docs["_z"]) > threshold].sort_values(
        "_z", key=lambda s: -np.abs(s), kind="stable"
    )
    daily = (
        amounts.groupby(dates(df[date])).sum().sort_index() if len(df) else pd.Series(dtype=float)
    )
    dz = robust_z(daily.to_numpy())
    flagged_days = [
        (d.date(), float(v), float(s))
        for d, v, s in zip(daily.index, daily.to_numpy(), dz, strict=True)
        if abs(s) > threshold
    ]
    flagged_days.sort(key=lambda t: -abs(t[2]))
    median = float(np.median(amounts)) if len(amounts) else 0.0
    kpis = {
        "documents": len(df),
        "threshold": threshold,
        "median_amount": num(median),
        "flagged_documents": len(flagged),
        "flagged_high": int((flagged["_z"] > 0).sum()),
        "flagged_low": int((flagged["_z"] < 0).sum()),
        "days": len(daily),
        "median_daily_total": num(float(np.median(daily))) if len(daily) else 0.0,
        "flagged_days": len(flagged_days),
    }
    table: list[dict[str, Any]] = []
    for _, row in flagged.head(top).iterrows():
        item = {
            "id": row[id_field],
            "date": to_date(row[date]).isoformat(),
            "amount": num(row["_amount"]),
            "robust_z": num(row["_z"], 1),
        }
        if party:
            item["party"] = row[party]
        table.append(item)
    observations = [
        f"{len(df)} documents checked; the median amount is {fmt(median)}. {len(flagged)} "
        f"have a robust z-score beyond ±{threshold} ({kpis['flagged_high']} unusually high, "
        f"{kpis['flagged_low']} unusually low)."
    ]
    if table:
        first = table[0]
        observations.append(
            f"The most unusual is {first['id']} on {first['date']} at {fmt(first['amount'])} "
            f"(z = {first['robust_z']})."
        )
    observations.append(
        f"Of {len(daily)} days with documents, {len(flagged_days)} have an unusual daily total"
        + (
            "; the most unusual is "
            + f"{flagged_days[0][0].isoformat()} at {fmt(flagged_days[0][1])} "
            + f"(z = {flagged_days[0][2]:.1f})."
            if flagged_days
            else "."
        )
    )
    return AnalysisResult(
        kpis={
            **kpis,
            "unusual_days": [
                {"date": d.isoformat(), "total": num(v), "robust_z": num(s, 1)}
                for d, v, s in flagged_days[:top]
            ],
        },
        chart=chart(
            "bar",
            [d.isoformat() for d, _, _ in flagged_days[:top]],
            [("Daily total", [num(v) for _, v, _ in flagged_days[:top]])],
        ),
        observations=observations,
        table=table,
    )
