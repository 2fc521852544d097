"""Metric-layer benchmarks: how many metrics and dimensions the catalog defines; what
``metrics.query`` adds over the raw connector aggregate for the same query (p50, target ≤ 5%);
and monthly revenue over N bulk invoices through the ERP's pushdown (target ≤ 1 s at 1M), beside
its anchor from the same run: the plain SQL GROUP BY of the same figures run directly on the
demo ERP's SQLite file (no HTTP, no permissions), with the machine's load.

    uv run python benchmarks/metrics.py --invoices 1000000 --repeat 15
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import load_line, percentile, seeded_db, summary_ms, timed

from demo_erp.context import Settings
from demo_erp.server import running
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.connectors.query import (
    AggregateRequest,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import metrics

USER = "accounts.manager@demo.local"
CATALOG = load_catalog()
QUERY = next(t for t in metrics.tools(CATALOG) if t.name == "metrics.query")
PERIOD = {"from": "2020-01-01", "to": "2026-12-31"}
REVENUE_BY_MONTH = {"metric": "revenue", "group_by": ["month"], "period": PERIOD}
# The same question asked of the connector directly: what metrics.query compiles it to.
RAW = AggregateRequest(
    measures=(Measure(Func.SUM, "base_net_total"), Measure(Func.COUNT)),
    group_by=(
        GroupKey("company"),
        GroupKey("date", DatePart.YEAR),
        GroupKey("date", DatePart.MONTH),
    ),
    filters=(
        Filter("docstatus", Op.EQ, 1),
        Filter("date", Op.BETWEEN, [PERIOD["from"], PERIOD["to"]]),
    ),
)


def catalog_counts() -> None:
    metric_list = CATALOG.metrics.values()
    groups: dict[str, int] = {}
    for metric in metric_list:
        groups[metric.group] = groups.get(metric.group, 0) + 1
    linked = sum(1 for d in CATALOG.dimensions.values() if any("." in p for p in d.paths.values()))
    print(f"metrics: {len(CATALOG.metrics)}   dimensions: {len(CATALOG.dimensions)} "
          f"({linked} reached through a link on some entity)")  # fmt: skip
    print("  by group: " + ", ".join(f"{g} {n}" for g, n in sorted(groups.items())))


async def _context(connector: ERPNextConnector) -> ToolContext:
    cred = await connector.login(USER, "demo")
    allowed = frozenset(f"{e}.aggregate" for e in CATALOG.entities)
    session = Session(
        id="bench", user=USER, credential=cred, roles=frozenset(), allowed_tools=allowed
    )
    return ToolContext(session, connector, CATALOG)


async def overhead(url: str, repeat: int) -> None:
    connector = ERPNextConnector(url, catalog=CATALOG)
    ctx = await _context(connector)
    run = QUERY.run
    assert run is not None

    async def raw() -> Any:
        return await connector.aggregate(ctx.session.credential, "sales_invoice", RAW)

    async def metric() -> Any:
        return await run(ctx, REVENUE_BY_MONTH)

    await raw(), await metric()  # warm both paths
    raw_s: list[float] = []
    metric_s: list[float] = []
    for _ in range(repeat):  # interleaved, so load on the machine hits both alike
        raw_s += await timed(raw, 1)
        metric_s += await timed(metric, 1)
    result = await metric()
    await connector.aclose()
    p50_raw, p50_metric = statistics.median(raw_s), statistics.median(metric_s)
    print(f"  raw connector aggregate   {summary_ms(raw_s)}")
    print(f"  metrics.query             {summary_ms(metric_s)}")
    print(f"  overhead at p50: {(p50_metric / p50_raw - 1) * 100:+.1f}% "
          f"({(p50_metric - p50_raw) * 1000:+.2f} ms; target ≤ 5%)")  # fmt: skip
    print(f"  {result['record_count']:,} invoices → {result['groups']} rows; "
          f"source: {result['definition']['source'][:90]}")  # fmt: skip


RAW_GROUP_BY = """
select company, substr(posting_date, 1, 7) as month, sum(base_net_total), count(*)
from "tabSales Invoice" where docstatus = 1 and posting_date between ? and ?
group by company, month
"""


def raw_group_by(path: Path) -> float:
    """The anchor: the same monthly figures as one hand-written GROUP BY on the file itself."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        started = time.perf_counter()
        conn.execute(RAW_GROUP_BY, (PERIOD["from"], PERIOD["to"])).fetchall()
        return time.perf_counter() - started
    finally:
        conn.close()


async def monthly_revenue(url: str, path: Path, runs: int) -> None:
    connector = ERPNextConnector(url, catalog=CATALOG)
    ctx = await _context(connector)
    run = QUERY.run
    assert run is not None
    seconds: list[float] = []
    anchor: list[float] = []
    for _ in range(runs):  # interleaved with the anchor, so load on the machine hits both alike
        started = time.perf_counter()
        result = await run(ctx, REVENUE_BY_MONTH)
        seconds.append(time.perf_counter() - started)
        anchor.append(raw_group_by(path))
    await connector.aclose()
    p50, p95 = statistics.median(seconds), percentile(seconds, 95)
    raw50 = statistics.median(anchor)
    print(f"  {result['record_count']:,} submitted invoices → {result['groups']} month rows; "
          f"{result['definition']['source'][:60]}")  # fmt: skip
    print(f"  metrics.query       p50 {p50:.2f} s  p95 {p95:.2f} s  (n={runs})")
    print(f"  ANCHOR raw GROUP BY p50 {raw50:.2f} s  p95 {percentile(anchor, 95):.2f} s "
          f"(sqlite3 on the file, same run); metrics.query / anchor {p50 / raw50:.2f}x")  # fmt: skip
    print(f"  GOAL metrics.query p50 <= 1 s: {'met' if p50 <= 1 else 'NOT met'}; {load_line()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--invoices", type=int, default=1_000_000, help="pushdown data set")
    parser.add_argument("--overhead-invoices", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--runs", type=int, default=5, help="monthly revenue runs at --invoices")
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "erp-agent-bench"
    )
    args = parser.parse_args()
    print(load_line())
    catalog_counts()
    small = seeded_db(args.data, args.overhead_invoices)
    print(f"\nrevenue by month, {args.overhead_invoices:,} bulk invoices, x{args.repeat}")
    with running(Settings(db_path=str(small))) as server:
        asyncio.run(overhead(server.url, args.repeat))
    big = seeded_db(args.data, args.invoices)
    print(f"\nmonthly revenue over {args.invoices:,} bulk invoices (pushdown); {load_line()}")
    with running(Settings(db_path=str(big))) as server:
        asyncio.run(monthly_revenue(server.url, big, args.runs))
