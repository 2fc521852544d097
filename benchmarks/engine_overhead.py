"""Engine overhead per turn with a ScriptedModel (ms, p50/p95) vs the time spent in ERP calls.

uv run python benchmarks/engine_overhead.py --turns 50
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path

from _common import percentile

from demo_erp.context import Settings as ErpSettings
from demo_erp.seed import seed
from demo_erp.server import running
from erp_agent.config import Settings
from erp_agent.events import Event, EventBus, ToolFinished
from erp_agent.models.testing import ScriptedModel
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

S = ScriptedModel
AGGREGATE = {"measures": [{"func": "sum", "field": "total"}], "group_by": [{"field": "customer"}]}


def _erp_time(event: Event, spent: list[float]) -> None:
    if isinstance(event, ToolFinished) and event.tool.endswith("aggregate"):
        spent.append(event.latency_ms)


async def main(url: str, turns: int) -> None:
    runtime = await Runtime.create(Settings(erp_url=url), store=MemoryStore())
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    totals, erp_times = [], []
    for i in range(turns):
        model = ScriptedModel(
            S.call(
                "sales_invoice.aggregate",
                {
                    **AGGREGATE,
                    "filters": [
                        {"field": "date", "op": ">=", "value": f"2025-{1 + i % 12:02d}-01"}
                    ],
                },
            ),
            lambda m: S.call("display.table", {"result_id": S.last_result_id(m)}),
            S.reply("Here is revenue by customer."),
        )
        spent: list[float] = []
        bus = EventBus()
        bus.subscribe(lambda e, spent=spent: _erp_time(e, spent))
        started = time.perf_counter()
        await runtime.engine(model).run_turn(session, "revenue by customer", bus=bus)
        totals.append((time.perf_counter() - started) * 1000)
        erp_times.append(sum(spent))
    overhead = [t - e for t, e in zip(totals, erp_times, strict=True)]
    print(f"turns: {turns} (aggregate by customer → display.table → answer; ScriptedModel)")
    print(
        f"whole turn      p50 {statistics.median(totals):7.1f} ms   p95 {percentile(totals, 95):7.1f} ms"
    )
    print(
        f"in ERP calls    p50 {statistics.median(erp_times):7.1f} ms   p95 {percentile(erp_times, 95):7.1f} ms"
    )
    print(
        f"engine overhead p50 {statistics.median(overhead):7.1f} ms   p95 {percentile(overhead, 95):7.1f} ms"
    )
    await runtime.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=50)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="erp-agent-bench-"))
    today = dt.date(2026, 11, 30)
    seed(folder / "erp.sqlite", today=today, scale=0.2)
    with running(ErpSettings(db_path=str(folder / "erp.sqlite"), today=today)) as server:
        asyncio.run(main(server.url, args.turns))
