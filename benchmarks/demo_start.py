"""`erp-agent demo` from nothing: process start → the web app answers /healthz, first run
(seeding included) and second run (database already there), beside `python -c pass` (the
interpreter's own start) measured in the same run, with the machine's load. Both the web app
and the demo ERP listen on ports the system hands out (never 8000/8080, often taken).

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
from _common import load_line, python_start_ms

from demo_erp.server import free_port

COMMAND = ["-m", "erp_agent", "demo"]  # what `erp-agent demo` runs


def start_once(folder: Path) -> float:
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *COMMAND, "--port", str(port), "--erp-port", "0", "--no-index"],
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
    anchor = python_start_ms() / 1000
    print(f"ANCHOR python -c pass: {anchor * 1000:.0f} ms; {load_line()}")
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(1, args.runs + 1):
            label = "first run (seeds)" if run == 1 else f"run {run} (already seeded)"
            seconds = start_once(Path(tmp))
            print(f"{label}: {seconds:.1f} s to /healthz = {seconds / anchor:,.0f}x python -c pass; "
                  f"{load_line()}")  # fmt: skip


if __name__ == "__main__":
    main()
