"""ERP faults answered plainly and fast: an ERP that is down, fails, or answers HTML instead of
its API gives one clear message (HTTP 502/503 from the server, exit 2 from the CLI), never a
TypeError, raw HTML, a 500 or "wrong password"; a whole turn stops at its deadline."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from erp_doubles import NGINX_502, Reply, broken_erp, unused_url
from server_doubles import build_app, client_for, make_runtime
from typer.testing import CliRunner

from conftest import DemoERP
from erp_agent.calls.outcome import Status
from erp_agent.cli import app as cli_app
from erp_agent.config import Settings
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient
from erp_agent.errors import (
    ErpAuthenticationError,
    ErpBadResponse,
    ErpRefusal,
    ErpUnavailable,
)
from erp_agent.models.testing import ScriptedModel
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

CRED = Credential.token("u@x", "k", "s")
SECURITY_EXCEPTION = json.dumps(
    {
        "exc_type": "SecurityException",
        "_server_messages": json.dumps(
            [
                json.dumps(
                    {"message": "Your account has been locked and will resume after 60 seconds"}
                )
            ]
        ),
    }
).encode()


# ------------------------------------------------------------------ the client


@pytest.mark.anyio
@pytest.mark.parametrize("status", [200, 500, 502])
async def test_html_instead_of_the_api_is_one_clear_error(status: int) -> None:
    with broken_erp(Reply(status=status)) as erp:
        client = FrappeClient(erp.url, backoff=0.001)
        with pytest.raises(ErpBadResponse) as raised:
            await client.get_list(CRED, "Sales Invoice")
        await client.aclose()
    message = str(raised.value)
    assert message.startswith(
        f"The ERP answered something that is not its API (HTTP {status} from {erp.url}/api/method/"
    )
    assert "<html" not in message


@pytest.mark.anyio
async def test_a_write_answered_with_html_is_not_retried_and_not_a_type_error() -> None:
    with broken_erp(
        Reply(status=500, body=b"Internal Server Error", content_type="text/plain")
    ) as erp:
        client = FrappeClient(erp.url, backoff=0.001)
        with pytest.raises(ErpBadResponse, match="HTTP 500"):
            await client.insert(CRED, "Lead", {"lead_name": "x"})
        assert len(erp.paths) == 1
        erp.reply = Reply(status=200, body=b'{"message": "ok"}', content_type="application/json")
        with pytest.raises(ErpBadResponse, match="HTTP 200"):  # JSON, but not a document reply
            await client.insert(CRED, "Lead", {"lead_name": "x"})
        await client.aclose()


@pytest.mark.anyio
async def test_sign_in_faults_are_never_a_wrong_password() -> None:
    down = unused_url()
    client = FrappeClient(down)
    with pytest.raises(ErpUnavailable, match=f"Cannot reach the ERP at {down}"):
        await client.login("sales@demo.local", "demo")
    await client.aclose()
    failing = Reply(
        status=500, body=b'{"exc_type": "OperationalError"}', content_type="application/json"
    )
    with broken_erp(failing) as erp:
        client = FrappeClient(erp.url)
        with pytest.raises(ErpUnavailable, match="not a wrong password") as raised:
            await client.login("sales@demo.local", "demo")
        assert not isinstance(raised.value, ErpAuthenticationError)
        erp.reply = Reply(status=500, body=SECURITY_EXCEPTION, content_type="application/json")
        with pytest.raises(ErpRefusal, match="locked and will resume after 60 seconds"):
            await client.login("sales@demo.local", "demo")
        erp.reply = Reply()
        with pytest.raises(ErpBadResponse, match="HTTP 502"):
            await client.login("sales@demo.local", "demo")
        await client.aclose()


# ------------------------------------------------------------------ the server


async def _sign_in_status(erp_url: str, tmp_path: Path) -> tuple[int, str]:
    runtime = await make_runtime(erp_url, tmp_path)
    try:
        async with client_for(build_app(runtime, tmp_path).app) as client:
            csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
            response = await client.post(
                "/api/auth/sign-in",
                json={"user": "sales@demo.local", "password": "demo"},
                headers={"X-CSRF-Token": csrf},
            )
            return response.status_code, str(response.json()["detail"])
    finally:
        await runtime.aclose()


@pytest.mark.anyio
async def test_server_sign_in_with_the_erp_down_is_503_naming_the_url(tmp_path: Path) -> None:
    down = unused_url()
    status, detail = await _sign_in_status(down, tmp_path)
    assert status == 503
    assert detail.startswith(f"Cannot reach the ERP at {down}")


@pytest.mark.anyio
async def test_server_sign_in_with_erp_5xx_or_html(tmp_path: Path) -> None:
    with broken_erp(
        Reply(status=500, body=b'{"exc_type": "Exception"}', content_type="application/json")
    ) as erp:
        status, detail = await _sign_in_status(erp.url, tmp_path)
        assert status == 503, detail  # a failing ERP, not a wrong password (401)
        assert "not a wrong password" in detail
        erp.reply = Reply(status=502, body=NGINX_502)
        status, detail = await _sign_in_status(erp.url, tmp_path)
        assert status == 502
        assert (
            detail
            == f"The ERP answered something that is not its API (HTTP 502 from {erp.url}/api/method/login)"
        )
        erp.reply = Reply(status=500, body=SECURITY_EXCEPTION, content_type="application/json")
        status, detail = await _sign_in_status(erp.url, tmp_path)
        assert status == 429
        assert "locked and will resume after 60 seconds" in detail


@pytest.mark.anyio
async def test_a_tool_call_against_an_html_erp_is_a_plain_error(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    good = await Runtime.create(
        Settings(erp_url=demo_erp.url, data_dir=str(tmp_path)), store=MemoryStore()
    )
    session = await good.sign_in("accounts@demo.local", "demo")
    await good.aclose()
    with broken_erp(Reply(status=200)) as erp:
        broken = await Runtime.create(
            Settings(erp_url=erp.url, data_dir=str(tmp_path)), store=MemoryStore()
        )
        try:
            outcome = await broken.gateway.call(session, "sales_invoice.count", {})
        finally:
            await broken.aclose()
    assert outcome.status is Status.ERROR
    assert outcome.message.startswith(
        "The ERP answered something that is not its API (HTTP 200 from "
    )


# ------------------------------------------------------------------ the turn deadline


@pytest.fixture
async def signed_session(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[object]:
    runtime = await Runtime.create(
        Settings(erp_url=demo_erp.url, data_dir=str(tmp_path)), store=MemoryStore()
    )
    yield await runtime.sign_in("accounts@demo.local", "demo")
    await runtime.aclose()


@pytest.mark.anyio
async def test_a_turn_stops_at_its_deadline_with_what_it_has(
    signed_session: object, tmp_path: Path
) -> None:
    """A hanging ERP with a 1 s timeout and 3 retries would take > 4 s a call; the turn's
    deadline (2 s) ends it with a clear message naming what it was waiting for (here the
    user's permissions, read from the ERP before the model is asked)."""
    with broken_erp(Reply(status=200, delay=30)) as erp:
        settings = Settings(
            erp_url=erp.url, data_dir=str(tmp_path), erp_timeout=1.0, turn_deadline=2.0
        )
        runtime = await Runtime.create(settings, store=MemoryStore())
        model = ScriptedModel(
            ScriptedModel.call("sales_invoice.count", {}), ScriptedModel.reply("42")
        )
        started = time.monotonic()
        try:
            response = await runtime.engine(model).run_turn(signed_session, "How many invoices?")  # type: ignore[arg-type]
        finally:
            await runtime.aclose()
    took = time.monotonic() - started
    assert took < 3.5, f"the turn took {took:.1f} s"
    assert response.outcome == "stopped"
    text = response.blocks[0]["markdown"]
    assert "I stopped after 2 seconds while waiting for the ERP (your permissions)" in text
    assert "nothing was written" in text


# ------------------------------------------------------------------ the command line


def test_cli_with_the_erp_down_prints_one_line_and_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    down = unused_url()
    monkeypatch.setenv("ERP_AGENT_ERP_URL", down)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "demo")
    for command in (
        ["connector", "check", "--as", "sales@demo.local"],
        ["ask", "hi", "--as", "sales@demo.local", "--model", "offline"],
    ):
        result = CliRunner().invoke(cli_app, command, env={"COLUMNS": "300"})
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert f"Cannot reach the ERP at {down}" in lines[0]
        assert "Traceback" not in result.output


def test_cli_wrong_password_still_exits_1(
    demo_erp: DemoERP, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "wrong")
    result = CliRunner().invoke(cli_app, ["connector", "check", "--as", "nobody.faults@demo.local"])
    assert result.exit_code == 1
    assert "Invalid login credentials" in result.output


@pytest.mark.parametrize(
    ("command", "flag"), [("demo", "--port"), ("serve", "--port"), ("demo", "--erp-port")]
)
def test_a_busy_port_is_one_line_naming_the_port_and_the_flag(
    tmp_path: Path, command: str, flag: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = [sys.executable, "-m", "erp_agent", command, flag, str(port)]
        if command == "demo":
            args += ["--data", str(tmp_path / "data"), "--no-index"]
            if flag == "--erp-port":
                args += ["--port", "0"]
        env = {**os.environ, "ERP_AGENT_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "300"}
        done = subprocess.run(
            args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert lines == [
        f"Error: Port {port} on 127.0.0.1 is already in use; choose another with {flag} PORT."
    ]
    assert not (tmp_path / "data" / "demo-erp.sqlite").exists()  # nothing seeded for nothing
