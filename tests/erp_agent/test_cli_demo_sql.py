"""`erp-agent demo --system sql` from nothing: seeds the bespoke demo database (SQLite), serves
the product on it through the sql connector, and answers a Kisumu user from Kisumu's books only
— the figure checked against independent SQL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from server_doubles import sse_events

from demo_erp.server import free_port

pytestmark = pytest.mark.slow


def test_demo_on_the_bespoke_database_answers_within_scope(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    env = {**os.environ, "ERP_AGENT_DATA_DIR": str(data), "COLUMNS": "200"}
    env.pop("ERP_AGENT_REASONING_MODEL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "erp_agent", "demo", "--system", "sql", "--port", str(port),
         "--data", str(data), "--no-index"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        lines = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "Ctrl-C" in line:
                break
        text = "".join(lines)
        assert "is ready" in text, text
        assert "kisumu@savanna.test" in text
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/healthz").json()["status"] == "ok"
        with httpx.Client(base_url=base, timeout=60) as client:
            csrf = client.get("/api/auth/csrf").json()["csrf"]
            headers = {"X-CSRF-Token": csrf}
            signed = client.post("/api/auth/sign-in", headers=headers,
                                 json={"user": "kisumu@savanna.test", "password": "demo"})  # fmt: skip
            assert signed.status_code == 200, signed.text
            headers["X-CSRF-Token"] = client.get("/api/auth/csrf").json()["csrf"]
            answer = client.post("/api/chat", headers=headers,
                                 json={"message": "how many sales invoices do we have?"})  # fmt: skip
            assert answer.status_code == 200, answer.text
            events = sse_events(answer.text)
        conn = sqlite3.connect(data / "demo-shop.sqlite")
        truth = conn.execute(
            "select count(*) from invoices where tenant_id = 'SAVANNA' and branch_id = 'Kisumu' "
            "and stage = 'posted' and deleted_at is null"
        ).fetchone()[0]
        conn.close()
        final = str(events[-1][1])
        assert events[-1][0] == "response", events[-1]
        assert str(truth) in final, final
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
