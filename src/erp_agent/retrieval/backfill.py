"""Embeddings after the fact: cards are written keyword-only by the sync, so search works at
once, and their vectors are added here, in batches, while the product runs.

``Backfill.run`` embeds every pending document of a tenant and returns; ``keep_embedding``
repeats it whenever new cards arrive. ``Progress`` is what the CLI's bar and the admin console
show: how many are done, how many wait, the rate and the time left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from erp_agent.retrieval.embeddings import Embedder
from erp_agent.retrieval.index import Index

log = logging.getLogger(__name__)

BATCH = 256  # texts per embedder call: large enough for ONNX, small enough to commit often


@dataclass
class Phase:
    """One running job (a sync or an embedding backfill): counts, rate and time left."""

    name: str
    done: int = 0
    total: int | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    detail: str = ""

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        if self.total is None or self.rate <= 0 or self.finished is not None:
            return None
        return max(0.0, (self.total - self.done) / self.rate)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["started"]
        out.update(
            elapsed=round(self.elapsed, 1),
            rate=round(self.rate, 1),
            eta=None if self.eta is None else round(self.eta, 1),
            running=self.finished is None,
        )
        out.pop("finished")
        return out


@dataclass
class Progress:
    """The index's jobs, newest per kind; read by the admin console, written by the jobs."""

    phases: dict[str, Phase] = field(default_factory=dict)
    listeners: list[Callable[[Phase], None]] = field(default_factory=list)

    def start(self, name: str, total: int | None = None, detail: str = "") -> Phase:
        phase = self.phases[name] = Phase(name, total=total, detail=detail)
        self._tell(phase)
        return phase

    def advance(self, phase: Phase, count: int, detail: str | None = None) -> None:
        phase.done += count
        if detail is not None:
            phase.detail = detail
        self._tell(phase)

    def finish(self, phase: Phase) -> None:
        phase.finished = time.monotonic()
        self._tell(phase)

    def _tell(self, phase: Phase) -> None:
        for listener in self.listeners:
            listener(phase)

    def as_dict(self) -> dict[str, Any]:
        return {name: phase.as_dict() for name, phase in self.phases.items()}


class Backfill:
    """Adds vectors to a tenant's keyword-only documents."""

    def __init__(
        self,
        index: Index,
        embedder: Embedder,
        *,
        tenant: str = "default",
        batch_size: int = BATCH,
        progress: Progress | None = None,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.tenant = tenant
        self.batch_size = batch_size
        self.progress = progress or Progress()

    def run(self, limit: int | None = None) -> int:
        """Embed until nothing is pending, or ``limit`` documents were embedded (blocking;
        call it in a worker thread). Returns how many vectors were stored."""
        total = self.index.pending_count(self.tenant)
        if limit is not None:
            total = min(total, limit)
        if total == 0:
            return 0
        phase = self.progress.start("embedding", total, "cards embedded")
        stored, after = 0, None
        try:
            while phase.done < total or limit is None:
                size = (
                    self.batch_size if limit is None else min(self.batch_size, total - phase.done)
                )
                batch = self.index.pending(self.tenant, size, after=after)
                if not batch:
                    break
                vectors = self.embedder.embed([p.text for p in batch])
                stored += self.index.store_vectors(
                    self.tenant, list(zip(batch, vectors, strict=True))
                )
                after = batch[-1].key
                if limit is None and phase.done + len(batch) >= (phase.total or 0):
                    # Cards synced while this ran are embedded in the same run: the total
                    # grows with them, so the bar never reads "7,447 of 3,154".
                    pending = self.index.pending_count(self.tenant)
                    phase.total = phase.done + len(batch) + pending
                self.progress.advance(phase, len(batch))
            if limit is None:  # nothing left: every card counted is embedded
                phase.total = phase.done
        finally:
            self.progress.finish(phase)
        return stored

    async def keep_embedding(
        self, *, interval: float = 5.0, stop: asyncio.Event | None = None
    ) -> None:
        """Embed whatever is pending, then look again every ``interval`` seconds (until
        ``stop`` is set or the task is cancelled). A failed round is logged and retried."""
        stop = stop or asyncio.Event()
        while not stop.is_set():
            try:
                stored = await asyncio.to_thread(self.run)
                if stored:
                    log.info("embedded %d cards in the background", stored)
            except Exception:
                log.exception("background embedding failed; retrying in %.0f s", interval)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=interval)
