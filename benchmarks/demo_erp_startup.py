"""Demo ERP start-up: seeding the default data set, and the time until `serve` answers.

uv run python benchmarks/demo_erp_startup.py
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from demo_erp.seed import seed
from demo_erp.server import free_port


def main(folder: Path) -> None:
    path = folder / "startup.sqlite"
    started = time.perf_counter()
    summary = seed(path)
    print(f"seed (default scale): {time.perf_counter() - started:.1f} s, {summary.total:,} rows")
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "erp_agent",
            "demo-erp",
            "serve",
            "--path",
            str(path),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                if (
                    httpx.get(f"http://127.0.0.1:{port}/api/method/ping", timeout=0.5).status_code
                    == 200
                ):
                    break
            except httpx.TransportError:
                time.sleep(0.02)
            if time.perf_counter() - started > 30:
                raise SystemExit("serve did not answer within 30 s")
        print(
            f"serve ready (process start to first ping answered): {time.perf_counter() - started:.2f} s"
        )
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.mkdtemp(prefix="erp-agent-bench-"))
    )
    main(parser.parse_args().data)
