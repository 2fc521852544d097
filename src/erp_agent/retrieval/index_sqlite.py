"""The embedded index: one SQLite file holding documents, an FTS5 keyword index and float32
vectors as BLOBs, searched exactly with numpy in RAM (no extension to load; see
docs on retrieval: stdlib sqlite3 cannot always load sqlite-vec, and numpy is faster at this
size)."""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from erp_agent.errors import ConfigError, StoreError
from erp_agent.retrieval import _sql
from erp_agent.retrieval.documents import Batch, Document, Scope
from erp_agent.retrieval.embeddings import MINILM_DIM, Vectors
from erp_agent.retrieval.index import Index, Ranked, with_fallback
from erp_agent.retrieval.text import identifier_parts, identifier_tokens, query_terms

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
    title TEXT NOT NULL, body TEXT NOT NULL,
    company TEXT, branch TEXT, entity TEXT, record_id TEXT, ident TEXT, date TEXT,
    link TEXT, module TEXT, parent TEXT, metadata TEXT NOT NULL DEFAULT '{}',
    UNIQUE (tenant, key)
);
-- Vectors live apart: 1.5 KB blobs inside docs rows would make every keyword-leg row lookup
-- read a page of its own.
CREATE TABLE IF NOT EXISTS doc_vectors (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
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
_SCOPE_FIELDS = ("tenant", "kind", "company", "branch", "entity", "module")


@dataclass
class _Vectors:
    """The vectors and the columns scopes filter on, loaded once per index generation."""

    generation: int
    keys: npt.NDArray[np.str_]
    matrix: Vectors
    columns: dict[str, npt.NDArray[Any]]


class SQLiteIndex(Index):
    """Embedded default. Thread-safe (one connection behind a lock); one writer process."""

    def __init__(self, path: str | Path, *, dim: int = MINILM_DIM) -> None:
        self.dim = dim
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        self._generation = 0
        self._vectors: _Vectors | None = None

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
        for doc in batch.upserts:
            values = _sql.row_values(doc)
            blob = doc.embedding.astype(np.float32).tobytes() if doc.embedding is not None else None
            old = db.execute(
                "SELECT id FROM docs WHERE tenant = ? AND key = ?", (doc.tenant, doc.key)
            ).fetchone()
            if old is not None:
                for table in ("docs_fts", "doc_vectors"):
                    db.execute(f"DELETE FROM {table} WHERE rowid = ?", (old["id"],))
                db.execute("DELETE FROM docs WHERE id = ?", (old["id"],))
            cur = db.execute(
                "INSERT INTO docs (tenant, key, kind, title, body, company, branch, entity, "
                "record_id, ident, date, link, module, parent, metadata) "
                "VALUES (:tenant, :key, :kind, :title, :body, :company, :branch, :entity, "
                ":record_id, :ident, :date, :link, :module, :parent, :metadata)",
                values,
            )
            if blob is not None:
                db.execute(
                    "INSERT INTO doc_vectors (id, embedding) VALUES (?, ?)", (cur.lastrowid, blob)
                )
            db.execute(
                "INSERT INTO docs_fts (rowid, title, body, ids, scope) VALUES (?, ?, ?, ?, ?)",
                (cur.lastrowid, doc.title, doc.text, values["ids"], _doc_scope(values)),
            )
        for name, value in batch.state.items():
            db.execute(
                "INSERT INTO index_state (tenant, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (tenant, name) DO UPDATE SET value = excluded.value",
                (tenant, name, value),
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
            for table in ("docs_fts", "doc_vectors", "docs"):
                self._db.execute(f"DELETE FROM {table} WHERE rowid IN ({marks})", part)

    # ---------------------------------------------------------------- reads

    def state(self, tenant: str, name: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM index_state WHERE tenant = ? AND name = ?", (tenant, name)
            ).fetchone()
        return None if row is None else str(row["value"])

    def fetch(self, tenant: str, keys: Sequence[str]) -> list[Document]:
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM docs WHERE tenant = ? AND key IN ({marks})", (tenant, *keys)
            ).fetchall()
        found = {r["key"]: _sql.to_document(r) for r in rows}
        return [found[k] for k in keys if k in found]

    def keys(self, tenant: str, *, parent: str | None = None) -> list[str]:
        sql, params = "SELECT key FROM docs WHERE tenant = ?", [tenant]
        if parent is not None:
            sql, params = sql + " AND parent = ?", [*params, parent]
        with self._lock:
            return sorted(r["key"] for r in self._db.execute(sql, params))

    def exact(self, identifiers: Sequence[str], scope: Scope) -> list[str]:
        where, params = self._where(scope, "d")
        marks = ",".join("?" * len(identifiers))
        with self._lock:
            rows = self._db.execute(
                f"SELECT d.key FROM docs d WHERE {where} AND d.ident IN ({marks}) ORDER BY d.key",
                [*params, *identifiers],
            ).fetchall()
        return [r["key"] for r in rows]

    def keyword(self, query: str, scope: Scope, k: int) -> Ranked:
        terms = query_terms(query)
        ids = identifier_tokens(query)
        if not terms and not ids:
            return []
        quoted = [f'"{t}"' for t in terms] + [f'ids : "{i}"' for i in ids]
        hits = self._match(" AND ".join(quoted), scope, k)
        # A named id that matched is the answer; OR over its parts ("acc", "2026") is noise.
        if len(hits) < k and len(quoted) > 1 and not (ids and hits):
            # Fewer than k documents hold every term: fill up with those holding any of them.
            words = [t for t in terms if t not in identifier_parts(query)]
            loose = self._selective([f'"{t}"' for t in words]) + [f'ids : "{i}"' for i in ids]
            if loose:
                hits = with_fallback(hits, self._match(" OR ".join(loose), scope, k), k)
        return hits

    def _selective(self, quoted: list[str]) -> list[str]:
        """In a large index, the terms found in at most half the documents. A term in most
        documents adds ~nothing to bm25 (its IDF is ~0) yet makes FTS5 rank every document
        holding it: OR-ing "invoice" over 100k invoice cards costs more than the whole rest of
        the search. Small indexes keep every term (cheap, and the fill-up is still useful)."""
        with self._lock:
            total = self._db.execute("SELECT max(id) FROM docs").fetchone()[0] or 0
            if total < PRUNE_ABOVE:
                return quoted
            kept = [
                term
                for term in quoted
                if self._db.execute(
                    "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?", (term,)
                ).fetchone()[0]
                <= total / 2
            ]
        return kept or quoted

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
        with self._lock:
            try:
                rows = self._db.execute(sql, params).fetchall()
            except sqlite3.OperationalError as exc:
                raise StoreError(f"keyword search failed on {expression!r}: {exc}") from exc
        return [(r["key"], -float(r["score"])) for r in rows]

    def dense(self, vector: Vectors, scope: Scope, k: int) -> Ranked:
        vectors = self._load_vectors()
        if vectors.matrix.shape[0] == 0:
            return []
        mask = _mask(vectors.columns, scope)
        inside = int(mask.sum())
        if inside == 0:
            return []
        # The scope masks scores BEFORE top-k: a tenant with 1 % of the rows still gets k hits.
        # (Scoring all rows and masking beats copying the in-scope rows out of the matrix.)
        scores = vectors.matrix @ np.asarray(vector, dtype=np.float32)
        scores[~mask] = -np.inf
        top = min(k, inside)
        best = np.argpartition(-scores, top - 1)[:top]
        best = best[np.lexsort((vectors.keys[best], -scores[best]))]
        return [(str(vectors.keys[i]), float(scores[i])) for i in best]

    def _load_vectors(self) -> _Vectors:
        with self._lock:
            cached = self._vectors
            if cached is not None and cached.generation == self._generation:
                return cached
            rows = self._db.execute(
                "SELECT d.key, d.tenant, d.kind, d.company, d.branch, d.entity, d.module, d.date, "
                "v.embedding FROM docs d JOIN doc_vectors v ON v.id = d.id ORDER BY d.id"
            ).fetchall()
            matrix = np.frombuffer(b"".join(r["embedding"] for r in rows), dtype=np.float32)
            columns: dict[str, npt.NDArray[Any]] = {
                name: np.array([r[name] or "" for r in rows], dtype=np.str_)
                for name in ("tenant", "kind", "company", "branch", "entity", "module")
            }
            columns["date"] = np.array(
                [dt.date.fromisoformat(r["date"]).toordinal() if r["date"] else -1 for r in rows],
                dtype=np.int64,
            )
            self._vectors = _Vectors(
                self._generation,
                np.array([r["key"] for r in rows], dtype=np.str_),
                matrix.reshape(len(rows), self.dim),
                columns,
            )
            return self._vectors

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
            row = self._db.execute(
                "SELECT count(*) FROM docs WHERE tenant = ?", (tenant,)
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _mask(columns: dict[str, npt.NDArray[Any]], scope: Scope) -> npt.NDArray[np.bool_]:
    """``Scope.matches`` over whole columns at once."""
    mask: npt.NDArray[np.bool_] = columns["tenant"] == scope.tenant
    if scope.kinds is not None:
        mask &= np.isin(columns["kind"], sorted(map(str, scope.kinds)))
    for name, allowed in (("company", scope.companies), ("branch", scope.branches)):
        if allowed is not None:
            mask &= (columns[name] == "") | np.isin(columns[name], sorted(allowed))
    for name, wanted in (("entity", scope.entities), ("module", scope.modules)):
        if wanted is not None:
            mask &= np.isin(columns[name], sorted(wanted))
    if scope.date_from is not None:
        mask &= columns["date"] >= scope.date_from.toordinal()
    if scope.date_to is not None:
        mask &= (columns["date"] >= 0) & (columns["date"] <= scope.date_to.toordinal())
    return mask


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
