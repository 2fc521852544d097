"""Shared helpers for benchmark scripts: timing and a demo ERP seeded on demand."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path


def percentile(samples: list[float], pct: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"p50 {statistics.median(ms):8.2f} ms   p95 {percentile(ms, 95):8.2f} ms   n={len(ms)}"


async def timed(fn: Callable[[], Awaitable[object]], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - started)
    return out


def seeded_db(folder: Path, invoices: int | None, scale: float = 1.0) -> Path:
    """Seed once per (invoices, scale) and reuse the file on later runs."""
    from demo_erp.seed import seed

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bench-{invoices or 0}-{scale}.sqlite"
    if not path.exists():
        started = time.perf_counter()
        seed(path, invoices=invoices, scale=scale)
        print(f"seeded {path.name} in {time.perf_counter() - started:.1f} s")
    return path
