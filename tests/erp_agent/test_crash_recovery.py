"""The server is killed (kill -9) in the middle of a confirm, after the ERP wrote but before the
agent recorded it; restarted, it finds the proposal ``executing`` and decides it as the user:
executed, with the document, and written exactly once.

Real processes and real HTTP: the agent runs as ``erp-agent serve`` (offline model); the demo
ERP answers writes late through its ``write_delay`` test hook. The truth is read from the ERP's
tables and the agent store's file, not through the agent.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from erp_edits import draft_invoice
from server_doubles import sse_events

from conftest import TEST_TODAY, DemoERP, raw
from demo_erp.context import Settings
from demo_erp.server import free_port, start_in_thread

pytestmark = pytest.mark.slow
AGENT_ERP_TIMEOUT = 3.0  # the agent's wait for one ERP call; the kill comes well before it
WRITE_DELAY = 8.0  # the ERP holds a committed write's reply this long


class Agent:
    """``erp-agent serve`` as a child process that can be killed and started again."""

    def __init__(self, erp_url: str, data_dir: Path) -> None:
        self.url = ""
        self.env = {
            **os.environ,
            "ERP_AGENT_ERP_URL": erp_url,
            "ERP_AGENT_DATA_DIR": str(data_dir),
            # A fixed key: signed-in sessions (and their ERP credential) survive the restart.
            "ERP_AGENT_SESSION_KEY": Fernet.generate_key().decode(),
            "ERP_AGENT_ERP_TIMEOUT": str(AGENT_ERP_TIMEOUT),
            # No proxy in between: a short grace after the confirm's calls could have ended.
            "ERP_AGENT_ERP_WRITE_GRACE": "2",
        }
        self.log = data_dir / "serve.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        port = free_port()  # a new one each start: the killed process's may linger in TIME_WAIT
        self.url = f"http://127.0.0.1:{port}"
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "erp_agent", "serve", "--port", str(port),
                 "--model", "offline"],
                env=self.env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            assert time.monotonic() < deadline, "serve did not answer within 90 s"
            time.sleep(0.2)

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)  # no shutdown hook runs
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def erps(demo_erp: DemoERP, tmp_path: Path) -> Iterator[tuple[DemoERP, DemoERP]]:
    path = tmp_path / "demo.sqlite"
    shutil.copy(demo_erp.path, path)
    fast = start_in_thread(Settings(db_path=str(path), today=TEST_TODAY))
    slow = start_in_thread(Settings(db_path=str(path), today=TEST_TODAY, write_delay=WRITE_DELAY))
    yield DemoERP(fast.url, fast.url, path), DemoERP(slow.url, slow.url, path)
    slow.stop()
    fast.stop()


def sign_in(client: httpx.Client, user: str) -> None:
    csrf = client.get("/api/auth/csrf").json()["csrf"]
    reply = client.post(
        "/api/auth/sign-in", json={"user": user, "password": "demo"}, headers={"X-CSRF-Token": csrf}
    )
    assert reply.status_code == 200, reply.text
    client.headers["X-CSRF-Token"] = reply.json()["csrf"]


def proposal_block(client: httpx.Client, message: str) -> dict[str, Any]:
    reply = client.post("/api/chat", json={"message": message}, timeout=60)
    assert reply.status_code == 200, reply.text
    response = next(data for name, data in sse_events(reply.text) if name == "response")
    blocks = [b for b in response["blocks"] if b.get("type") == "proposal"]
    assert blocks, response
    block: dict[str, Any] = blocks[0]
    return block


def stored_status(data_dir: Path, proposal_id: str) -> str:
    conn = sqlite3.connect(data_dir / "erp-agent.sqlite")
    try:
        row = conn.execute("select status from proposals where id = ?", (proposal_id,)).fetchone()
    finally:
        conn.close()
    return str(row[0])


def gl_rows(demo: DemoERP, voucher: str) -> int:
    return len(raw(demo, "select name from `tabGL Entry` where voucher_no = ?", voucher))


def test_kill_9_mid_confirm_then_restart_settles_the_proposal_written_once(
    erps: tuple[DemoERP, DemoERP], tmp_path: Path
) -> None:
    fast, slow = erps
    invoice = draft_invoice(fast)["name"]
    data_dir = tmp_path / "agent"
    data_dir.mkdir()
    agent = Agent(slow.url, data_dir)
    agent.start()
    try:
        with httpx.Client(base_url=agent.url, timeout=30) as client:
            sign_in(client, "accounts.manager@demo.local")
            block = proposal_block(client, f"submit {invoice}")
            assert block["tool"] == "sales_invoice.submit"
            cookies, headers = dict(client.cookies), dict(client.headers)

            def confirm() -> None:
                with (
                    httpx.Client(base_url=agent.url, cookies=cookies, headers=headers) as c,
                    contextlib.suppress(httpx.TransportError),  # it is killed under the request
                ):
                    c.post(
                        f"/api/proposals/{block['id']}/confirm",
                        json={"payload_hash": block["payload_hash"]},
                        timeout=30,
                    )

            confirming = threading.Thread(target=confirm, daemon=True)
            confirming.start()
            deadline = time.monotonic() + AGENT_ERP_TIMEOUT
            while (
                raw(fast, "select docstatus from `tabSales Invoice` where name = ?", invoice)[0][
                    "docstatus"
                ]
                != 1
            ):
                assert time.monotonic() < deadline, "the ERP never received the submit"
                time.sleep(0.05)
            agent.kill()  # the ERP has written; the agent had not recorded it
            confirming.join(10)
            assert stored_status(data_dir, block["id"]) == "executing"

            agent.start()
            client.base_url = httpx.URL(agent.url)  # the session cookie is the same
            deadline = time.monotonic() + 90
            while (status := stored_status(data_dir, block["id"])) == "executing":
                assert time.monotonic() < deadline, "the proposal is still executing"
                time.sleep(0.5)
            seen = client.get(f"/api/proposals/{block['id']}")
            assert seen.status_code == 200, seen.text
            assert status == "executed", seen.json()
            assert seen.json()["status"] == "executed"
            assert seen.json()["result"]["id"] == invoice
    finally:
        agent.stop()
    row = raw(fast, "select docstatus from `tabSales Invoice` where name = ?", invoice)[0]
    assert row["docstatus"] == 1
    # Written once: the ledger holds one posting of the invoice, as many rows as one submit of
    # the invoice it was copied from made.
    original = raw(
        fast,
        "select name from `tabSales Invoice` where docstatus = 1 and is_return = 0 "
        "and name != ? order by posting_date desc limit 1",
        invoice,
    )[0]["name"]
    assert gl_rows(fast, invoice) == gl_rows(fast, original) > 0
