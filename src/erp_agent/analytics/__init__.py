"""Named analyses as pure functions: rows in, ``AnalysisResult`` out (KPIs, a Chart.js-shaped
chart, observations written from computed figures, and a small table — never the rows).

Each documents the row fields it reads (its data contract); the tools in
``erp_agent.tools.modules.analytics`` fetch exactly those fields as the user.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from erp_agent.analytics.defaults import DEFAULT_RANGES, THRESHOLD

# The analyses need pandas/numpy/scipy, which take seconds to import: load them on first use so
# that starting the agent (and every CLI command) does not pay for it.
_WHERE = {
    "AnalysisResult": "_result", "chart": "_result", "ageing": "_ageing", "bucket_labels": "_ageing",
    "anomalies": "_anomalies", "robust_z": "_anomalies", "concentration": "_concentration",
    "forecast": "_forecast", "with_shares": "shares", "comparison_windows": "trend",
    "monthly_trend": "trend", "period_comparison": "trend",
}  # fmt: skip

if TYPE_CHECKING:
    from erp_agent.analytics._ageing import ageing, bucket_labels
    from erp_agent.analytics._anomalies import anomalies, robust_z
    from erp_agent.analytics._concentration import concentration
    from erp_agent.analytics._forecast import forecast
    from erp_agent.analytics._result import AnalysisResult, chart
    from erp_agent.analytics.shares import with_shares
    from erp_agent.analytics.trend import comparison_windows, monthly_trend, period_comparison


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "DEFAULT_RANGES",
    "THRESHOLD",
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
