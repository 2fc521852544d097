"""Connector benchmarks: list 1,000 invoices; aggregate N invoices by customer, pushdown vs
chunked fallback; connector overhead per call vs a raw httpx call.

    uv run python benchmarks/connector.py --invoices 100000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx
from _common import seeded_db, summary_ms, timed

from demo_erp.context import Settings
from demo_erp.server import running
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.connectors.query import AggregateRequest, Func, GroupKey, Measure


async def main(url: str, repeat: int) -> None:
    connector = ERPNextConnector(url)
    cred = await connector.login("accounts.manager@demo.local", "demo")
    raw = httpx.AsyncClient(base_url=url, headers={"Cookie": f"sid={cred.sid}"}, timeout=600)
    count = await connector.count(cred, "sales_invoice")
    print(f"sales invoices visible to accounts.manager: {count:,}")

    fields = ["id", "customer", "date", "total", "outstanding", "status"]
    natives = ["name", "customer", "posting_date", "grand_total", "outstanding_amount", "status"]

    async def connector_list() -> object:
        return await connector.list(cred, "sales_invoice", fields=fields, limit=1000)

    async def raw_list() -> object:
        r = await raw.get("/api/method/frappe.client.get_list", params={
            "doctype": "Sales Invoice", "fields": json.dumps(natives), "limit_page_length": 1001})  # fmt: skip
        return r.json()

    print("\nlist 1,000 invoices")
    print(f"  connector        {summary_ms(await timed(connector_list, repeat))}")
    print(f"  raw httpx        {summary_ms(await timed(raw_list, repeat))}")

    request = AggregateRequest((Measure(Func.SUM, "total"),), (GroupKey("customer"),))
    started = time.perf_counter()
    pushed = await connector.aggregate(cred, "sales_invoice", request)
    push_s = time.perf_counter() - started
    chunked_connector = ERPNextConnector(url, allow_pushdown=False)
    started = time.perf_counter()
    chunked = await chunked_connector.aggregate(cred, "sales_invoice", request)
    chunk_s = time.perf_counter() - started
    same = {r["customer"]: round(r["sum_total"], 2) for r in pushed.rows} == {
        r["customer"]: round(r["sum_total"], 2) for r in chunked.rows
    }
    print(f"\naggregate {pushed.record_count:,} invoices by customer ({len(pushed.rows)} groups)")
    print(f"  pushdown         {push_s * 1000:10.1f} ms")
    print(f"  chunked fallback {chunk_s * 1000:10.1f} ms   ({chunk_s / push_s:.1f}x the pushdown)")
    print(f"  identical results: {same}")

    name = (await connector.list(cred, "sales_invoice", fields=["id"], limit=1)).records[0]["id"]

    async def connector_get() -> object:
        return await connector.get(cred, "sales_invoice", str(name))

    async def raw_get() -> object:
        r = await raw.get(
            "/api/method/frappe.client.get", params={"doctype": "Sales Invoice", "name": name}
        )
        return r.json()

    async def connector_count() -> object:
        return await connector.count(cred, "customer")

    async def raw_count() -> object:
        r = await raw.get(
            "/api/method/frappe.desk.reportview.get_count", params={"doctype": "Customer"}
        )
        return r.json()

    conn_get = await timed(connector_get, repeat * 5)
    raw_get_t = await timed(raw_get, repeat * 5)
    conn_count = await timed(connector_count, repeat * 5)
    raw_count_t = await timed(raw_count, repeat * 5)
    print("\nper-call overhead")
    print(f"  get one invoice: connector {summary_ms(conn_get)}")
    print(f"                   raw httpx {summary_ms(raw_get_t)}")
    print(f"  count customers: connector {summary_ms(conn_count)}")
    print(f"                   raw httpx {summary_ms(raw_count_t)}")
    overhead = (sum(conn_get) - sum(raw_get_t)) / len(conn_get) * 1000
    print(f"  mean connector overhead on get: {overhead:.2f} ms per call")
    await raw.aclose()
    await chunked_connector.aclose()
    await connector.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--invoices", type=int, default=100_000, help="bulk invoices added to the demo data"
    )
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "erp-agent-bench"
    )
    args = parser.parse_args()
    path = seeded_db(args.data, args.invoices)
    with running(Settings(db_path=str(path))) as server:
        asyncio.run(main(server.url, args.repeat))
