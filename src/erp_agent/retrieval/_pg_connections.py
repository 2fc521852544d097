"""How the PostgreSQL index's pooled connections are set up and checked: once per connection,
never per search, so a search is one round trip."""

from __future__ import annotations

from typing import Any

import psycopg
from pgvector.psycopg import register_vector


def configure(db: psycopg.Connection[Any], *, ef_search: int) -> None:
    """Each pooled connection: the vector type, and the HNSW scan settings every dense search
    uses (set once here rather than per search, which would cost round trips): a scope applied
    in the WHERE is filled by scanning on (``iterative_scan``) instead of returning the few
    survivors of an unfiltered top-k.

    Every statement is planned for its own values (``force_custom_plan``): psycopg prepares a
    statement run five times, and PostgreSQL's generic plan for it, blind to how many rows the
    scope holds, sorts a B-tree range scan by distance (0.5 s for a scope of 30k of 200k cards,
    measured) where the custom plan walks the HNSW graph. Custom plans were what the searches
    got anyway: their generic plan (a sequential scan and sort) looked dearer until the scope
    indexes existed."""
    register_vector(db)
    db.execute(f"SET hnsw.ef_search = {int(ef_search)}")
    db.execute("SET hnsw.iterative_scan = relaxed_order")
    db.execute("SET plan_cache_mode = force_custom_plan")


def alive(db: psycopg.Connection[Any]) -> None:
    """The pool's check as a connection is taken, without a round trip: read what the server
    sent since the connection was last used. A connection PostgreSQL closed (a restart, a
    failover, ``pg_terminate_backend``) shows as the end of its stream and fails here, and the
    pool hands out another, instead of failing the caller's query. (What arrives later still
    fails the query: ``PostgresIndex._run`` then checks the pool and runs it again.)"""
    pgconn = db.pgconn
    for _ in range(2):  # the first read may take the server's goodbye, the second the EOF
        if pgconn.status != psycopg.pq.ConnStatus.OK:
            raise psycopg.OperationalError("the connection is closed")
        pgconn.consume_input()
    if pgconn.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        raise psycopg.OperationalError("the connection is not idle")
