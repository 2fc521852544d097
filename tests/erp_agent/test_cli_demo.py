"""`erp-agent demo` from nothing: seeds, starts the demo ERP and the server, ready in < 30 s."""

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
# The target is 30 s on an idle 2-core machine (benchmarks/demo_start.py measures it); the
# bound here is looser so a busy CI machine does not fail it, yet it catches a start that
# blocks on full seeding or indexing.
READY_WITHIN = 60.0
COMMAND = ["-m", "erp_agent", "demo"]  # what `erp-agent demo` runs


def test_demo_is_ready_within_30_seconds_and_serves_the_app(tmp_path: Path) -> None:
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
        assert ready < READY_WITHIN, f"ready after {ready:.1f} s"
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
