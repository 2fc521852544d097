"""The sql connector's monthly aggregate over N invoice rows vs the same hand-written SQL run
directly on the driver, on PostgreSQL and MariaDB (target: overhead at most 10 %).

    uv run python benchmarks/sql_connector.py [--rows 1000000] [--repeat 5] [--dialect postgres mariadb]

Each run creates its own database (unique name) on the servers below and drops it afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import io
import os
import random
import statistics
import time
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from demo_erp.bespoke.seed import seed
from erp_agent.connectors.query import (
    AggregateRequest,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.connectors.sql.connector import SQLConnector

MAPPING = Path(__file__).parents[1] / "src" / "demo_erp" / "bespoke" / "mapping.yaml"
SERVERS = {
    "postgres": os.environ.get("ERP_AGENT_TEST_SQL_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"),
    "mariadb": os.environ.get("ERP_AGENT_TEST_MARIADB", "mysql+pymysql://root@127.0.0.1:3306/test"),
}  # fmt: skip
HAND_WRITTEN = """
select extract(year from issued_on) as y, extract(month from issued_on) as m,
       sum(net_amount) as revenue, count(*) as n
from invoices
where tenant_id = 'SAVANNA' and branch_id in ('Nairobi', 'Kisumu', 'Mombasa')
  and deleted_at is null and stage = 'posted'
group by 1, 2 order by 1, 2
"""
COLUMNS = ["number", "tenant_id", "branch_id", "customer_code", "issued_on", "due_on", "currency",
           "net_amount", "tax_amount", "gross_amount", "balance", "stage", "pay_state",
           "is_credit_note", "created_by", "created_at", "updated_at"]  # fmt: skip


def _rows(n: int) -> list[tuple[object, ...]]:
    rng = random.Random(11)
    start = dt.date(2022, 1, 1)
    stamp = dt.datetime(2026, 1, 1)
    out = []
    for i in range(n):
        day = start + dt.timedelta(days=rng.randrange(1800))
        net = Decimal(rng.randrange(100, 500_000)) / 100
        tax = (net * Decimal("0.16")).quantize(Decimal("0.01"))
        stage = "posted" if rng.random() < 0.92 else "draft"
        branch = ("Nairobi", "Kisumu", "Mombasa")[i % 3]
        out.append((f"BEN-{i:08d}", "SAVANNA", branch, "SAV-NAI-C001", day, day, "KES", net, tax,
                    net + tax, Decimal(0), stage, "paid", False, "bench", stamp, stamp))  # fmt: skip
    return out


def _load(url: str, dialect: str, rows: list[tuple[object, ...]]) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        cursor = raw.cursor()
        if dialect == "postgres":
            buffer = io.StringIO()
            for row in rows:
                buffer.write(
                    "\t".join("t" if v is True else "f" if v is False else str(v) for v in row)
                    + "\n"
                )
            buffer.seek(0)
            with cursor.copy(f"copy invoices ({', '.join(COLUMNS)}) from stdin") as copy:  # type: ignore[attr-defined]
                copy.write(buffer.read())
        else:
            sql = f"insert into invoices ({', '.join(COLUMNS)}) values ({', '.join(['%s'] * len(COLUMNS))})"
            for i in range(0, len(rows), 5000):
                cursor.executemany(sql, rows[i : i + 5000])
        conn.execute(
            sa.text("analyze table invoices" if dialect == "mariadb" else "analyze invoices")
        )
    engine.dispose()


def _hand_written(cursor: Any) -> tuple[float, list[tuple[object, ...]]]:
    """The same query on one long-lived driver connection (warm, like the connector's pool)."""
    started = time.perf_counter()
    cursor.execute(HAND_WRITTEN)
    rows = list(cursor.fetchall())
    return time.perf_counter() - started, rows


async def run(dialect: str, n: int, repeat: int) -> None:
    server = SERVERS[dialect]
    name = f"bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f"create database {name}"))
    url = sa.make_url(server).set(database=name).render_as_string(hide_password=False)
    try:
        started = time.perf_counter()
        seed(url, today=dt.date(2026, 11, 30), invoices_per_branch=1)
        _load(url, dialect, _rows(n))
        print(f"{dialect}: loaded {n:,} invoice rows in {time.perf_counter() - started:.1f} s")
        connector = SQLConnector(url, mapping=MAPPING)
        cred = await connector.login("owner@savanna.test", "demo")
        request = AggregateRequest(
            (Measure(Func.SUM, "base_net_total"),),
            (GroupKey("date", DatePart.YEAR), GroupKey("date", DatePart.MONTH)),
            (Filter("docstatus", Op.EQ, 1),),
        )
        direct = sa.create_engine(url)
        held = direct.connect()
        raw = held.connection.dbapi_connection
        assert raw is not None
        cursor = raw.cursor()
        await connector.aggregate(cred, "sales_invoice", request)  # warm both paths once
        _hand_written(cursor)
        ours, theirs = [], []
        result = None
        rows: list[tuple[object, ...]] = []
        # Interleaved, each going first in turn, so load on the (shared) machine hits both alike.
        for i in range(repeat):
            for side in ("ours", "theirs") if i % 2 == 0 else ("theirs", "ours"):
                if side == "ours":
                    t0 = time.perf_counter()
                    result = await connector.aggregate(cred, "sales_invoice", request)
                    ours.append(time.perf_counter() - t0)
                else:
                    seconds, rows = _hand_written(cursor)
                    theirs.append(seconds)
        assert result is not None
        assert result.record_count == sum(int(r[3]) for r in rows)  # type: ignore[call-overload]
        a, b = statistics.median(ours), statistics.median(theirs)
        print(
            f"{dialect}: connector aggregate by month  p50 {a * 1000:8.1f} ms  ({len(result.rows)} months, {result.record_count:,} rows)"
        )
        print(f"{dialect}: hand-written SQL, same query  p50 {b * 1000:8.1f} ms")
        print(f"{dialect}: overhead {100 * (a - b) / b:+.1f} %  (target <= 10 %)")
        await connector.aclose()
        held.close()
        direct.dispose()
    finally:
        with admin.connect() as conn:
            if dialect == "postgres":
                conn.execute(
                    sa.text(
                        "select pg_terminate_backend(pid) from pg_stat_activity where datname = :n"
                    ),
                    {"n": name},
                )
            conn.execute(sa.text(f"drop database if exists {name}"))
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--dialect", nargs="+", default=["postgres", "mariadb"], choices=sorted(SERVERS)
    )
    args = parser.parse_args()
    for dialect in args.dialect:
        asyncio.run(run(dialect, args.rows, args.repeat))


if __name__ == "__main__":
    main()
