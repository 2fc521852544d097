"""Named analyses as pure functions: rows in, ``AnalysisResult`` out (KPIs, a Chart.js-shaped
chart, observations written from computed figures, and a small table — never the rows).

Each documents the row fields it reads (its data contract); the tools in
``erp_agent.tools.modules.analytics`` fetch exactly those fields as the user.
"""

from __future__ import annotations

from erp_agent.analytics._result import AnalysisResult, chart
from erp_agent.analytics.ageing import DEFAULT_RANGES, ageing, bucket_labels
from erp_agent.analytics.anomalies import anomalies, robust_z
from erp_agent.analytics.concentration import concentration
from erp_agent.analytics.forecast import forecast
from erp_agent.analytics.shares import with_shares
from erp_agent.analytics.trend import comparison_windows, monthly_trend, period_comparison

__all__ = [
    "DEFAULT_RANGES",
    "AnalysisResult",
    "ageing",
    "anomalies",
    "bucket_labels",
    "chart",
    "comparison_windows",
    "concentration",
    "forecast",
    "monthly_trend",
    "period_comparison",
    "robust_z",
    "with_shares",
]
