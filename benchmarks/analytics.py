"""Analytics benchmarks: aggregate N invoices by month through the ERP (pushdown), M through the
chunked fallback, and each named analysis on M rows — time and peak memory (tracemalloc).

    uv run python benchmarks/analytics.py --invoices 1000000 --rows 100000
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import seeded_db

from demo_erp.context import Settings
from demo_erp.server import running
from erp_agent import analytics
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import analytics as analytics_tools

USER = "accounts.manager@demo.local"
CATALOG = load_catalog()
TOOLS = {t.name: t for t in analytics_tools.tools(CATALOG)}
BY_MONTH = {
    "entity": "sales_invoice",
    "measures": [{"func": "sum", "field": "total"}, {"func": "count"}],
    "group_by": [{"field": "date", "part": "year"}, {"field": "date", "part": "month"}],
    "documents": "all",
}


async def _context(connector: ERPNextConnector) -> ToolContext:
    cred = await connector.login(USER, "demo")
    session = Session(id="bench", user=USER, credential=cred, roles=frozenset())
    return ToolContext(session, connector, CATALOG)


async def _tool(ctx: ToolContext, name: str, args: dict[str, Any]) -> tuple[float, Any]:
    run = TOOLS[name].run
    assert run is not None
    started = time.perf_counter()
    out = await run(ctx, args)
    return time.perf_counter() - started, out


async def aggregate_by_month(url: str, *, pushdown: bool) -> None:
    connector = ERPNextConnector(url, catalog=CATALOG, allow_pushdown=pushdown)
    try:
        seconds, out = await _tool(await _context(connector), "analytics.aggregate", BY_MONTH)
    finally:
        await connector.aclose()
    print(
        f"  {out['method']:9} {out['record_count']:>10,} invoices → {out['groups']} months "
        f"in {seconds:8.2f} s   ({out['detail']})"
    )


def _measure(label: str, fn: Callable[[], Any]) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    fn()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"  {label:22} {seconds * 1000:9.1f} ms   peak {peak / 2**20:8.1f} MiB")


async def analyses(url: str, rows: int) -> None:
    connector = ERPNextConnector(url, catalog=CATALOG)
    ctx = await _context(connector)
    fields = ["id", "customer", "date", "due_date", "total", "outstanding"]
    started = time.perf_counter()
    page = await connector.list(ctx.session.credential, "sales_invoice", fields=fields, limit=rows)
    read = time.perf_counter() - started
    data = page.records
    print(f"\nread {len(data):,} invoices (6 fields) as the user in {read:.2f} s")
    print(f"each analysis on {len(data):,} rows (pure function; time, peak traced memory)")
    as_of = dt.date(2026, 11, 30)
    _measure("monthly_trend", lambda: analytics.monthly_trend(data, amount="total"))
    _measure(
        "period_comparison",
        lambda: analytics.period_comparison(data, as_of=as_of, period="quarter", amount="total"),
    )
    _measure(
        "receivables ageing",
        lambda: analytics.ageing(data, as_of=as_of, party="customer"),
    )
    _measure(
        "concentration",
        lambda: analytics.concentration(data, key="customer", amount="total"),
    )
    _measure("forecast", lambda: analytics.forecast(data, amount="total", months_ahead=12))
    _measure("anomalies", lambda: analytics.anomalies(data, amount="total", party="customer"))

    print("\neach tool end to end (reads as the user over HTTP, then analyses)")
    for name, args in [
        ("analytics.trend", {"entity": "sales_invoice"}),
        ("analytics.comparison", {"entity": "sales_invoice", "period": "year"}),
        ("analytics.ageing", {"side": "receivable"}),
        ("analytics.concentration", {"entity": "sales_invoice", "by": "customer"}),
        ("analytics.forecast", {"entity": "sales_invoice", "months_ahead": 12}),
        ("analytics.anomalies", {"entity": "sales_invoice"}),
    ]:
        seconds, out = await _tool(ctx, name, args)
        print(
            f"  {name:30} {seconds:7.2f} s   {out['source']['method']:8} "
            f"{out['source']['records']:>9,} records"
        )
    await connector.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--invoices", type=int, default=1_000_000, help="pushdown data set")
    parser.add_argument("--rows", type=int, default=100_000, help="fallback/analysis data set")
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "erp-agent-bench"
    )
    args = parser.parse_args()

    big = seeded_db(args.data, args.invoices)
    print(f"aggregate by month through the ERP ({args.invoices:,} bulk invoices)")
    with running(Settings(db_path=str(big))) as server:
        asyncio.run(aggregate_by_month(server.url, pushdown=True))

    small = seeded_db(args.data, args.rows)
    print(f"\naggregate by month, chunked fallback ({args.rows:,} bulk invoices)")
    with running(Settings(db_path=str(small))) as server:
        asyncio.run(aggregate_by_month(server.url, pushdown=True))
        asyncio.run(aggregate_by_month(server.url, pushdown=False))
        asyncio.run(analyses(server.url, args.rows))
