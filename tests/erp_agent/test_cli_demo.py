"""`erp-agent demo` from nothing: seeds, starts the demo ERP and the server, and serves the app.

How fast it is ready is measured by benchmarks/demo_start.py, not asserted here (a loaded
machine would make a timed test fail for no fault of the code)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from demo_erp.server import free_port

pytestmark = pytest.mark.slow
COMMAND = ["-m", "erp_agent", "demo"]  # what `erp-agent demo` runs


def test_demo_starts_from_nothing_and_serves_the_app(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "ERP_AGENT_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}
    env.pop("ERP_AGENT_REASONING_MODEL", None)
    started = time.monotonic()
    process = subprocess.Popen(
        [
            sys.executable,
            *COMMAND,
            "--port",
            str(port),
            "--erp-port",
            "0",  # never a fixed port: a busy one would fail the test
            "--data",
            str(tmp_path / "data"),
            "--no-index",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        ready = None
        lines = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "is ready" in line:
                ready = time.monotonic() - started
                break
        assert ready is not None, "".join(lines)
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/healthz").json()["status"] == "ok"
        assert "erp-agent" in httpx.get(f"{base}/").text
        with httpx.Client(base_url=base) as client:
            csrf = client.get("/api/auth/csrf").json()["csrf"]
            signed = client.post(
                "/api/auth/sign-in",
                json={"user": "sales@demo.local", "password": "demo"},
                headers={"X-CSRF-Token": csrf},
            )
            assert signed.status_code == 200
        rest = []
        for line in process.stdout:
            rest.append(line)
            if "Ctrl-C" in line:
                break
        assert "sales@demo.local" in "".join(rest)
        print(f"erp-agent demo ready in {ready:.1f} s (first run, seeding included)")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        if process.stdout is not None:
            process.stdout.close()
    assert (tmp_path / "data" / "demo-erp.sqlite").exists()
