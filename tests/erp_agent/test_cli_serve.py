"""`erp-agent serve` answers against the configured ERP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from conftest import DemoERP
from demo_erp.server import free_port


def test_serve_starts_against_the_configured_erp(demo_erp: DemoERP, tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "ERP_AGENT_ERP_URL": demo_erp.url, "ERP_AGENT_DATA_DIR": str(tmp_path)}
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "erp_agent", "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                reply = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, (
                    process.stdout.read().decode() if process.stdout else ""
                )
                assert time.monotonic() < deadline, "serve did not answer within 60 s"
                time.sleep(0.2)
        assert reply.status_code == 200, reply.text
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert page.status_code == 200
        assert "<html" in page.text.lower()
    finally:
        process.terminate()
        process.wait(10)
