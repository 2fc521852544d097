"""Each named analysis against small hand-made data whose answers were worked out by hand
(the arithmetic is in the comments), not by calling the code under test."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from erp_agent.analytics import (
    ageing,
    anomalies,
    bucket_labels,
    comparison_windows,
    concentration,
    forecast,
    monthly_trend,
    period_comparison,
    robust_z,
    with_shares,
)
from erp_agent.errors import ToolInputError

# ------------------------------------------------------------------ monthly trend


def test_monthly_trend_fills_empty_months_fits_a_line_and_projects() -> None:
    rows = [
        {"date": "2026-01-03", "amount": 60},
        {"date": "2026-01-28", "amount": 40},  # January: 100; February: nothing → 0
        {"date": "2026-03-10", "amount": 300},
        {"date": "2026-04-30", "amount": 200},
    ]
    result = monthly_trend(rows, months_ahead=2)
    k = result.kpis
    # y = [100, 0, 300, 200] at x = 0..3: x̄ 1.5, ȳ 150, Sxy 300, Sxx 5 → slope 60, intercept 60
    assert k["months"] == 4
    assert k["total"] == 600.0
    assert k["average_per_month"] == 150.0
    assert k["trend_slope_per_month"] == 60.0
    # fitted 60,120,180,240: SSres 32,000, SStot 50,000 → R² 0.36
    assert k["trend_r2"] == 0.36
    assert k["projection"] == [
        {"month": "2026-05", "amount": 300.0},
        {"month": "2026-06", "amount": 360.0},
    ]
    # April on March: (200 − 300) / 300 = −33.3 %; growth from a zero month is undefined
    assert k["last_month_growth_pct"] == -33.3
    assert [r["growth_pct"] for r in result.table] == [None, -100.0, None, -33.3]
    assert result.chart["type"] == "line"
    assert result.chart["data"]["labels"][-1] == "2026-06"
    assert any("600.00" in o for o in result.observations)


def test_monthly_trend_accepts_monthly_totals_and_refuses_one_month() -> None:
    with pytest.raises(ToolInputError, match="two months"):
        monthly_trend([{"date": "2026-01-01", "amount": 5}])


def test_monthly_trend_year_on_year_for_the_last_month() -> None:
    rows = [{"date": f"{2025 + m // 12}-{m % 12 + 1:02d}-01", "amount": 100 + m} for m in range(13)]
    # 2026-01 is 112; 2025-01 was 100 → +12.0 %
    assert monthly_trend(rows).kpis["last_month_yoy_pct"] == 12.0


# ------------------------------------------------------------------ period comparison


def test_quarter_on_quarter_compares_to_the_same_day_of_the_quarter() -> None:
    rows = [
        {"date": "2026-04-01", "amount": 100},
        {"date": "2026-05-20", "amount": "50.25"},
        {"date": "2026-05-21", "amount": 999},  # after as_of
        {"date": "2026-01-15", "amount": 80},
        {"date": "2026-02-20", "amount": 20},
        {"date": "2026-02-21", "amount": 500},  # past the same point of Q1
        {"date": "2025-12-31", "amount": 7},  # before both windows
    ]
    result = period_comparison(rows, as_of=dt.date(2026, 5, 20), period="quarter")
    k = result.kpis
    assert (k["current_from"], k["current_to"]) == ("2026-04-01", "2026-05-20")
    assert (k["previous_from"], k["previous_to"]) == ("2026-01-01", "2026-02-20")
    assert (k["current_total"], k["current_count"]) == (150.25, 2)
    assert (k["previous_total"], k["previous_count"]) == (100.0, 2)
    assert k["change"] == 50.25
    assert k["change_pct"] == 50.3  # 50.25 % to one place, half up
    assert k["comparison"] == "quarter on quarter"


def test_comparison_from_window_totals_uses_their_counts() -> None:
    rows = [
        {"date": "2026-04-01", "amount": "150.25", "count": 7},
        {"date": "2026-01-01", "amount": 100, "count": 3},
    ]
    k = period_comparison(rows, as_of=dt.date(2026, 5, 20), period="quarter", count="count").kpis
    assert (k["current_total"], k["current_count"]) == (150.25, 7)
    assert (k["previous_total"], k["previous_count"]) == (100.0, 3)


def test_windows_for_year_on_year_and_month_ends() -> None:
    assert comparison_windows(dt.date(2026, 3, 31), "year") == (
        (dt.date(2026, 1, 1), dt.date(2026, 3, 31)),
        (dt.date(2025, 1, 1), dt.date(2025, 3, 31)),
    )
    # March 31st has no February twin: clipped to the 28th
    assert comparison_windows(dt.date(2026, 3, 31), "month")[1] == (
        dt.date(2026, 2, 1),
        dt.date(2026, 2, 28),
    )
    assert comparison_windows(dt.date(2026, 5, 20), "quarter", year_on_year=True)[1] == (
        dt.date(2025, 4, 1),
        dt.date(2025, 5, 20),
    )


def test_no_percentage_change_from_an_empty_period() -> None:
    result = period_comparison(
        [{"date": "2026-02-01", "amount": 10}], as_of=dt.date(2026, 2, 10), period="month"
    )
    assert result.kpis["change_pct"] is None
    assert result.kpis["change"] == 10.0


# ------------------------------------------------------------------ ageing


def test_ageing_buckets_by_days_past_due() -> None:
    rows = [
        {"id": "A", "party": "P1", "outstanding": 100, "due_date": "2026-03-01"},  # 0 days
        {"id": "B", "party": "P1", "outstanding": 200, "due_date": "2026-02-28"},  # 1 day
        {"id": "C", "party": "P2", "outstanding": 300, "due_date": "2026-01-30"},  # 30 days
        {"id": "D", "party": "P3", "outstanding": 400, "due_date": "2026-01-29"},  # 31 days
        {"id": "E", "party": "P2", "outstanding": -50, "due_date": "2025-12-01"},  # 90 days
        {"id": "F", "party": "P4", "outstanding": 0, "due_date": "2020-01-01"},  # settled
    ]
    result = ageing(rows, as_of=dt.date(2026, 3, 1), ranges=(30, 60))
    k = result.kpis
    assert bucket_labels((30, 60)) == ["Not yet due", "1-30", "31-60", "61+"]
    assert k["buckets"] == [
        {"bucket": "Not yet due", "amount": 100.0, "documents": 1},
        {"bucket": "1-30", "amount": 500.0, "documents": 2},
        {"bucket": "31-60", "amount": 400.0, "documents": 1},
        {"bucket": "61+", "amount": -50.0, "documents": 1},
    ]
    assert k["total_outstanding"] == 950.0
    assert k["documents"] == 5
    assert k["overdue"] == 850.0
    assert k["overdue_share_pct"] == 89.5  # 850 / 950
    # (200·1 + 300·30 + 400·31 − 50·90) / 850 = 17,100 / 850 = 20.12
    assert k["average_days_overdue"] == 20.1
    assert k["oldest_days_overdue"] == 90
    # overdue by party: P3 400, P2 300 − 50 = 250, P1 200
    assert result.table == [
        {"party": "P3", "overdue": 400.0},
        {"party": "P2", "overdue": 250.0},
        {"party": "P1", "overdue": 200.0},
    ]


@pytest.mark.parametrize("ranges", [[], [0, 30], [60, 30], [30, 30]])
def test_ageing_refuses_bad_ranges(ranges: list[int]) -> None:
    with pytest.raises(ToolInputError, match="increasing"):
        ageing([], as_of=dt.date(2026, 1, 1), ranges=ranges)


# ------------------------------------------------------------------ concentration


def test_concentration_top_share_pareto_and_hhi() -> None:
    rows = [
        {"key": "a", "amount": 30},
        {"key": "a", "amount": 20},
        {"key": "b", "amount": 30},
        {"key": "c", "amount": 10},
        {"key": "d", "amount": "10.00"},
        {"key": "e", "amount": 5},
        {"key": "e", "amount": -5},  # nets to zero: left out
        {"key": "f", "amount": -3},  # negative: left out
    ]
    k = concentration(rows, top_n=2).kpis
    assert k["total"] == 100.0
    assert (k["keys"], k["excluded"]) == (4, 2)
    assert k["top_n_share_pct"] == 80.0  # (50 + 30) / 100
    assert k["largest"] == "a"
    assert k["largest_share_pct"] == 50.0
    assert k["pareto_80_count"] == 2  # 50 % < 80 %, 80 % ≥ 80 %
    assert k["hhi"] == 3600.0  # 50² + 30² + 10² + 10²
    assert k["hhi_band"] == "highly concentrated"


def test_concentration_chart_groups_the_rest_as_others() -> None:
    rows = [{"key": k, "amount": v} for k, v in zip("abcd", [40, 30, 20, 10], strict=True)]
    result = concentration(rows, top_n=2)
    assert result.chart["data"]["labels"] == ["a", "b", "Others"]
    assert result.chart["data"]["datasets"][0]["data"] == [40.0, 30.0, 30.0]


# ------------------------------------------------------------------ forecast


def _months(values: list[float], start_year: int = 2023) -> list[dict[str, object]]:
    return [
        {"date": f"{start_year + i // 12}-{i % 12 + 1:02d}-01", "amount": v}
        for i, v in enumerate(values)
    ]


def test_flat_history_forecasts_the_same_level() -> None:
    result = forecast(_months([50.0] * 6), months_ahead=3)
    assert result.kpis["method"] == "simple exponential smoothing"
    assert [r["forecast"] for r in result.table] == [50.0, 50.0, 50.0]
    assert [r["upper_95"] - r["lower_95"] for r in result.table] == [0.0, 0.0, 0.0]


def test_short_trending_history_uses_a_line_with_a_widening_interval() -> None:
    wiggle = [0.5 if i % 2 else -0.5 for i in range(12)]
    values = [10 + 2 * i + w for i, w in enumerate(wiggle)]
    result = forecast(_months(values), months_ahead=3)
    assert result.kpis["method"] == "linear trend"
    slope, intercept = np.polyfit(np.arange(12), values, 1)
    expected = [round(intercept + slope * x, 2) for x in (12, 13, 14)]
    assert [r["forecast"] for r in result.table] == pytest.approx(expected, abs=0.01)
    widths = [r["upper_95"] - r["lower_95"] for r in result.table]
    assert 0 < widths[0] < widths[1] < widths[2]


def test_seasonal_history_uses_holt_winters_and_follows_the_season() -> None:
    season = [10 * math.sin(2 * math.pi * m / 12) for m in range(12)]
    values = [200 + 3 * t + season[t % 12] for t in range(36)]
    result = forecast(_months(values), months_ahead=12)
    assert result.kpis["method"].startswith("holt-winters")
    truth = [200 + 3 * t + season[t % 12] for t in range(36, 48)]
    for row, expected in zip(result.table, truth, strict=True):
        assert row["forecast"] == pytest.approx(expected, rel=0.02)
        assert row["lower_95"] <= row["forecast"] <= row["upper_95"]


def test_forecast_needs_three_months() -> None:
    with pytest.raises(ToolInputError, match="at least 3 months"):
        forecast(_months([1.0, 2.0]))


# ------------------------------------------------------------------ anomalies


def test_robust_z_by_hand() -> None:
    values = [10, 11, 12, 13, 14, 15, 16, 17, 18, 1000]
    # median 14.5; |deviations| sorted .5 .5 1.5 1.5 2.5 2.5 3.5 3.5 4.5 985.5 → MAD 2.5
    z = robust_z(values)
    assert z[-1] == pytest.approx(0.6745 * 985.5 / 2.5)
    assert z[0] == pytest.approx(0.6745 * -4.5 / 2.5)


def test_robust_z_falls_back_to_mean_absolute_deviation_when_mad_is_zero() -> None:
    z = robust_z([5, 5, 5, 5, 5, 100])
    # median 5, MAD 0; mean |dev| = 95 / 6 → z = 95 / (1.2533 · 15.833) ≈ 4.79
    assert z[-1] == pytest.approx(95 / (1.2533 * 95 / 6))
    assert list(robust_z([3, 3, 3])) == [0, 0, 0]


def test_anomalies_flag_documents_and_days() -> None:
    rows = [
        {"id": f"D{i}", "date": f"2026-01-{i + 1:02d}", "amount": a}
        for i, a in enumerate([10, 11, 12, 13, 14, 15, 16, 17, 18, 1000])
    ]
    result = anomalies(rows)
    assert result.kpis["flagged_documents"] == 1
    assert result.kpis["flagged_high"] == 1
    assert result.table[0]["id"] == "D9"
    assert result.table[0]["robust_z"] == round(0.6745 * 985.5 / 2.5, 1)
    # one document a day: the daily totals are the same series
    assert result.kpis["flagged_days"] == 1
    assert result.kpis["unusual_days"][0]["date"] == "2026-01-10"


# ------------------------------------------------------------------ shares


def test_shares_are_exact_decimal_percentages() -> None:
    rows, totals = with_shares(
        [{"k": "a", "s": 0.1}, {"k": "b", "s": 0.2}, {"k": "c", "s": None}], ["s"]
    )
    assert totals == {"s": pytest.approx(0.3)}
    # 0.1 / 0.3 = 33.333… → 33.33; 0.2 / 0.3 → 66.67 (float division would give 33.33 too,
    # but Decimal keeps 0.1 + 0.2 exactly 0.3)
    assert [r["share_s"] for r in rows] == [33.33, 66.67, None]
    zero, _ = with_shares([{"s": 0}], ["s"])
    assert zero[0]["share_s"] is None
