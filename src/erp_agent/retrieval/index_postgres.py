"""The scale index: PostgreSQL with a generated tsvector (GIN) for keywords and pgvector
``vector(dim)`` with an HNSW cosine index for vectors. Scope filters are WHERE clauses in both
legs. The dense leg of a narrow scope is an exact scan of its rows, found through B-tree indexes
on the scope's columns; a wider scope's is the HNSW scan with ``hnsw.iterative_scan =
relaxed_order``, so it fills k rows instead of returning the few survivors of an unfiltered
top-k (``_exact_cap`` chooses, ``_pg_search.nearest`` builds both).

Every call takes a connection from a pool (psycopg_pool), so the searches of one process run at
once instead of queueing behind one connection; a connection is checked as it is taken, so one
that a PostgreSQL restart or failover cut is replaced before it is used."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import numpy as np
import psycopg
from psycopg import sql
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from erp_agent.errors import ConfigError, StoreError
from erp_agent.retrieval import _pg_search, _sql
from erp_agent.retrieval._pg_connections import alive, configure
from erp_agent.retrieval._pg_search import AND_CANDIDATES, OR_CANDIDATES, PRUNE_ABOVE, RARE
from erp_agent.retrieval.documents import Batch, Document, Hit, Scope
from erp_agent.retrieval.embeddings import MINILM_DIM, Vectors
from erp_agent.retrieval.hybrid import LEG_K, RRF_K
from erp_agent.retrieval.index import Index, Pending, Ranked, with_fallback
from erp_agent.retrieval.text import identifier_parts, identifier_tokens, query_terms

T = TypeVar("T")
EF_SEARCH = 100  # recall ~0.99 at ~2 ms on 100k MiniLM vectors (measured)
# The dense leg's choice. An exact scan reads every in-scope row (one heap page each, the vector
# inline: ~2.5 us cached, ~4.5 us from the OS cache at 1M cards); the HNSW walk visits about
# k x rows / in-scope rows before it holds k of them (~20 us each at 1M: a graph step and a heap
# read for the scope check). Exact is the cheaper while in-scope rows stay under
# sqrt(EXACT_COST x k x rows): at 1M cards and k = 60, ~19,000 (measured: 13k rows exact 33 ms
# vs walk 115 ms, 19.6k: 85 vs 81, 32k: 157 vs 46; EXACT_COST was 2 while the vector was
# TOASTed). At most EXACT_MIN rows are always scanned exactly: a few ms, and the walk would
# visit a large part of the graph for them.
EXACT_COST = 6.0
EXACT_MIN = 1_000
EXACT_SLACK = 2  # the exact path reads at most this x the threshold, whatever was estimated
ESTIMATE_TTL = 60.0  # seconds an in-scope row estimate is reused
TOAST_TARGET = 8160  # bytes a row may hold before TOAST moves values out (PostgreSQL's maximum)

_SCHEMA = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE IF NOT EXISTS {docs} (
    tenant text NOT NULL, key text NOT NULL, kind text NOT NULL,
    title text NOT NULL, body text NOT NULL,
    company text, branch text, entity text, record_id text, ident text, date date,
    link text, module text, parent text, metadata jsonb NOT NULL DEFAULT '{{}}',
    ids text NOT NULL DEFAULT '',
    checksum text,
    embedding vector({dim}),
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', ids), 'A')
        || setweight(to_tsvector('english', title), 'B')
        || to_tsvector('english', body)
    ) STORED,
    PRIMARY KEY (tenant, key)
);
ALTER TABLE {docs} ADD COLUMN IF NOT EXISTS checksum text;
-- Each row's vector kept inline in its heap page (~2.4 kB rows, 3 a page) instead of
-- TOASTed out of line: an exact scan or a walk's scoring then reads one page per card, not
-- ~5 (the heap, the TOAST index and the TOAST page). Only a row over 8 kB is TOASTed, its long
-- text first. Catalog-only; rows written before it stay as they are until rewritten.
DO $$ BEGIN
    IF (SELECT attstorage FROM pg_attribute WHERE attrelid = '{docs}'::regclass
        AND attname = 'embedding') <> 'm' THEN
        ALTER TABLE {docs} ALTER COLUMN embedding SET STORAGE MAIN;
    END IF;
    IF NOT coalesce((SELECT reloptions FROM pg_class WHERE oid = '{docs}'::regclass)
        @> '{{toast_tuple_target={toast_target}}}', false) THEN
        ALTER TABLE {docs} SET (toast_tuple_target = {toast_target});
    END IF;
END $$;
CREATE INDEX IF NOT EXISTS {prefix}_tsv ON {docs} USING gin (tsv);
-- The cards still waiting for a vector, in the order the background embedding takes them.
CREATE INDEX IF NOT EXISTS {prefix}_pending ON {docs} (tenant, key) WHERE embedding IS NULL;
CREATE INDEX IF NOT EXISTS {prefix}_hnsw ON {docs}
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX IF NOT EXISTS {prefix}_parent ON {docs} (tenant, parent);
CREATE INDEX IF NOT EXISTS {prefix}_ident ON {docs} (tenant, ident);
-- The scope's columns: a narrow scope's rows are found through these (the exact dense path;
-- the planner combines them with a BitmapAnd/Or), not by walking the HNSW graph.
CREATE INDEX IF NOT EXISTS {prefix}_scope_date ON {docs} (tenant, date);
CREATE INDEX IF NOT EXISTS {prefix}_scope_branch ON {docs} (tenant, branch, date);
CREATE INDEX IF NOT EXISTS {prefix}_scope_entity ON {docs} (tenant, entity, date);
CREATE INDEX IF NOT EXISTS {prefix}_scope_kind ON {docs} (tenant, kind, module);
CREATE TABLE IF NOT EXISTS {state} (
    tenant text NOT NULL, name text NOT NULL, value text NOT NULL, PRIMARY KEY (tenant, name)
);
"""

_UPSERT_COLUMNS = (*_sql.COLUMNS, "ident", "ids", "checksum", "embedding")
# What a document's vector is computed from (see Document.embedding_text), in SQL.
_EMBED_TEXT = "CASE {t}.kind WHEN 'record' THEN {t}.body ELSE {t}.title || E'\\n' || {t}.body END"
PENDING_TTL = 2.0  # seconds a pending count is reused (searches ask for it every time)
POOL_SIZE = 10  # connections per process, unless the settings say otherwise
POOL_TIMEOUT = 30.0  # seconds a call waits for a free connection before it fails


class PostgresIndex(Index):
    """Tables ``<prefix>_docs`` and ``<prefix>_state`` in the given database."""

    def __init__(
        self,
        dsn: str,
        *,
        prefix: str = "retrieval",
        dim: int = MINILM_DIM,
        pool_size: int = POOL_SIZE,
    ) -> None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,40}", prefix):
            raise ConfigError(f"table prefix {prefix!r} must be lower-case letters, digits, _")
        if pool_size < 1:
            raise ConfigError(
                f"the index's connection pool needs at least 1 connection, not {pool_size}"
            )
        self.dim = dim
        self.prefix = prefix
        self._docs = sql.Identifier(f"{prefix}_docs")
        self._state = sql.Identifier(f"{prefix}_state")
        self._pending: dict[str, tuple[float, int]] = {}
        self._frequent: dict[str, tuple[float, float]] = {}
        self._rows: tuple[float, float] | None = None  # (when, reltuples)
        self._in_scope: dict[Scope, tuple[float, float]] = {}  # (when, estimated rows)
        self._stats: tuple[float, _pg_search.TermStats] | None = None
        schema = _SCHEMA.format(
            docs=f'"{prefix}_docs"',
            state=f'"{prefix}_state"',
            prefix=prefix,
            dim=dim,
            toast_target=TOAST_TARGET,
        )
        # The schema first, on a connection of its own: the pool's connections register the
        # vector type, which needs the extension to exist.
        try:
            with psycopg.connect(dsn, autocommit=True) as db, db.transaction():
                # Concurrent first starts would race on CREATE EXTENSION/TABLE IF NOT EXISTS.
                db.execute("SELECT pg_advisory_xact_lock(hashtext('erp_agent.retrieval'))")
                db.execute(schema.encode())
        except psycopg.OperationalError as exc:
            raise StoreError(f"cannot connect to the PostgreSQL index: {exc}") from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            # pgvector is not a trusted extension: only a superuser may create it, once per
            # database; after that this role uses it (docs/deployment.md).
            raise StoreError(
                "the PostgreSQL index needs the pgvector extension, which only a superuser may "
                "create: run `CREATE EXTENSION vector;` once as a superuser in this database "
                "(e.g. `sudo -u postgres psql -d <database> -c 'CREATE EXTENSION vector'`), "
                f"then start again. PostgreSQL said: {str(exc).strip()}"
            ) from exc
        self._pool: ConnectionPool[psycopg.Connection[DictRow]] = ConnectionPool(
            dsn,
            connection_class=psycopg.Connection[DictRow],
            kwargs={"autocommit": True, "row_factory": dict_row},
            min_size=1,
            max_size=pool_size,
            timeout=POOL_TIMEOUT,
            configure=partial(configure, ef_search=EF_SEARCH),
            check=alive,
            name=f"erp-agent index {prefix}",
            open=False,
        )
        self._pool.open()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[DictRow]]:
        """A pooled connection for one call, checked alive as it is taken."""
        try:
            with self._pool.connection() as db:
                yield db
        except PoolTimeout as exc:
            raise StoreError(f"no connection to the PostgreSQL index: {exc}") from exc

    def _run(self, work: Callable[[psycopg.Connection[DictRow]], T]) -> T:
        """``work`` on a pooled connection. One PostgreSQL closed just after the pool's check
        took it (the check reads only what had arrived) fails the work: then every idle
        connection is checked, the dead replaced, and the work runs once more (every read is
        safe to repeat, and so is every write here: upserts, deletes, state)."""
        for attempt in range(2):
            with self._connection() as db:
                try:
                    return work(db)
                except psycopg.OperationalError:
                    if attempt or not db.broken:
                        raise
            self._pool.check()
        raise AssertionError("unreachable")

    def _read(self, query: Any, params: Any, *, ef: int = 0) -> list[DictRow]:
        """One read statement's rows (``ef``: the HNSW walk's width when above the default)."""

        def read(db: psycopg.Connection[DictRow]) -> list[DictRow]:
            if ef <= EF_SEARCH:  # iterative_scan and ef_search: set by _configure
                return db.execute(query, params).fetchall()
            with db.transaction():
                db.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
                return db.execute(query, params).fetchall()

        return self._run(read)

    def drop(self) -> None:
        """Remove this index's tables (tests and rebuilds)."""
        with self._connection() as db:
            db.execute(sql.SQL("DROP TABLE IF EXISTS {}, {}").format(self._docs, self._state))

    # ---------------------------------------------------------------- writes

    def commit(self, batch: Batch) -> None:
        for doc in batch.upserts:
            if doc.embedding is not None and doc.embedding.shape != (self.dim,):
                raise ConfigError(
                    f"document {doc.key} has a {doc.embedding.shape} vector; this index holds "
                    f"{self.dim}-d vectors. Rebuild the index after changing embedding models."
                )
        tenant = batch.tenant
        updates = [
            sql.SQL("{0} = excluded.{0}").format(sql.Identifier(c))
            for c in _UPSERT_COLUMNS
            if c not in ("tenant", "key", "embedding")
        ]
        old_text = sql.SQL(_EMBED_TEXT.format(t="d"))
        new_text = sql.SQL(_EMBED_TEXT.format(t="excluded"))
        # An unchanged checksum writes nothing; an unchanged embedded text keeps the vector;
        # any other change leaves the card keyword-only until it is embedded again.
        upsert = sql.SQL(
            "INSERT INTO {} AS d ({}) VALUES ({}) ON CONFLICT (tenant, key) DO UPDATE SET {}, "
            "embedding = CASE WHEN excluded.embedding IS NOT NULL THEN excluded.embedding "
            "WHEN {} = {} THEN d.embedding END "
            "WHERE d.checksum IS DISTINCT FROM excluded.checksum "
            "OR (d.embedding IS NULL AND excluded.embedding IS NOT NULL)"
        ).format(
            self._docs,
            sql.SQL(", ").join(map(sql.Identifier, _UPSERT_COLUMNS)),
            sql.SQL(", ").join(sql.Placeholder(c) for c in _UPSERT_COLUMNS),
            sql.SQL(", ").join(updates),
            old_text,
            new_text,
        )

        def write(db: psycopg.Connection[DictRow]) -> None:
            with db.transaction(), db.cursor() as cur:
                apply(cur)

        def apply(cur: psycopg.Cursor[DictRow]) -> None:
            if batch.replace_parents:
                cur.execute(
                    sql.SQL("DELETE FROM {} WHERE tenant = %s AND parent = ANY(%s)").format(
                        self._docs
                    ),
                    (tenant, list(batch.replace_parents)),
                )
            if batch.deletes:
                cur.execute(
                    sql.SQL("DELETE FROM {} WHERE tenant = %s AND key = ANY(%s)").format(
                        self._docs
                    ),
                    (tenant, list(batch.deletes)),
                )
            if batch.upserts:
                latest = {d.key: d for d in batch.upserts}.values()
                cur.executemany(upsert, [_params(d) for d in latest])
            if batch.state:
                cur.executemany(
                    sql.SQL(
                        "INSERT INTO {} (tenant, name, value) VALUES (%s, %s, %s) "
                        "ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value"
                    ).format(self._state),
                    [(tenant, name, value) for name, value in batch.state.items()],
                )

        self._run(write)
        self._pending.pop(tenant, None)

    # ---------------------------------------------------------------- embeddings later

    def pending(self, tenant: str, limit: int, *, after: str | None = None) -> list[Pending]:
        query = sql.SQL(
            "SELECT d.key, {} AS text FROM {} d WHERE d.tenant = %s AND d.embedding IS NULL "
            "AND d.key > %s ORDER BY d.key LIMIT %s"
        ).format(sql.SQL(_EMBED_TEXT.format(t="d")), self._docs)
        rows = self._read(query, (tenant, after or "", limit))
        return [Pending(r["key"], r["text"]) for r in rows]

    def store_vectors(self, tenant: str, rows: Sequence[tuple[Pending, Vectors]]) -> int:
        for item, vector in rows:
            if vector.shape != (self.dim,):
                raise ConfigError(f"{item.key}: a {vector.shape} vector in a {self.dim}-d index")
        # Only where the text is still the one embedded: a card rewritten meanwhile stays
        # pending for its new text.
        query = sql.SQL(
            "UPDATE {} d SET embedding = v.embedding FROM (SELECT unnest(%s::text[]) AS key, "
            "unnest(%s::text[]) AS text, unnest(%s::vector[]) AS embedding) v "
            "WHERE d.tenant = %s AND d.key = v.key AND d.embedding IS NULL AND {} = v.text"
        ).format(self._docs, sql.SQL(_EMBED_TEXT.format(t="d")))
        params = (
            [p.key for p, _ in rows],
            [p.text for p, _ in rows],
            [np.asarray(v, dtype=np.float32) for _, v in rows],
            tenant,
        )

        def write(db: psycopg.Connection[DictRow]) -> int:
            with db.transaction(), db.cursor() as cur:
                cur.execute(query, params)
                return cur.rowcount

        stored = self._run(write)
        self._pending.pop(tenant, None)
        return max(0, stored)

    def without_vectors(self, tenant: str, keys: Sequence[str]) -> set[str]:
        if not keys:
            return set()
        query = sql.SQL(
            "SELECT key FROM {} WHERE tenant = %s AND key = ANY(%s) AND embedding IS NULL"
        ).format(self._docs)
        rows = self._read(query, (tenant, list(keys)))
        return {r["key"] for r in rows}

    def pending_count(self, tenant: str) -> int:
        cached = self._pending.get(tenant)
        if cached is not None and time.monotonic() - cached[0] < PENDING_TTL:
            return cached[1]
        query = sql.SQL(
            "SELECT count(*) AS n FROM {} WHERE tenant = %s AND embedding IS NULL"
        ).format(self._docs)
        rows = self._read(query, (tenant,))
        count = int(rows[0]["n"]) if rows else 0
        self._pending[tenant] = (time.monotonic(), count)
        return count

    # ---------------------------------------------------------------- reads

    def state(self, tenant: str, name: str) -> str | None:
        query = sql.SQL("SELECT value FROM {} WHERE tenant = %s AND name = %s").format(self._state)
        rows = self._read(query, (tenant, name))
        return str(rows[0]["value"]) if rows else None

    def fetch(self, tenant: str, keys: Sequence[str]) -> list[Document]:
        if not keys:
            return []
        columns = sql.SQL(", ").join(map(sql.Identifier, _sql.COLUMNS))
        query = sql.SQL("SELECT {} FROM {} WHERE tenant = %s AND key = ANY(%s)").format(
            columns, self._docs
        )
        rows = self._read(query, (tenant, list(keys)))
        found = {r["key"]: _sql.to_document(r) for r in rows}
        return [found[k] for k in keys if k in found]

    def keys(self, tenant: str, *, parent: str | None = None) -> list[str]:
        query = sql.SQL("SELECT key FROM {} WHERE tenant = %s").format(self._docs)
        params: list[Any] = [tenant]
        if parent is not None:
            query += sql.SQL(" AND parent = %s")
            params.append(parent)
        return sorted(r["key"] for r in self._read(query, params))

    def exact(self, identifiers: Sequence[str], scope: Scope) -> list[str]:
        where, params = _where(scope)
        query = sql.SQL("SELECT d.key FROM {} d WHERE ").format(self._docs) + where
        query += sql.SQL(" AND d.ident = ANY(%s) ORDER BY d.key")
        rows = self._read(query, [*params, list(identifiers)])
        return [r["key"] for r in rows]

    def keyword(self, query: str, scope: Scope, k: int) -> Ranked:
        terms, ids = query_terms(query), identifier_tokens(query)
        if not terms and not ids:
            return []
        # A word in most rows ("invoice" among invoice cards) neither narrows the AND nor ranks,
        # but reading its posting list costs tens of ms at a million rows.
        rows = self._frequencies(terms)
        total = self._total()
        strict = [t for t in terms if total < PRUNE_ABOVE or rows[t] <= total / 2] or terms[:1]
        hits = self._match(strict, ids, "&", scope, k)
        # A named id that matched is the answer; OR over its parts ("acc", "2026") is noise.
        if len(hits) < k and len(terms) + len(ids) > 1 and not (ids and hits):
            words = self._selective([t for t in terms if t not in identifier_parts(query)])
            if words or (ids and terms):
                hits = with_fallback(hits, self._match(words, ids, "|", scope, k), k)
        return hits

    def _total(self) -> float:
        """The table's estimated rows (what ANALYZE last counted), reused for a few seconds:
        one keyword search asks up to three times."""
        if self._rows is not None and time.monotonic() - self._rows[0] < PENDING_TTL:
            return self._rows[1]
        rows = self._read(
            "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (f"{self.prefix}_docs",)
        )
        total = float(rows[0]["reltuples"]) if rows else 0.0
        self._rows = (time.monotonic(), total)
        return total

    def _frequencies(self, terms: list[str]) -> dict[str, float]:
        """Rows the planner expects to hold each term (ANALYZE keeps tsvector element
        frequencies, so an estimate costs ~1 ms; each is kept a minute). Small tables: 0."""
        if self._total() < PRUNE_ABOVE:
            return dict.fromkeys(terms, 0.0)
        explain = sql.SQL(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM {} WHERE tsv @@ to_tsquery('english', %s)"
        ).format(self._docs)
        out: dict[str, float] = {}
        now = time.monotonic()
        for term in terms:
            cached = self._frequent.get(term)
            if cached is None or now - cached[0] > 60:
                plan = next(iter(self._read(explain, (term,))), None)
                rows = float(next(iter(plan.values()))[0]["Plan"]["Plan Rows"]) if plan else 0
                cached = self._frequent[term] = (now, rows)
            out[term] = cached[1]
        return out

    def _term_stats(self) -> _pg_search.TermStats:
        """The tsvector column's statistics for the one-statement search, read once a minute
        (one round trip then) instead of from ``pg_stats`` inside every statement."""
        now = time.monotonic()
        if self._stats is not None and now - self._stats[0] < ESTIMATE_TTL:
            return self._stats[1]
        if self._total() < PRUNE_ABOVE:
            stats = _pg_search.NO_STATS
        else:
            rows = self._read(
                "SELECT most_common_elems::text::text[] AS elems, most_common_elem_freqs AS "
                "freqs FROM pg_stats WHERE schemaname = current_schema() AND tablename = %s "
                "AND attname = 'tsv'",
                (f"{self.prefix}_docs",),
            )
            row = rows[0] if rows else {}
            shares = zip(row.get("elems") or [], row.get("freqs") or [], strict=False)
            stats = _pg_search.TermStats(False, {str(e): float(f) for e, f in shares})
        self._stats = (now, stats)
        return stats

    def _selective(self, terms: list[str]) -> list[str]:
        """In a large table, the terms in at most ``RARE`` of the rows. An OR over a common term
        makes PostgreSQL collect every row holding it before anything is ranked (a GIN bitmap
        has no order): at a million cards that is the multi-second tail. With no rare term
        there is no fill-up: the dense leg covers it."""
        total = self._total()
        if total < PRUNE_ABOVE:
            return terms
        rows = self._frequencies(terms)
        return [t for t in terms if rows[t] <= total * RARE]

    def _match(self, terms: list[str], ids: list[str], op: str, scope: Scope, k: int) -> Ranked:
        parts: list[sql.Composable] = []
        values: list[Any] = []
        if not terms and not ids:
            return []
        if terms and op == "&":
            parts.append(sql.SQL("websearch_to_tsquery('english', %s)"))
            values.append(" ".join(terms))
        elif terms:
            parts.append(sql.SQL("to_tsquery('english', %s)"))
            values.append(" | ".join(terms))
        if ids:
            parts.append(sql.SQL("to_tsquery('simple', %s)"))
            values.append(f" {op} ".join(ids))
        tsquery = sql.SQL(" && " if op == "&" else " || ").join(parts)
        where, params = _where(scope)
        where = _pg_search.opaque(where)
        matching = (
            sql.SQL("SELECT d.key, d.tsv, t.q FROM {} d, ({}) AS t(q) WHERE ").format(
                self._docs, sql.SQL("SELECT ") + tsquery
            )
            + where
            + sql.SQL(" AND d.tsv @@ t.q")
        )
        # Rank a bounded sample of the matching rows, never all of them.
        matching += sql.SQL(f" LIMIT {OR_CANDIDATES if op == '|' else AND_CANDIDATES}")
        query = sql.SQL(
            "SELECT m.key, ts_rank(m.tsv, m.q) AS score FROM ({}) m "
            "ORDER BY score DESC, m.key LIMIT %s"
        ).format(matching)
        try:
            rows = self._read(query, [*values, *params, k])
        except psycopg.Error as exc:
            raise StoreError(f"keyword search failed: {exc}") from exc
        return [(r["key"], float(r["score"])) for r in rows]

    def dense(self, vector: Vectors, scope: Scope, k: int) -> Ranked:
        params: dict[str, Any] = {"v": np.asarray(vector, dtype=np.float32), "k": k}
        where = _pg_search.scope_sql(scope, params)
        ctes, nearest = _pg_search.nearest(self._docs, where, self._exact_cap(scope, k), params)
        query = sql.SQL("WITH {} {}").format(sql.SQL(", ").join(ctes), nearest) if ctes else nearest
        rows = self._read(query, params, ef=k)
        # relaxed_order may return rows slightly out of order: sort them exactly.
        ranked = [(str(r["key"]), float(r["score"])) for r in rows]
        return sorted(ranked, key=lambda item: (-item[1], item[0]))

    def _exact_cap(self, scope: Scope, k: int) -> int | None:
        """The exact dense path's row bound when the scope is narrow enough to scan exactly
        (see EXACT_COST), else None: the HNSW walk."""
        limit = max(EXACT_MIN, int(math.sqrt(EXACT_COST * k * max(self._total(), 0.0))))
        return limit * EXACT_SLACK if self._estimate(scope) <= limit else None

    def _estimate(self, scope: Scope) -> float:
        """The rows with a vector the planner expects in the scope (from ANALYZE's statistics;
        ~0.5 ms, one round trip), reused for a minute: a user's searches share their scope, so
        most searches stay one round trip. (Counting them instead, even bounded, costs ~10 ms
        for a scope of 15 % of 200k rows: the rows must be read.)"""
        now = time.monotonic()
        cached = self._in_scope.get(scope)
        if cached is not None and now - cached[0] < ESTIMATE_TTL:
            return cached[1]
        params: dict[str, Any] = {}
        where = _pg_search.scope_sql(scope, params)
        query = sql.SQL(
            "EXPLAIN (FORMAT JSON) SELECT 1 FROM {} d WHERE {} AND d.embedding IS NOT NULL"
        ).format(self._docs, where)
        plan = next(iter(self._read(query, params)), None)
        rows = float(next(iter(plan.values()))[0]["Plan"]["Plan Rows"]) if plan else math.inf
        if len(self._in_scope) > 1_000:  # scopes are per user and date window: keep it bounded
            self._in_scope.clear()
        self._in_scope[scope] = (now, rows)
        return rows

    def search(
        self,
        query: str,
        vector: Vectors | None,
        scope: Scope,
        *,
        limit: int = 10,
        leg_k: int = LEG_K,
        rrf_k: int = RRF_K,
    ) -> list[Hit]:
        """``Index.search`` in one statement, one round trip (see ``_pg_search``)."""
        try:
            statement, params = self._hybrid(query, vector, scope, limit, leg_k, rrf_k)
            rows = self._read(statement, params, ef=leg_k)
        except psycopg.Error as exc:
            raise StoreError(f"search failed: {exc}") from exc
        return [
            Hit(_sql.to_document(r), float(r["score"]), r["dense_rank"], r["keyword_rank"])
            for r in rows
        ]

    def _hybrid(
        self, query: str, vector: Vectors | None, scope: Scope, limit: int, leg_k: int, rrf_k: int
    ) -> tuple[sql.Composed, dict[str, Any]]:
        terms = query_terms(query) if query.strip() else []
        return _pg_search.hybrid(
            self._docs,
            self._term_stats() if terms else _pg_search.NO_STATS,
            scope,
            vector=None if vector is None else np.asarray(vector, dtype=np.float32),
            terms=terms,
            ids=identifier_tokens(query) if query.strip() else [],
            parts=identifier_parts(query),
            leg_k=leg_k,
            rrf_k=rrf_k,
            limit=limit,
            exact_cap=None if vector is None else self._exact_cap(scope, leg_k),
        )

    def explain(self, query: str, vector: Vectors | None, scope: Scope, limit: int = 10) -> str:
        """EXPLAIN ANALYZE of the search statement (benchmarks: which indexes it used)."""
        statement, params = self._hybrid(query, vector, scope, limit, LEG_K, RRF_K)
        rows = self._read(sql.SQL("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ") + statement, params)
        return "\n".join(str(next(iter(r.values()))) for r in rows)

    def count(self, tenant: str) -> int:
        query = sql.SQL("SELECT count(*) AS n FROM {} WHERE tenant = %s").format(self._docs)
        rows = self._read(query, (tenant,))
        return int(rows[0]["n"]) if rows else 0

    def close(self) -> None:
        """Close the pool and its connections (a call still holding one finishes first)."""
        self._pool.close()


def _params(doc: Document) -> dict[str, Any]:
    values = _sql.row_values(doc)
    values["embedding"] = (
        np.asarray(doc.embedding, dtype=np.float32) if doc.embedding is not None else None
    )
    return values


def _where(scope: Scope) -> tuple[sql.Composed, list[Any]]:
    params: list[Any] = []

    def param(value: Any) -> str:
        params.append(value)
        return "%s"

    def in_list(values: list[str]) -> str:
        params.append(values)
        return "= ANY(%s)"

    # The text is built only from fixed fragments; every value is a bound parameter.
    text = _sql.scope_where(scope, "d", param, in_list)
    return sql.SQL(text).format(), params
