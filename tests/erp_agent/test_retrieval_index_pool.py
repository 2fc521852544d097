"""The PostgreSQL index's connection pool: the searches of one process run at the same time (each
on a connection of its own), the pool's size comes from the settings, a connection PostgreSQL
dropped (a restart, a failover) is replaced before a search uses it, and closing the index
closes its connections.

Each search is made to hold its connection for ``HOLD`` seconds (``pg_sleep`` on the connection
it was given), so that what is measured is whether searches wait for each other, not how fast
this machine is: four at once take about one hold with a pool, four holds without."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from pg_fixtures import terminate_clients
from retrieval_fixtures import PG_DSN, invoice_cards

from erp_agent.config import RetrievalSettings, Settings
from erp_agent.errors import StoreError
from erp_agent.retrieval.documents import Scope
from erp_agent.retrieval.index_postgres import PostgresIndex
from erp_agent.retrieval.settings import open_index

pytestmark = pytest.mark.postgres
HOLD = 0.3  # seconds each search keeps its connection busy in PostgreSQL
SEARCHES = 4


class HoldingIndex(PostgresIndex):
    """The real index; every connection it takes first sleeps ``HOLD`` s in PostgreSQL."""

    holding = False

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        with super()._connection() as db:
            if self.holding:
                db.execute("SELECT pg_sleep(%s)", (HOLD,))
            yield db


def _index(pool_size: int) -> HoldingIndex:
    try:
        index = HoldingIndex(PG_DSN, prefix=f"t_{uuid.uuid4().hex[:10]}", pool_size=pool_size)
    except StoreError as exc:
        pytest.fail(f"PostgreSQL with pgvector is not reachable at {PG_DSN} ({exc})")
    index.upsert(invoice_cards(n=12))
    return index


def _concurrent(index: HoldingIndex, searches: int) -> float:
    """Seconds ``searches`` exact-id lookups take, all started at once from as many threads."""
    start = threading.Barrier(searches)
    scope = Scope("acme")

    def one(_: int) -> list[str]:
        start.wait()
        return index.exact(["accsinv202600101"], scope)

    with ThreadPoolExecutor(searches) as pool:
        began = time.perf_counter()
        found = list(pool.map(one, range(searches)))
        took = time.perf_counter() - began
    assert found == [["sales_invoice:ACC-SINV-2026-00101"]] * searches
    return took


@contextmanager
def holding(pool_size: int) -> Iterator[HoldingIndex]:
    index = _index(pool_size)
    try:
        _concurrent(index, SEARCHES)  # warm: the pool has opened its connections
        index.holding = True
        yield index
    finally:
        index.holding = False
        index.drop()
        index.close()


def test_concurrent_searches_run_at_the_same_time() -> None:
    with holding(pool_size=SEARCHES) as index:
        one = min(_concurrent(index, 1) for _ in range(2))
        together = min(_concurrent(index, SEARCHES) for _ in range(2))
    assert one >= HOLD
    # Queued behind one connection they would take SEARCHES holds (1.2 s); at once, about one.
    print(f"one search {one:.3f} s, {SEARCHES} at once {together:.3f} s")
    assert together < 2 * one, f"{SEARCHES} searches took {together:.2f} s, one {one:.2f} s"


def test_the_pool_size_bounds_the_searches_at_once() -> None:
    with holding(pool_size=1) as index:
        together = _concurrent(index, SEARCHES)
    # One connection: the searches wait for each other (a lower bound holds on any machine).
    assert together >= SEARCHES * HOLD * 0.95


def test_the_pool_size_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[dict[str, Any]] = []
    monkeypatch.setattr(
        "erp_agent.retrieval.index_postgres.PostgresIndex",
        lambda dsn, **kwargs: opened.append(kwargs),
    )
    open_index(Settings(retrieval=RetrievalSettings(index_url=PG_DSN, index_pool_size=3)))
    assert opened == [{"dim": 384, "pool_size": 3}]
    with pytest.raises(ValueError, match="index_pool_size"):
        RetrievalSettings(index_pool_size=0)


def _cut(application_name: str) -> int:
    return terminate_clients("application_name", application_name)


def _backends(application_name: str) -> int:
    with psycopg.connect(PG_DSN, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_dropped_connection_is_replaced_and_close_ends_them() -> None:
    name = f"erp-agent-test-{uuid.uuid4().hex[:8]}"
    dsn = f"{PG_DSN}{'&' if '?' in PG_DSN else '?'}application_name={name}"
    index = PostgresIndex(dsn, prefix=f"t_{uuid.uuid4().hex[:10]}", pool_size=4)
    try:
        index.upsert(invoice_cards(n=12))
        scope = Scope("acme")
        with ThreadPoolExecutor(4) as pool:  # several connections open, all of them then cut
            list(pool.map(lambda _: index.exact(["accsinv202600101"], scope), range(8)))
        assert _cut(name) >= 1
        for _ in range(6):  # every pooled connection was dead: each is replaced as it is taken
            assert index.exact(["accsinv202600101"], scope) == ["sales_invoice:ACC-SINV-2026-00101"]
            assert [k for k, _ in index.keyword("Gulf Traders", scope, 3)]
        index.drop()
    finally:
        index.close()
    deadline = time.monotonic() + 10
    while _backends(name) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _backends(name) == 0, "closing the index leaves no connection open"
