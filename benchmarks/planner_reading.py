"""The offline planner's reading of a question, without the ERP: ``understand`` (kind,
records, period, names) and the figures its words name (``metric_scores``), over every
question of the paraphrase suite and the development sets, as the planner asks them (several
times per request). Prints the median and p95 per question, first asked and asked again,
and the same with the figure scores' cache bypassed — the ratio is the cache's effect.

    uv run python benchmarks/planner_reading.py
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from pathlib import Path

from _common import load_line, percentile

from erp_agent.catalog import load_catalog
from erp_agent.evals.spec import load_suites
from erp_agent.planner import metric_terms
from erp_agent.planner.intents import understand

ROOT = Path(__file__).resolve().parent.parent
TODAY = dt.date(2026, 11, 30)
ASKED = 6  # how often one request reads its figures (plan, figure, follow-up, answer…)


def questions() -> list[str]:
    paths = sorted((ROOT / "tests/erp_agent/data").glob("dev_v*.yaml"))
    suites = load_suites(["paraphrase", *map(str, paths)])
    return [c.question for s in suites for c in s.cases if "{" not in c.question]


def timed(texts: list[str], *, cached: bool) -> list[float]:
    catalog = load_catalog()
    out = []
    for text in texts:
        if not cached:
            metric_terms._scores.cache_clear()
        started = time.perf_counter()
        understand(catalog, "erpnext", text, TODAY)
        for _ in range(ASKED):
            if not cached:
                metric_terms._scores.cache_clear()
            metric_terms.metric_scores(catalog, text)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    texts = questions()
    print(f"{len(texts)} questions; {load_line()}")
    for label, cached in (("figure scores cached", True), ("cache bypassed", False)):
        metric_terms._scores.cache_clear()
        first = timed(texts, cached=cached)
        again = timed(texts, cached=cached)
        print(f"{label:22} first: median {statistics.median(first):6.2f} ms, "
              f"p95 {percentile(first, 95):6.2f} ms; again: median "
              f"{statistics.median(again):6.2f} ms, p95 {percentile(again, 95):6.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
