"""`/metrics` adds up every web worker's counts: `erp-agent serve --workers 2` behind one port,
requests spread over both processes, and every scrape — whichever worker answers it — reports the
same totals, the sum of both workers' own counts (Prometheus' multiprocess mode)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from conftest import DemoERP
from demo_erp.server import free_port

pytestmark = pytest.mark.slow
TOKEN = "metrics-token-for-the-test"
SESSION_KEY = "x" * 43 + "="
HEALTHZ = re.compile(
    r'erp_agent_http_requests_total\{method="GET",route="/healthz",status="\d+"\} ([\d.e+]+)'
)


@dataclass
class Served:
    url: str
    metrics: Path


@pytest.fixture
def two_workers(demo_erp: DemoERP, tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ERP_AGENT_", "PROMETHEUS"))}
    env |= {
        "ERP_AGENT_ERP_URL": demo_erp.url,
        "ERP_AGENT_DATA_DIR": str(tmp_path),
        "ERP_AGENT_SESSION_KEY": SESSION_KEY,
        "ERP_AGENT_METRICS_TOKEN": TOKEN,
        "ERP_AGENT_EMBEDDINGS": "none",
    }
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "counter_1.db").write_bytes(b"a previous run's")  # emptied at start
    with (tmp_path / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "erp_agent", "serve", "--port", str(port), "--workers", "2"],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while len(_pids(tmp_path / "metrics")) < 2 or not _up(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError((tmp_path / "serve.log").read_text()[-3000:])
            time.sleep(0.3)
        yield Served(url, tmp_path / "metrics")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def _up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/metrics", headers=_auth(), timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", "Connection": "close"}


def _pids(folder: Path) -> set[str]:
    return {m.group(1) for f in folder.glob("*.db") if (m := re.search(r"_(\d+)\.db$", f.name))}


def _healthz(text: str) -> float:
    return sum(float(v) for v in HEALTHZ.findall(text))


def _per_worker(folder: Path, scratch: Path) -> dict[str, float]:
    """Each worker's own /healthz count, read from its file alone."""
    counts = {}
    for pid in _pids(folder):
        one = scratch / pid
        one.mkdir(parents=True, exist_ok=True)
        for file in folder.glob(f"counter_{pid}.db"):
            shutil.copy(file, one / file.name)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(one))  # type: ignore[no-untyped-call]
        counts[pid] = _healthz(generate_latest(registry).decode())
    return counts


def _scrape(url: str) -> float:
    reply = httpx.get(f"{url}/metrics", headers=_auth(), timeout=30)
    assert reply.status_code == 200, reply.text
    return _healthz(reply.text)


def test_every_scrape_reports_the_sum_of_both_workers(two_workers: Served, tmp_path: Path) -> None:
    assert "1" not in _pids(two_workers.metrics)  # the previous run's counts were dropped
    before = _scrape(two_workers.url)
    sent = 0
    per_worker: dict[str, float] = {}
    with ThreadPoolExecutor(8) as pool:
        for _ in range(6):  # until the kernel has handed requests to both processes
            replies = list(pool.map(lambda _: httpx.get(f"{two_workers.url}/healthz",
                                                        headers={"Connection": "close"}, timeout=30),
                                    range(40)))  # fmt: skip
            sent += len(replies)
            per_worker = _per_worker(two_workers.metrics, tmp_path / f"scratch{sent}")
            if sum(1 for n in per_worker.values() if n > 0) >= 2:
                break
    assert sum(1 for n in per_worker.values() if n > 0) == 2, per_worker
    deadline = time.monotonic() + 10  # a count is made as its response ends
    while _scrape(two_workers.url) < before + sent and time.monotonic() < deadline:
        time.sleep(0.2)
    scrapes = [_scrape(two_workers.url) for _ in range(10)]  # new connections: either worker
    assert scrapes == [before + sent] * 10, (scrapes, before, sent, per_worker)
    assert sum(_per_worker(two_workers.metrics, tmp_path / "last").values()) == before + sent
