"""The embedded index: one SQLite file holding documents, an FTS5 keyword index and float32
vectors as BLOBs, searched in RAM: exactly with numpy, and above ``_dense.EXACT_ROWS`` vectors
through an HNSW graph (faiss) walked with the scope as a filter (see ``_dense`` and ``_ann``).
No SQLite extension is loaded: stdlib sqlite3 cannot always load sqlite-vec, whose vec0 is a
brute-force scan slower than numpy's.

A document may be written without a vector: it is searchable by keyword at once and its vector
is added later (``pending`` / ``store_vectors``), so a large first sync is usable in seconds.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from erp_agent.errors import ConfigError, StoreError
from erp_agent.retrieval import _sql
from erp_agent.retrieval._spelling import Speller
from erp_agent.retrieval.documents import Batch, Document, Scope
from erp_agent.retrieval.embeddings import MINILM_DIM, Vectors
from erp_agent.retrieval.index import Index, Pending, Ranked, with_fallback
from erp_agent.retrieval.text import identifier_parts, identifier_tokens, query_terms

if TYPE_CHECKING:
    from erp_agent.retrieval._dense import DenseMatrix

COMPACT_ABOVE = 1_000  # dead rows (and a quarter of all) before the in-RAM vectors reload

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
    title TEXT NOT NULL, body TEXT NOT NULL,
    company TEXT, branch TEXT, entity TEXT, record_id TEXT, ident TEXT, date TEXT,
    link TEXT, module TEXT, parent TEXT, metadata TEXT NOT NULL DEFAULT '{}',
    checksum TEXT,
    UNIQUE (tenant, key)
);
-- Vectors live apart: 1.5 KB blobs inside docs rows would make every keyword-leg row lookup
-- read a page of its own. ``seq`` only grows, so the in-RAM matrix loads just the new rows.
CREATE TABLE IF NOT EXISTS doc_vectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER NOT NULL UNIQUE, embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_parent ON docs (tenant, parent);
CREATE INDEX IF NOT EXISTS docs_ident ON docs (tenant, ident);
-- ``scope`` holds one opaque token per scope value (see _scope_tokens), so the keyword leg
-- applies tenant/kind/company/branch/entity/module filters inside the MATCH itself.
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5 (
    title, body, ids, scope, tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS index_state (
    tenant TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (tenant, name)
);
"""

# bm25 column weights: an id match outweighs a title match, which outweighs the body.
_BM25 = "bm25(docs_fts, 3.0, 1.0, 10.0, 0.0)"
PRUNE_ABOVE = 20_000  # documents; below this the OR fallback keeps even ubiquitous terms
RARE = 0.02  # in a large index, the OR fill-up uses only terms in at most 2 % of the documents
_SCOPE_FIELDS = ("tenant", "kind", "company", "branch", "entity", "module")
# What a document's vector is computed from (see Document.embedding_text), in SQL.
_EMBED_TEXT = "CASE d.kind WHEN 'record' THEN d.body ELSE d.title || char(10) || d.body END"
_INSERT = (
    "INSERT INTO docs (id, tenant, key, kind, title, body, company, branch, entity, record_id, "
    "ident, date, link, module, parent, metadata, checksum) VALUES (:id, :tenant, :key, :kind, "
    ":title, :body, :company, :branch, :entity, :record_id, :ident, :date, :link, :module, "
    ":parent, :metadata, :checksum)"
)


class SQLiteIndex(Index):
    """Embedded default. Thread-safe: writes, the spelling model, the cached counts and the
    in-RAM vectors go through one connection behind a lock; the reads of a search (keyword
    match, exact ids, fetching cards) use a read-only connection per thread, so concurrent
    turns do not queue behind one another (WAL lets them read while a write commits). One
    writer process."""

    def __init__(
        self, path: str | Path, *, dim: int = MINILM_DIM, exact_rows: int | None = None
    ) -> None:
        self.dim = dim
        # More vectors than this: an HNSW graph beside the matrix (None: _dense.EXACT_ROWS).
        self._exact_rows = exact_rows
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._upgrade()
        self._db.executescript(_SCHEMA)
        self._generation = 0  # this connection's commits; other processes: PRAGMA data_version
        self._speller = Speller(self._db)
        # The in-RAM matrix (NumPy) is built at the first dense search, not at open.
        self._dense: DenseMatrix | None = None
        self._dense_at: tuple[int, int] | None = None
        self._counts: dict[tuple[tuple[int, int], str], Any] = {}
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()  # not the writer's: a reader never waits on it

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """This thread's read-only connection; an index in memory has only the one."""
        if self.path == ":memory:":
            with self._lock:
                yield self._db
            return
        reader: sqlite3.Connection | None = getattr(self._local, "db", None)
        if reader is None:
            uri = f"file:{urllib.parse.quote(self.path)}?mode=ro"
            reader = sqlite3.connect(uri, uri=True, check_same_thread=False)
            reader.row_factory = sqlite3.Row
            self._local.db = reader
            with self._readers_lock:
                self._readers.append(reader)
        yield reader

    def _upgrade(self) -> None:
        """Files written before checksums and vector sequence numbers: add what is missing."""
        tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master")}
        if "docs" in tables:
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(docs)")}
            if "checksum" not in columns:
                self._db.execute("ALTER TABLE docs ADD COLUMN checksum TEXT")
        if "doc_vectors" in tables:
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(doc_vectors)")}
            if "seq" not in columns:
                self._db.executescript(
                    "BEGIN; ALTER TABLE doc_vectors RENAME TO doc_vectors_old;"
                    "CREATE TABLE doc_vectors (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                    " id INTEGER NOT NULL UNIQUE, embedding BLOB NOT NULL);"
                    "INSERT INTO doc_vectors (id, embedding)"
                    " SELECT id, embedding FROM doc_vectors_old ORDER BY id;"
                    "DROP TABLE doc_vectors_old; COMMIT;"
                )

    def _version(self) -> tuple[int, int]:
        return self._generation, int(self._db.execute("PRAGMA data_version").fetchone()[0])

    # ---------------------------------------------------------------- writes

    def commit(self, batch: Batch) -> None:
        for doc in batch.upserts:
            if doc.embedding is not None and doc.embedding.shape != (self.dim,):
                raise ConfigError(
                    f"document {doc.key} has a {doc.embedding.shape} vector; this index holds "
                    f"{self.dim}-d vectors. Rebuild the index after changing embedding models."
                )
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._apply(batch)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            finally:
                self._generation += 1

    def _apply(self, batch: Batch) -> None:
        db, tenant = self._db, batch.tenant
        for parent in batch.replace_parents:
            self._delete_where("tenant = ? AND parent = ?", (tenant, parent))
        if batch.deletes:
            self._delete_keys(tenant, batch.deletes)
        self._upsert(tenant, batch.upserts)
        if batch.state:
            db.executemany(
                "INSERT INTO index_state (tenant, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value",
                [(tenant, name, value) for name, value in batch.state.items()],
            )

    def _upsert(self, tenant: str, docs: Sequence[Document]) -> None:
        """Bulk upsert. A document whose checksum is unchanged is not written at all; one whose
        embedded text is unchanged keeps its vector; any other loses it until re-embedded."""
        db = self._db
        old: dict[str, sqlite3.Row] = {}
        keys = list(dict.fromkeys(d.key for d in docs))
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            rows = db.execute(
                f"SELECT d.id, d.key, d.checksum, {_EMBED_TEXT} AS embedded, "
                "v.id IS NOT NULL AS has_vector FROM docs d "
                "LEFT JOIN doc_vectors v ON v.id = d.id "
                f"WHERE d.tenant = ? AND d.key IN ({','.join('?' * len(part))})",
                (tenant, *part),
            )
            old.update((r["key"], r) for r in rows)
        rows_out: list[dict[str, Any]] = []
        drop_vectors: list[int] = []
        vectors: list[tuple[int, bytes]] = []
        replaced: list[int] = []
        next_id = int(db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()[0]) + 1
        for doc in {d.key: d for d in docs}.values():
            values = _sql.row_values(doc)
            prior = old.get(doc.key)
            if (
                prior is not None
                and prior["checksum"] == values["checksum"]
                and (doc.embedding is None or prior["has_vector"])
            ):
                continue  # nothing changed: no write, the vector stays
            if prior is not None:
                values["id"] = prior["id"]
                replaced.append(prior["id"])
                same_text = prior["embedded"] == doc.embedding_text
                if prior["has_vector"] and (doc.embedding is not None or not same_text):
                    drop_vectors.append(prior["id"])
                elif prior["has_vector"]:
                    # Re-insert the kept vector so the in-RAM matrix sees the new scope columns.
                    drop_vectors.append(prior["id"])
                    vectors.append((prior["id"], b""))
            else:
                values["id"] = next_id
                next_id += 1
            if doc.embedding is not None:
                vectors.append((values["id"], doc.embedding.astype("float32").tobytes()))
            rows_out.append(values)
        if not rows_out:
            return
        for start in range(0, len(replaced), 500):
            gone = replaced[start : start + 500]
            marks = ",".join("?" * len(gone))
            db.execute(f"DELETE FROM docs_fts WHERE rowid IN ({marks})", gone)
            db.execute(f"DELETE FROM docs WHERE id IN ({marks})", gone)
        kept: dict[int, bytes] = {}
        for start in range(0, len(drop_vectors), 500):
            ids = drop_vectors[start : start + 500]
            marks = ",".join("?" * len(ids))
            kept.update(
                (r[0], r[1])
                for r in db.execute(
                    f"SELECT id, embedding FROM doc_vectors WHERE id IN ({marks})", ids
                )
            )
            db.execute(f"DELETE FROM doc_vectors WHERE id IN ({marks})", ids)
        db.executemany(_INSERT, rows_out)
        db.executemany(
            "INSERT INTO docs_fts (rowid, title, body, ids, scope) VALUES (?, ?, ?, ?, ?)",
            [(v["id"], v["title"], v["body"], v["ids"], _doc_scope(v)) for v in rows_out],
        )
        db.executemany(
            "INSERT INTO doc_vectors (id, embedding) VALUES (?, ?)",
            [(i, blob or kept[i]) for i, blob in vectors if blob or i in kept],
        )

    def _delete_keys(self, tenant: str, keys: Sequence[str]) -> None:
        for chunk in range(0, len(keys), 500):
            part = list(keys[chunk : chunk + 500])
            marks = ",".join("?" * len(part))
            self._delete_where(f"tenant = ? AND key IN ({marks})", (tenant, *part))

    def _delete_where(self, condition: str, params: tuple[str, ...]) -> None:
        ids = [r["id"] for r in self._db.execute(f"SELECT id FROM docs WHERE {condition}", params)]
        for chunk in range(0, len(ids), 500):
            part = ids[chunk : chunk + 500]
            marks = ",".join("?" * len(part))
            self._db.execute(f"DELETE FROM docs_fts WHERE rowid IN ({marks})", part)
            self._db.execute(f"DELETE FROM doc_vectors WHERE id IN ({marks})", part)
            self._db.execute(f"DELETE FROM docs WHERE id IN ({marks})", part)

    # ---------------------------------------------------------------- embeddings later

    def pending(self, tenant: str, limit: int, *, after: str | None = None) -> list[Pending]:
        with self._lock:
            start = 0
            if after is not None:
                row = self._db.execute(
                    "SELECT id FROM docs WHERE tenant = ? AND key = ?", (tenant, after)
                ).fetchone()
                start = int(row[0]) if row else 0
            rows = self._db.execute(
                f"SELECT d.key, {_EMBED_TEXT} AS text FROM docs d WHERE d.tenant = ? "
                "AND d.id > ? AND NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.id = d.id) "
                "ORDER BY d.id LIMIT ?",
                (tenant, start, limit),
            ).fetchall()
        return [Pending(r["key"], r["text"]) for r in rows]

    def store_vectors(self, tenant: str, rows: Sequence[tuple[Pending, Vectors]]) -> int:
        import numpy as np  # vectors are stored only where they are made

        for item, vector in rows:
            if vector.shape != (self.dim,):
                raise ConfigError(f"{item.key}: a {vector.shape} vector in a {self.dim}-d index")
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                before = self._db.total_changes
                # Only where the text is still the one embedded: a card rewritten meanwhile
                # stays pending for its new text.
                self._db.executemany(
                    "INSERT INTO doc_vectors (id, embedding) SELECT d.id, ? FROM docs d "
                    f"WHERE d.tenant = ? AND d.key = ? AND {_EMBED_TEXT} = ? "
                    "ON CONFLICT (id) DO NOTHING",
                    [
                        (np.asarray(v, dtype=np.float32).tobytes(), tenant, p.key, p.text)
                        for p, v in rows
                    ],
                )
                stored = self._db.total_changes - before
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            finally:
                self._generation += 1
        return stored

    def without_vectors(self, tenant: str, keys: Sequence[str]) -> set[str]:
        if not keys:
            return set()
        marks = ",".join("?" * len(keys))
        with self._lock:
            rows = self._db.execute(
                f"SELECT d.key FROM docs d WHERE d.tenant = ? AND d.key IN ({marks}) "
                "AND NOT EXISTS (SELECT 1 FROM doc_vectors v WHERE v.id = d.id)",
                (tenant, *keys),
            ).fetchall()
        return {r["key"] for r in rows}

    def pending_count(self, tenant: str) -> int:
        with self._lock:
            dense = self._refresh()
            return max(0, self.count(tenant) - dense.tenant_rows(tenant))

    # ---------------------------------------------------------------- reads

    def state(self, tenant: str, name: str) -> str | None:
        with self._reading() as db:
            row = db.execute(
                "SELECT value FROM index_state WHERE tenant = ? AND name = ?", (tenant, name)
            ).fetchone()
        return None if row is None else str(row["value"])

    def fetch(self, tenant: str, keys: Sequence[str]) -> list[Document]:
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        with self._reading() as db:
            rows = db.execute(
                f"SELECT * FROM docs WHERE tenant = ? AND key IN ({marks})", (tenant, *keys)
            ).fetchall()
        found = {r["key"]: _sql.to_document(r) for r in rows}
        return [found[k] for k in keys if k in found]

    def keys(self, tenant: str, *, parent: str | None = None) -> list[str]:
        sql, params = "SELECT key FROM docs WHERE tenant = ?", [tenant]
        if parent is not None:
            sql, params = sql + " AND parent = ?", [*params, parent]
        with self._reading() as db:
            return sorted(r["key"] for r in db.execute(sql, params))

    def exact(self, identifiers: Sequence[str], scope: Scope) -> list[str]:
        where, params = self._where(scope, "d")
        marks = ",".join("?" * len(identifiers))
        with self._reading() as db:
            rows = db.execute(
                # The planner otherwise walks (tenant, key) in key order: 75 ms at 100k cards.
                f"SELECT d.key FROM docs d INDEXED BY docs_ident WHERE {where} "
                f"AND d.ident IN ({marks})",
                [*params, *identifiers],
            ).fetchall()
        return sorted(r["key"] for r in rows)

    def keyword(self, query: str, scope: Scope, k: int) -> Ranked:
        ids = identifier_tokens(query)
        with self._lock:
            parts = identifier_parts(query)
            words = query_terms(query)
            fixed = self._speller.correct([t for t in words if t not in parts], self._version())
            kept = [t if t in parts else fixed[t] for t in words]
            terms = list(dict.fromkeys(t for t in kept if t))
        if not terms and not ids:
            return []
        quoted = [f'"{t}"' for t in terms] + [f'ids : "{i}"' for i in ids]
        # A word in most cards ("invoice") neither narrows the AND nor ranks (IDF ~0), but FTS5
        # reads its whole posting list: the AND goes over the other words.
        strict = self._selective([f'"{t}"' for t in terms]) + [f'ids : "{i}"' for i in ids]
        hits = self._match(" AND ".join(strict), scope, k)
        # A named id that matched is the answer; OR over its parts ("acc", "2026") is noise.
        if len(hits) < k and len(quoted) > 1 and not (ids and hits):
            # Fewer than k documents hold every term: fill up with those holding any of them.
            words = [t for t in terms if t not in identifier_parts(query)]
            loose = self._selective([f'"{t}"' for t in words], share=RARE)
            # An id that matched nothing may be the start of one ("ACC-SINV-2026-001").
            loose += [f'ids : "{i}"*' for i in ids]
            if loose:
                hits = with_fallback(hits, self._match(" OR ".join(loose), scope, k), k)
        return hits

    def _selective(self, quoted: list[str], *, share: float = 0.5) -> list[str]:
        """In a large index, the terms found in at most ``share`` of the documents. A term in
        most documents adds ~nothing to bm25 (its IDF is ~0) yet makes FTS5 rank every
        document holding it: OR-ing "invoice" over 100k invoice cards costs more than the whole
        rest of the search. The AND keeps at least one term; the OR fill-up follows only rare
        terms (``RARE``, as in PostgreSQL): an OR over words in a fifth of the cards ranks
        tens of thousands of them (30+ ms at 100k), and the dense leg covers such a query.
        Small indexes keep every term (cheap, and the fill-up is still useful). Counts are
        cached until the next write."""
        with self._lock:
            version = self._version()
            total = self._cached(version, "", "SELECT max(id) FROM docs", ()) or 0
            if total < PRUNE_ABOVE:
                return quoted
            kept = [
                term
                for term in quoted
                if self._cached(
                    version, term, "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?", (term,)
                )
                <= total * share
            ]
        return kept or (quoted if share >= 0.5 else [])

    def _cached(
        self, version: tuple[int, int], name: str, sql: str, params: tuple[Any, ...]
    ) -> Any:
        if self._counts and next(iter(self._counts))[0] != version:
            self._counts.clear()
        key = (version, name)
        if key not in self._counts:
            self._counts[key] = self._db.execute(sql, params).fetchone()[0]
        return self._counts[key]

    def _match(self, expression: str, scope: Scope, k: int) -> Ranked:
        filters = _scope_match(scope)
        if filters is None:
            return []
        match = f"({expression}) AND {filters}"
        params: list[Any] = [match]
        if scope.date_from is None and scope.date_to is None:
            # Everything but dates is inside the MATCH: rank in FTS5, look up only k keys.
            sql = (
                f"SELECT d.key, f.score FROM (SELECT rowid, {_BM25} AS score FROM docs_fts "
                "WHERE docs_fts MATCH ? ORDER BY score LIMIT ?) f "
                "JOIN docs d ON d.id = f.rowid ORDER BY f.score, d.key"
            )
            params.append(k)
        else:
            where, extra = self._where(scope, "d")
            sql = (
                f"SELECT d.key, {_BM25} AS score FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid"
                f" WHERE docs_fts MATCH ? AND {where} ORDER BY score, d.key LIMIT ?"
            )
            params += [*extra, k]
        with self._reading() as db:
            try:
                rows = db.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                raise StoreError(f"keyword search failed on {expression!r}: {exc}") from exc
        return [(r["key"], -float(r["score"])) for r in rows]

    def dense(self, vector: Vectors, scope: Scope, k: int) -> Ranked:
        with self._lock:
            return self._refresh().top(vector, scope, k)

    def _refresh(self) -> DenseMatrix:
        """The in-RAM matrix, brought up to date with the file (call with the lock held)."""
        version = self._version()
        if self._dense is not None and self._dense_at == version:
            return self._dense
        if self._dense is None:
            self._dense = self._new_dense()
        self._dense.append(self._db)
        total = int(self._db.execute("SELECT count(*) FROM doc_vectors").fetchone()[0])
        dead = self._dense.drop_removed(self._db, total)
        if dead > max(COMPACT_ABOVE, self._dense.rows // 4):
            # Many rows replaced or deleted: start over rather than carry them (and, above
            # EXACT_ROWS, rebuild the graph in the background; searches are exact meanwhile).
            self._dense.close()
            self._dense = self._new_dense()
            self._dense.append(self._db)
        self._dense_at = version
        return self._dense

    def _new_dense(self) -> DenseMatrix:
        from erp_agent.retrieval._dense import EXACT_ROWS, DenseMatrix

        return DenseMatrix(self.dim, EXACT_ROWS if self._exact_rows is None else self._exact_rows)

    def dense_ready(self, timeout: float | None = None) -> bool:
        """Load the vectors and wait until the graph (if the index has one) holds them all;
        False on timeout. The server never needs this (searches are exact meanwhile);
        benchmarks and tests do."""
        with self._lock:
            dense = self._refresh()
        return dense.graph is None or dense.graph.wait(timeout)

    def _where(self, scope: Scope, alias: str) -> tuple[str, list[Any]]:
        params: list[Any] = []

        def param(value: Any) -> str:
            params.append(value.isoformat() if isinstance(value, dt.date) else value)
            return "?"

        def in_list(values: list[str]) -> str:
            params.extend(values)
            return f"IN ({','.join('?' * len(values))})" if values else "IN (NULL)"

        return _sql.scope_where(scope, alias, param, in_list), params

    def count(self, tenant: str) -> int:
        with self._lock:
            return int(
                self._cached(
                    self._version(),
                    f"count:{tenant}",
                    "SELECT count(*) FROM docs WHERE tenant = ?",
                    (tenant,),
                )
            )

    def close(self) -> None:
        with self._lock, self._readers_lock:
            if self._dense is not None:
                self._dense.close()
            for reader in self._readers:
                reader.close()
            self._readers.clear()
            self._db.close()


def _token(field: str, value: str | None) -> str:
    """An opaque, tokeniser-proof word for one scope value ("none" when absent)."""
    if not value:
        return f"z{field[0]}none0"
    return f"z{field[0]}{hashlib.sha1(value.encode()).hexdigest()[:16]}0"


def _doc_scope(values: dict[str, Any]) -> str:
    return " ".join(_token(name, values[name]) for name in _SCOPE_FIELDS)


def _scope_match(scope: Scope) -> str | None:
    """The scope as FTS5 column filters; None when it can match nothing."""
    parts = [f"scope : {_token('tenant', scope.tenant)}"]
    wanted: list[tuple[str, frozenset[str] | None, bool]] = [
        ("kind", frozenset(map(str, scope.kinds)) if scope.kinds is not None else None, False),
        ("company", scope.companies, True),
        ("branch", scope.branches, True),
        ("entity", scope.entities, False),
        ("module", scope.modules, False),
    ]
    for name, values, unrestricted_when_absent in wanted:
        if values is None:
            continue
        tokens = [_token(name, v) for v in sorted(values)]
        if unrestricted_when_absent:
            tokens.append(_token(name, None))
        if not tokens:
            return None
        parts.append(f"scope : ({' OR '.join(tokens)})")
    return " AND ".join(parts)
