"""Red team: ERP faults on the channels without a browser. A fault-injecting proxy stands between
the running agent and a real (demo) ERP; each fault an attack run tried — a 500, an nginx 502
page, a portal's HTML with 200, JSON that is not the API, an empty body, no answer within the
timeout, a dropped connection — is answered

- on the OpenAI-compatible API (the official ``openai`` client) in OpenAI's error shape, with
  502 (not the ERP's API), 503 (unreachable) or 504 (too slow) and the ERP's state in words;
- on MCP (the official ``mcp`` client) with a JSON-RPC error in words (never a bare -32603
  "Internal server error");

and once the ERP answers again the same key works at once, with all its tools: a failed
resolution of the key's session is never cached. Sign-in against an ERP answering garbage is
502, never a session with nonsense roles."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import openai
import pytest
from channel_fixtures import OwnERP, issue_key, own_erp
from fault_doubles import FAULTS, STATUS_FOR, FaultProxy
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from server_doubles import LiveServer, serve_in_thread

from erp_agent.planner import OfflinePlanner

__all__ = ["own_erp"]
USER = "accounts@demo.local"
SIGNER = "purchase@demo.local"
QUESTION = "How many sales invoices are there?"


@pytest.fixture(scope="module")
def proxy(own_erp: OwnERP) -> Iterator[FaultProxy]:
    found = FaultProxy(own_erp.url)
    yield found
    found.close()


@pytest.fixture(scope="module")
def agent(proxy: FaultProxy, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The agent (offline planner) whose ERP is behind the proxy; a 1 s ERP timeout."""
    server = serve_in_thread(
        proxy.url,
        tmp_path_factory.mktemp("redteam-faults"),
        model=lambda rt: OfflinePlanner(rt.catalog, rt.connector.name),
        settings={"erp_timeout": 1.0},
    )
    yield server
    server.stop()


@pytest.fixture
def healthy(proxy: FaultProxy) -> Iterator[FaultProxy]:
    proxy.inject(None)
    yield proxy
    proxy.inject(None)


def _fresh_key(agent: LiveServer, proxy: FaultProxy) -> str:
    """A key never used yet (nothing about it can be cached), issued while the ERP is well."""
    proxy.inject(None)
    return issue_key(agent.url, USER)


def _assert_in_words(message: str) -> None:
    assert "ERP" in message, message
    assert "<html" not in message.lower(), message
    assert "traceback" not in message.lower(), message
    assert "Internal server error" not in message, message


# ------------------------------------------------------------------ the OpenAI-compatible API


@pytest.mark.parametrize("mode", list(FAULTS))
def test_openai_api_answers_an_erp_fault_in_its_own_error_shape(
    agent: LiveServer, healthy: FaultProxy, mode: str
) -> None:
    key = _fresh_key(agent, healthy)
    client = openai.OpenAI(base_url=f"{agent.url}/v1", api_key=key, max_retries=0, timeout=90)
    try:
        healthy.inject(FAULTS[mode])
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as raised:
                client.chat.completions.create(
                    model="erp-agent",
                    messages=[{"role": "user", "content": QUESTION}],
                    stream=stream,
                )
            error = raised.value
            assert error.status_code == STATUS_FOR[mode], (mode, error.status_code, error.body)
            assert error.response.headers["content-type"].startswith("application/json")
            body = error.response.json()["error"]
            assert set(body) == {"message", "type", "param", "code"}
            assert body["type"] == "server_error"
            assert body["code"].startswith("erp_"), body
            _assert_in_words(body["message"])
        assert healthy.faulted > 0  # the fault was really met
        # The ERP answers again: the same key, at once, with its tools (nothing was cached).
        healthy.inject(None)
        reply = client.chat.completions.create(
            model="erp-agent", messages=[{"role": "user", "content": QUESTION}]
        )
        text = reply.choices[0].message.content or ""
        assert "not its API" not in text, text
        assert "Cannot reach" not in text, text
        assert any(ch.isdigit() for ch in text), text
    finally:
        client.close()


def test_models_list_with_the_erp_down_is_503_in_words(
    agent: LiveServer, healthy: FaultProxy
) -> None:
    key = _fresh_key(agent, healthy)
    healthy.inject(FAULTS["connection dropped"])
    with (
        openai.OpenAI(base_url=f"{agent.url}/v1", api_key=key, max_retries=0) as client,
        pytest.raises(openai.APIStatusError) as raised,
    ):
        client.models.list()
    assert raised.value.status_code == 503
    assert raised.value.response.headers.get("retry-after")
    _assert_in_words(raised.value.response.json()["error"]["message"])


# ------------------------------------------------------------------ MCP


@asynccontextmanager
async def mcp_client(url: str, key: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=90)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
        yield client


@pytest.mark.anyio
@pytest.mark.parametrize("mode", list(FAULTS))
async def test_mcp_answers_an_erp_fault_with_an_error_in_words(
    agent: LiveServer, healthy: FaultProxy, mode: str
) -> None:
    key = _fresh_key(agent, healthy)
    async with mcp_client(agent.url, key) as client:
        healthy.inject(FAULTS[mode])
        with pytest.raises(MCPError) as listing:
            await client.list_tools()
        with pytest.raises(MCPError) as calling:
            await client.call_tool("sales_invoice.count", {})
        for error in (listing.value, calling.value):
            assert error.code != -32603, (mode, error.message)
            _assert_in_words(error.message)
            assert error.data["status"] == STATUS_FOR[mode], (mode, error.data)
        assert healthy.faulted > 0
        healthy.inject(None)
        # Recovered: the same key lists its tools and answers at once.
        names = [t.name for t in (await client.list_tools()).tools]
        assert "sales_invoice.count" in names or "metrics.query" in names, names
        result = await client.call_tool("metrics.query", _revenue_args())
        assert not result.is_error


def _revenue_args() -> dict[str, Any]:
    return {"metric": "revenue", "period": {"from": "2026-01-01", "to": "2026-12-31"}}


# ------------------------------------------------------------------ a cached session, then a fault


def test_a_fault_in_the_middle_of_a_turn_is_said_in_words(
    agent: LiveServer, healthy: FaultProxy
) -> None:
    """The key's session is resolved (and kept) while the ERP is well; the ERP then fails
    while the turn reads: the turn's answer says what the ERP did, in words (the tool's
    failure is the model's to explain), never a plain-text 500."""
    key = _fresh_key(agent, healthy)
    with openai.OpenAI(
        base_url=f"{agent.url}/v1", api_key=key, max_retries=0, timeout=90
    ) as client:
        client.models.list()  # resolves and keeps the session
        for mode in ("502 html", "garbage list", "slow"):
            healthy.inject(FAULTS[mode])
            reply = client.chat.completions.create(
                model="erp-agent", messages=[{"role": "user", "content": QUESTION}]
            )
            text = reply.choices[0].message.content or ""
            _assert_in_words(text)
            assert "not its API" in text or "did not answer within" in text, (mode, text)
        healthy.inject(None)


# ------------------------------------------------------------------ sign-in


@pytest.mark.parametrize("only", ["get_roles", "has_permission", "get_logged_user", "login"])
def test_sign_in_against_garbage_is_502_and_makes_no_session(
    agent: LiveServer, healthy: FaultProxy, only: str
) -> None:
    healthy.inject(FAULTS["garbage list"], only=only)
    with httpx.Client(base_url=agent.url, timeout=60) as web:
        csrf = web.get("/api/auth/csrf").json()["csrf"]
        headers = {"X-CSRF-Token": csrf}
        if only == "get_logged_user":  # asked at API-key sign-in: who is this key?
            reply = web.post(
                "/api/auth/sign-in-key",
                json={"api_key": "abcdef0123456", "api_secret": "0123456abcdef"},
                headers=headers,
            )
        else:
            # A user nobody signed in as here: their ERP grants are not remembered yet.
            reply = web.post(
                "/api/auth/sign-in", json={"user": SIGNER, "password": "demo"}, headers=headers
            )
        assert reply.status_code == 502, reply.text
        assert "not its API" in reply.json()["detail"]
        assert web.get("/api/auth/me").status_code == 401  # no session was made
    assert healthy.faulted > 0


def test_sign_in_against_an_erp_too_slow_is_504(agent: LiveServer, healthy: FaultProxy) -> None:
    healthy.inject(FAULTS["slow"], only="login")
    with httpx.Client(base_url=agent.url, timeout=60) as web:
        csrf = web.get("/api/auth/csrf").json()["csrf"]
        reply = web.post(
            "/api/auth/sign-in",
            json={"user": SIGNER, "password": "demo"},
            headers={"X-CSRF-Token": csrf},
        )
    assert reply.status_code == 504, reply.text
    assert "did not answer the sign-in within 1 s" in reply.json()["detail"]
