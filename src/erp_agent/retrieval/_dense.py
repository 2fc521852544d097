"""The embedded index's dense leg: every vector of the SQLite file as one contiguous float32
matrix in RAM, the scope columns as small integer codes beside it, and exact top-k by one
matrix-vector product.

Scope masks are cached per scope (a user's searches repeat the same scope), and the matrix
grows by appending: vectors written by the background embedding only ever add rows, so a search
during the backfill loads just the new rows instead of the whole file again.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from erp_agent.retrieval.documents import Scope
from erp_agent.retrieval.embeddings import Vectors

SCOPE_COLUMNS = ("tenant", "kind", "company", "branch", "entity", "module")
MASK_CACHE = 64  # scopes kept; one per (user's branches, entity, dates) in use
_NONE = 0  # the code of an absent value ("no branch")


@dataclass
class _Codes:
    """Distinct values of one column, as small integers (0 = absent)."""

    ids: dict[str, int] = field(default_factory=dict)

    def code(self, value: str | None) -> int:
        if not value:
            return _NONE
        return self.ids.setdefault(value, len(self.ids) + 1)

    def known(self, values: frozenset[str]) -> list[int]:
        return [self.ids[v] for v in values if v in self.ids]


@dataclass
class DenseMatrix:
    """Rows in ``doc_vectors.seq`` order; ``last_seq`` is the newest row loaded."""

    dim: int
    keys: list[str] = field(default_factory=list)
    matrix: Vectors = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    columns: dict[str, npt.NDArray[np.int32]] = field(default_factory=dict)
    dates: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    codes: dict[str, _Codes] = field(default_factory=lambda: {c: _Codes() for c in SCOPE_COLUMNS})
    last_seq: int = 0
    _masks: OrderedDict[Scope, npt.NDArray[np.bool_]] = field(default_factory=OrderedDict)

    def __post_init__(self) -> None:
        self.matrix = np.zeros((0, self.dim), dtype=np.float32)
        self.columns = {c: np.zeros(0, dtype=np.int32) for c in SCOPE_COLUMNS}

    @property
    def rows(self) -> int:
        return len(self.keys)

    def append(self, db: sqlite3.Connection) -> int:
        """Load the rows written since ``last_seq``; returns how many."""
        rows = db.execute(
            "SELECT v.seq, v.embedding, d.key, d.tenant, d.kind, d.company, d.branch, d.entity, "
            "d.module, d.date FROM doc_vectors v JOIN docs d ON d.id = v.id "
            "WHERE v.seq > ? ORDER BY v.seq",
            (self.last_seq,),
        ).fetchall()
        if not rows:
            return 0
        blob = b"".join(r[1] for r in rows)
        new = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), self.dim)
        self.matrix = np.concatenate([self.matrix, new]) if self.rows else new.copy()
        for i, name in enumerate(SCOPE_COLUMNS, start=3):
            codes = self.codes[name]
            column = np.fromiter((codes.code(r[i]) for r in rows), np.int32, len(rows))
            self.columns[name] = np.concatenate([self.columns[name], column])
        dates = np.fromiter(
            (dt.date.fromisoformat(r[9]).toordinal() if r[9] else -1 for r in rows),
            np.int32,
            len(rows),
        )
        self.dates = np.concatenate([self.dates, dates])
        self.keys.extend(r[2] for r in rows)
        self.last_seq = int(rows[-1][0])
        self._masks.clear()
        return len(rows)

    def mask(self, scope: Scope) -> npt.NDArray[np.bool_]:
        """``Scope.matches`` over every row at once (cached per scope)."""
        cached = self._masks.get(scope)
        if cached is not None:
            self._masks.move_to_end(scope)
            return cached
        mask = self._compute(scope)
        self._masks[scope] = mask
        if len(self._masks) > MASK_CACHE:
            self._masks.popitem(last=False)
        return mask

    def _compute(self, scope: Scope) -> npt.NDArray[np.bool_]:
        col, codes = self.columns, self.codes
        tenant = codes["tenant"].ids.get(scope.tenant)
        if tenant is None:
            return np.zeros(self.rows, dtype=np.bool_)
        mask: npt.NDArray[np.bool_] = col["tenant"] == tenant
        if scope.kinds is not None:
            mask &= np.isin(col["kind"], codes["kind"].known(frozenset(map(str, scope.kinds))))
        for name, allowed in (("company", scope.companies), ("branch", scope.branches)):
            if allowed is not None:
                mask &= (col[name] == _NONE) | np.isin(col[name], codes[name].known(allowed))
        for name, wanted in (("entity", scope.entities), ("module", scope.modules)):
            if wanted is not None:
                mask &= np.isin(col[name], codes[name].known(wanted))
        if scope.date_from is not None:
            mask &= self.dates >= scope.date_from.toordinal()
        if scope.date_to is not None:
            mask &= (self.dates >= 0) & (self.dates <= scope.date_to.toordinal())
        return mask

    def tenant_rows(self, tenant: str) -> int:
        code = self.codes["tenant"].ids.get(tenant)
        return 0 if code is None else int(np.count_nonzero(self.columns["tenant"] == code))

    def top(self, vector: Any, scope: Scope, k: int) -> list[tuple[str, float]]:
        if self.rows == 0:
            return []
        mask = self.mask(scope)
        inside = int(np.count_nonzero(mask))
        if inside == 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        if inside * 4 < self.rows:
            # A narrow scope: score only its rows (the gather costs less than 3/4 of the work).
            where = np.flatnonzero(mask)
            scores = self.matrix[where] @ query
        else:
            where = None
            scores = self.matrix @ query
            scores[~mask] = -np.inf
        top = min(k, inside)
        best = np.argpartition(-scores, top - 1)[:top]
        best = best[np.argsort(-scores[best], kind="stable")]
        rows = where[best] if where is not None else best
        ranked = [(self.keys[int(r)], float(s)) for r, s in zip(rows, scores[best], strict=True)]
        # Equal scores (duplicate cards) in key order, so results are deterministic.
        return sorted(ranked, key=lambda item: (-item[1], item[0]))
