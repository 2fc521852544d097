"""`erp-agent demo` from nothing: process start → the web app answers /healthz, first run
(seeding included) and second run (database already there).

uv run python benchmarks/demo_start.py [--runs 2]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from demo_erp.server import free_port

COMMAND = ["-m", "erp_agent", "demo"]  # what `erp-agent demo` runs


def start_once(folder: Path) -> float:
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *COMMAND, "--port", str(port), "--no-index"],
        cwd=folder,
        env={**os.environ, "ERP_AGENT_DATA_DIR": str(folder / "data")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    return time.perf_counter() - started
            except httpx.TransportError:
                time.sleep(0.05)
            if time.perf_counter() - started > 120:
                raise SystemExit("the demo did not answer within 120 s")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2, help="starts in the same folder")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(1, args.runs + 1):
            label = "first run (seeds)" if run == 1 else f"run {run} (already seeded)"
            print(f"{label}: {start_once(Path(tmp)):.1f} s to /healthz (load average {load:.1f})")


if __name__ == "__main__":
    main()
