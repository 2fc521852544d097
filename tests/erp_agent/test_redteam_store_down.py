"""Red team: the store's PostgreSQL becomes unreachable under a running server (a TCP proxy in
front of it drops every connection and refuses new ones). Every route answers in words — 503
for anything that needs the store, in the client's protocol on /v1 and /mcp — never an HTTP
500, a connection reset or the database's address; /healthz says "degraded"; when the database
is back, the same browser session works again without signing in."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from fault_doubles import TcpProxy
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from pg_fixtures import pg_database
from retrieval_fixtures import PG_DSN
from schemathesis import GenerationMode
from server_doubles import LiveServer, serve_in_thread, signed_session
from sqlalchemy.engine import make_url

from conftest import DemoERP

pytestmark = pytest.mark.postgres
USER = "sales@demo.local"
DSN = re.compile(
    r"postgres|psycopg|sqlalchemy|dbname|host=|port=|\brole \"|127\.0\.0\.1:\d+/|erp_redteam",
    re.IGNORECASE,
)
# Routes that need nobody signed in and never touch the store.
STORELESS = {"/api/auth/csrf", "/api/auth/options", "/api/auth/sso/start"}


@pytest.fixture(scope="module")
def database() -> Iterator[tuple[TcpProxy, str]]:
    """A new PostgreSQL database reached through a TCP proxy: (the proxy, the store's URL)."""
    with pg_database("erp_redteam") as url:
        target = make_url(PG_DSN)
        proxy = TcpProxy((target.host or "127.0.0.1", int(target.port or 5432)))
        yield proxy, make_url(url).set(port=proxy.port).render_as_string(hide_password=False)
        proxy.down()


@pytest.fixture(scope="module")
def agent(
    demo_erp: DemoERP, database: tuple[TcpProxy, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    server = serve_in_thread(
        demo_erp.url, tmp_path_factory.mktemp("redteam-store"),
        settings={"database_url": database[1]},
    )  # fmt: skip
    yield server
    server.stop()


@pytest.fixture(scope="module")
def signed(agent: LiveServer) -> Iterator[requests.Session]:
    session = signed_session(agent.url, USER)
    yield session
    session.close()


def _in_words(reply: requests.Response) -> str:
    assert not DSN.search(reply.text), reply.text
    body = reply.json()
    message = body.get("detail") or (body.get("error") or {}).get("message") or ""
    assert isinstance(message, str), body
    assert "database" in message, message
    return message


def test_every_route_answers_503_in_words_while_the_store_is_down(
    agent: LiveServer, database: tuple[TcpProxy, str], signed: requests.Session
) -> None:
    proxy, _ = database
    # Something to list before the store goes: one conversation.
    assert signed.post(f"{agent.url}/api/chat", json={"message": "hello"}).status_code == 200
    assert signed.get(f"{agent.url}/api/conversations").json()
    schema = schemathesis.openapi.from_url(f"{agent.url}/openapi.json")
    proxy.down()
    statuses: dict[str, list[int]] = {}
    problems: list[str] = []
    try:
        for found in schema.get_all_operations():
            operation = found.ok()
            if operation.path == "/api/auth/sign-out":
                continue

            @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
            @settings(
                max_examples=1,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: Any) -> None:
                label = f"{case.method} {case.operation.path}"
                try:
                    reply = case.call(session=signed, timeout=60)
                except requests.ConnectionError as exc:  # a reset instead of an answer
                    problems.append(f"{label}: {exc}")
                    return
                statuses.setdefault(label, []).append(reply.status_code)
                if reply.status_code >= 500 and reply.status_code != 503:
                    problems.append(f"{label}: {reply.status_code} {reply.text[:200]}")
                elif reply.status_code == 503 and case.operation.path != "/healthz":
                    _in_words(reply)
                if case.operation.path not in STORELESS and reply.status_code < 300:
                    problems.append(f"{label}: {reply.status_code} while the store is down")

            try:
                check()
            except Unsatisfiable:
                continue
        # The reproduced cases, named.
        listing = signed.get(f"{agent.url}/api/conversations", timeout=60)
        assert listing.status_code == 503
        assert "not answering" in _in_words(listing)
        chat = signed.post(f"{agent.url}/api/chat", json={"message": "hello"}, timeout=60)
        assert chat.status_code == 503
        _in_words(chat)
        fresh = requests.Session()
        csrf = fresh.get(f"{agent.url}/api/auth/csrf").json()["csrf"]
        sign_in = fresh.post(
            f"{agent.url}/api/auth/sign-in",
            json={"user": USER, "password": "demo"},
            headers={"X-CSRF-Token": csrf},
            timeout=60,
        )
        assert sign_in.status_code == 503
        _in_words(sign_in)
        v1 = requests.post(
            f"{agent.url}/v1/chat/completions",
            json={"model": "erp-agent", "messages": [{"role": "user", "content": "hi"}]},
            headers={"Authorization": "Bearer eak_anything"},
            timeout=60,
        )
        assert v1.status_code == 503
        assert v1.json()["error"]["code"] == "store_unavailable"
        _in_words(v1)
        mcp = requests.post(
            f"{agent.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Authorization": "Bearer eak_anything",
                "Accept": "application/json, text/event-stream",
            },
            timeout=60,
        )
        assert mcp.status_code == 503
        assert mcp.json()["error"]["data"]["kind"] == "store_unavailable"
        _in_words(mcp)
        health = requests.get(f"{agent.url}/healthz", timeout=60)
        assert health.status_code == 503
        assert health.json()["status"] == "degraded"
    finally:
        proxy.up()
    assert not problems, "\n".join(problems[:20])
    assert len(statuses) >= 25
    # Back: the same browser session, without signing in again.
    assert signed.get(f"{agent.url}/api/conversations", timeout=60).status_code == 200
    assert requests.get(f"{agent.url}/healthz", timeout=60).json()["store"] == "ok"


@pytest.fixture(scope="module")
def slow_agent(
    demo_erp: DemoERP, database: tuple[TcpProxy, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """The same store, a model that takes 1.5 s a step: time to lose the store mid-turn."""
    server = serve_in_thread(
        demo_erp.url, tmp_path_factory.mktemp("redteam-store-slow"),
        settings={"database_url": database[1]}, delay=1.5,
    )  # fmt: skip
    yield server
    server.stop()


def test_a_store_lost_mid_turn_ends_the_stream_in_words(
    slow_agent: LiveServer, database: tuple[TcpProxy, str]
) -> None:
    proxy, _ = database
    with requests.Session() as web:
        csrf = web.get(f"{slow_agent.url}/api/auth/csrf").json()["csrf"]
        reply = web.post(
            f"{slow_agent.url}/api/auth/sign-in",
            json={"user": USER, "password": "demo"},
            headers={"X-CSRF-Token": csrf},
        )
        web.headers["X-CSRF-Token"] = reply.json()["csrf"]
        events: list[tuple[str, dict[str, Any]]] = []
        try:
            with web.post(
                f"{slow_agent.url}/api/chat",
                json={"message": "Show total sales by customer as a table and a chart"},
                stream=True,
                timeout=120,
            ) as stream:
                assert stream.status_code == 200
                name = ""
                for line in stream.iter_lines(decode_unicode=True):
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        events.append((name, json.loads(line[6:])))
                        if name == "progress" and proxy.is_up:
                            proxy.down()  # the store goes away while the turn runs
        finally:
            proxy.up()
    assert events[-1][0] == "error", events[-3:]
    message = events[-1][1]["message"]
    assert "database" in message
    assert not DSN.search(json.dumps(events)), events[-1]
