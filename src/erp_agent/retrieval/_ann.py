"""An HNSW graph (faiss) over the rows of the embedded index's vector matrix, searched with the
user's scope applied INSIDE the graph walk: faiss' ``IDSelectorBitmap`` admits only in-scope rows
to the result heap while the walk still passes through the others, so a scope never costs recall
the way filtering an unscoped top-k afterwards does (and nothing outside it can be returned).

Why faiss-cpu (measured in ``benchmarks/ann_libraries.py``, 100k MiniLM-like vectors, 2 cores):
wheels for every platform the product ships on, a filter evaluated in C++ (hnswlib calls a
Python function per visited node and ships no wheel; usearch's Python API has no filter at
all, only post-filtering; sqlite-vec's vec0 is a brute-force scan, 30-90 ms at 100k).

The graph is built in a background thread, a chunk at a time, and only ever appended to:
rows are the matrix's rows (graph id == row number). Rows added to the matrix since the last
chunk (the "tail") are scored exactly by the caller, so a search never waits for the builder.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from erp_agent.retrieval.embeddings import Vectors

log = logging.getLogger(__name__)

M = 16  # neighbours per node: recall@10 0.99 at ef 100 on 100k (M=32: 2.6x the build time)
EF_CONSTRUCTION = 40
# Candidates a walk collects per row asked for: on the labelled set (1,117 real cards, every
# search through the graph) 200 for k=60 cost a point of hybrid recall@10 (0.943 against 0.953
# exact) and 600 none; at 100k, 600 takes ~1.2 ms at any scope from 2 % to all rows.
EF_PER_K = 10
EF_SEARCH = 600  # and never fewer (a dense-only top 10 lost 2.6 points of recall at 100)
EF_MAX = 4_000
CHUNK = 512  # rows per builder step: the graph is busy (searches go exact) ~50 ms at a time


@cache
def _faiss() -> Any:
    """faiss, imported at the first graph (0.2 s); None without it (searches stay exact)."""
    try:
        import faiss
    except ImportError:  # pragma: no cover - faiss-cpu is a dependency
        log.warning("faiss-cpu is not installed: vector search stays exact (slower at scale)")
        return None
    # One thread: the builder runs beside a server that has a core per worker, and OpenMP's
    # threads spin-wait between small chunks (2 threads built 30k rows 3.5x slower than 1 on a
    # busy 2-core machine). A single-query search is single-threaded anyway.
    faiss.omp_set_num_threads(1)
    return faiss


def available() -> bool:
    return _faiss() is not None


class Graph:
    """The graph over rows ``0 .. covered - 1`` of a matrix that only grows. ``rows()`` returns
    the matrix as it is now (the builder reads it without the caller's lock: rows that exist
    never change)."""

    def __init__(self, dim: int, rows: Callable[[], Vectors]) -> None:
        faiss = _faiss()
        self._rows = rows
        self._index: Any = faiss.IndexHNSWFlat(dim, M, faiss.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = EF_CONSTRUCTION
        self._lock = threading.Lock()  # held by a builder step or a search, never both
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.covered = 0
        self.build_seconds = 0.0  # builder time spent so far (for benchmarks and logs)

    # ---------------------------------------------------------------- building

    def catch_up(self) -> None:
        """Start the builder if rows are waiting and it is not running."""
        if self._stopped or (self._thread is not None and self._thread.is_alive()):
            return
        if self.covered >= len(self._rows()):
            return
        self._thread = threading.Thread(target=self._build, name="erp-agent-ann", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            while not self._stopped:
                matrix = self._rows()
                if self.covered >= len(matrix):
                    return
                chunk = np.ascontiguousarray(matrix[self.covered : self.covered + CHUNK])
                started = time.perf_counter()
                with self._lock:
                    self._index.add(chunk)
                    self.covered += len(chunk)
                self.build_seconds += time.perf_counter() - started
        except Exception:  # a failed build leaves exact search in charge
            log.exception("building the vector graph failed; searches stay exact")
            self._stopped = True

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the graph covers every row (benchmarks, tests); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.covered < len(self._rows()) and not self._stopped:
            self.catch_up()
            thread = self._thread
            if thread is not None:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                thread.join(0.05 if left is None else min(0.05, left))
            if deadline is not None and time.monotonic() >= deadline:
                return False
        return not self._stopped

    def stop(self) -> None:
        self._stopped = True

    # ---------------------------------------------------------------- searching

    def search(
        self, query: Vectors, allowed: npt.NDArray[np.bool_], k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        """Top-k rows among ``allowed`` (a mask over the covered rows) by inner product, or None
        when the graph is busy being extended (the caller then scans the scope exactly)."""
        covered = len(allowed)
        inside = int(np.count_nonzero(allowed))
        if inside == 0 or self._stopped:
            return None
        # The walk's breadth: EF_PER_K candidates per row asked for (at least EF_SEARCH), and
        # wider for a narrow scope, so that about 2k of those it weighs are in it (to EF_MAX).
        ef = min(EF_MAX, max(EF_SEARCH, EF_PER_K * k, int(2 * k * covered / inside)))
        bitmap = np.packbits(allowed, bitorder="little")
        if not self._lock.acquire(blocking=False):
            return None
        try:
            # Bitmap length in bytes: rows the builder added after ``allowed`` was taken fall
            # outside it and are never admitted (the caller scores them exactly).
            faiss = _faiss()
            selector = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
            scores, rows = self._index.search(
                np.asarray(query, dtype=np.float32).reshape(1, -1), min(k, inside), params=params
            )
        finally:
            self._lock.release()
        found = rows[0] >= 0
        return rows[0][found].astype(np.int64), scores[0][found].astype(np.float32)
