"""`erp-agent demo --system sql` from nothing: seeds the bespoke demo database (SQLite), serves
the product on it through the sql connector, and answers a Kisumu user from Kisumu's books only
— the figure checked against independent SQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest
from server_doubles import demo_process, sse_events

from demo_erp.server import free_port

pytestmark = pytest.mark.slow


def test_demo_on_the_bespoke_database_answers_within_scope(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "data"
    with demo_process("sql", data, port) as text:
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
