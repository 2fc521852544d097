"""Shared helpers for benchmark scripts: timing and a demo ERP seeded on demand."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path


def load_line() -> str:
    """The machine's load average: every printed figure says how busy the machine was."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (5 min {five:.2f}) on {os.cpu_count()} cores"


def python_start_ms(runs: int = 5) -> float:
    """Anchor: the median wall time of ``python -c pass`` on this machine, now."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


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
