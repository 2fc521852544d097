"""Red team: NUL, lone surrogates and other control characters in every path parameter, query
parameter and JSON body field are refused with 400 naming the field — on every operation of the
server's OpenAPI (driven by schemathesis, each drawn case mutated in each place it takes text),
on the twelve operations an attack run turned into HTTP 500, on the OpenAI-compatible API and
on MCP. Never a 500, never the store's address in a body. Tab, newline and carriage return are
text and pass. Below the HTTP layer the PostgreSQL store itself never fails on a NUL."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, assume, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from server_doubles import LiveServer, serve_in_thread, signed_session

from conftest import DemoERP
from erp_agent.server.input_check import first_bad

USER = "sales@demo.local"
IN_URLS = ("\x00", "\x07", "\x1b")  # what a URL can carry (a lone surrogate cannot be sent)
IN_BODIES = ("\x00", "\x1f", "\ud800")
# Anything that looks like a database address, host/port pair or role name.
DSN = re.compile(
    r"postgres|psycopg|sqlite\+|mysql|dbname=|host=|port=|\brole \"|5432|5433", re.IGNORECASE
)


@pytest.fixture(scope="module")
def agent(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = serve_in_thread(demo_erp.url, tmp_path_factory.mktemp("redteam-input"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def signed(agent: LiveServer) -> Iterator[requests.Session]:
    session = signed_session(agent.url, USER)
    yield session
    session.close()


def _refused(reply: requests.Response, field: str) -> str:
    """The reply is 400 in words, names ``field`` and shows no database address."""
    assert reply.status_code == 400, (field, reply.status_code, reply.text[:300])
    assert not DSN.search(reply.text), reply.text
    body = reply.json()
    message = body.get("detail") or (body.get("error") or {}).get("message") or ""
    assert f"'{field}'" in message, (field, message)
    assert "not allowed" in message, message
    return str(message)


# ------------------------------------------------------------------ every operation (schemathesis)


def _variants(case: Any) -> Iterator[tuple[str, str, Any]]:
    """(where, field, a copy of the case with a forbidden character in that one place); the
    characters take turns, so every kind is tried in every kind of place."""
    turn = iter(range(10_000))
    for name in list(case.path_parameters or {}):
        mutated = _copy(case)
        mutated.path_parameters[name] = f"x{_pick(IN_URLS, turn)}y"
        yield "path", name, mutated
    # Every query parameter the operation declares, whether this case sent it or not.
    for name in [p.name for p in case.operation.query]:
        value = (case.query or {}).get(name)
        mutated = _copy(case)
        mutated.query[name] = f"{value if value is not None else ''}{_pick(IN_URLS, turn)}"
        yield "query", name, mutated
    if isinstance(case.body, dict):
        for field in _string_fields(case.body):
            mutated = _copy(case)
            _put(mutated.body, field, _pick(IN_BODIES, turn))
            yield "body", _dotted(field), mutated


def _pick(chars: tuple[str, ...], turn: Iterator[int]) -> str:
    return chars[next(turn) % len(chars)]


def _copy(case: Any) -> Any:
    return case.operation.Case(
        method=case.method,
        path_parameters=dict(case.path_parameters or {}),
        query=dict(case.query or {}),
        headers=dict(case.headers or {}),
        body=json.loads(json.dumps(case.body))
        if isinstance(case.body, (dict, list))
        else case.body,
        media_type=case.media_type,
    )


def _string_fields(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, str):
        yield at
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_fields(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_fields(item, (*at, index))


def _put(body: Any, field: tuple[Any, ...], bad: str) -> None:
    for step in field[:-1]:
        body = body[step]
    body[field[-1]] = f"{body[field[-1]]}{bad}"


def _dotted(field: tuple[Any, ...]) -> str:
    out = ""
    for step in field:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def test_every_operation_refuses_control_characters_naming_the_field(
    agent: LiveServer, signed: requests.Session
) -> None:
    schema = schemathesis.openapi.from_url(f"{agent.url}/openapi.json")
    tried: dict[str, int] = {"path": 0, "query": 0, "body": 0}
    failures: list[str] = []
    operations = 0
    for found in schema.get_all_operations():
        operation = found.ok()
        if operation.path == "/api/auth/sign-out":
            continue
        operations += 1

        path = operation.path

        @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
        @settings(
            max_examples=2,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case: Any) -> None:
            # Only the character put in below is to blame (drawn keys may carry their own).
            in_path = [unquote(str(v)) for v in (case.path_parameters or {}).values()]
            assume(first_bad([case.body, case.query, in_path]) is None)
            for where, field, mutated in _variants(case):
                reply = mutated.call(session=signed, timeout=60)
                tried[where] += 1
                try:
                    _refused(reply, field)
                except AssertionError as exc:
                    failures.append(f"{case.method} {path} {where} {field!r}: {exc}")  # noqa: B023

        try:
            check()
        except Unsatisfiable:
            continue
    assert operations >= 25
    assert min(tried.values()) >= 20, tried
    assert not failures, "\n".join(failures[:20])


# ------------------------------------------------------------------ the operations once a 500


def test_the_twelve_operations_once_a_500_are_400_naming_the_field(
    agent: LiveServer, signed: requests.Session
) -> None:
    url = agent.url
    nul = "ab\x00cd"
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("GET", f"/api/turns/{nul}", {}, "turn_id"),
        ("GET", f"/api/turns/{nul}/events", {}, "turn_id"),
        ("GET", f"/api/conversations/{nul}", {}, "conversation_id"),
        ("GET", "/api/conversations", {"params": {"limit": "5\x00"}}, "limit"),
        ("GET", f"/api/results/{nul}", {}, "result_id"),
        ("GET", "/api/results/r1", {"params": {"columns": nul}}, "columns"),
        ("GET", f"/api/results/{nul}/export", {"params": {"format": "csv"}}, "result_id"),
        ("GET", "/api/results/r1/export", {"params": {"format": "csv\x00"}}, "format"),
        ("GET", f"/api/proposals/{nul}", {}, "proposal_id"),
        ("GET", "/api/proposals", {"params": {"conversation_id": nul}}, "conversation_id"),
        ("POST", f"/api/proposals/{nul}/confirm", {"json": {"payload_hash": "x"}}, "proposal_id"),
        ("POST", "/api/proposals/p1/confirm", {"json": {"payload_hash": nul}}, "payload_hash"),
        ("POST", "/api/documents/scan", {"params": {"filename": nul}, "data": b"%PDF-1.4"}, "filename"),
        ("POST", "/api/chat", {"json": {"message": nul, "background": True}}, "message"),
        ("POST", "/api/chat", {"json": {"message": "hi", "conversation_id": nul}}, "conversation_id"),
        ("POST", "/api/auth/sign-in", {"json": {"user": nul, "password": "demo"}}, "user"),
        ("POST", "/api/auth/sign-in", {"json": {"user": USER, "password": nul}}, "password"),
        ("POST", f"/api/turns/{nul}/feedback", {"json": {"rating": "up"}}, "turn_id"),
        ("GET", "/api/me/export", {"params": {"x": nul}}, "x"),
    ]  # fmt: skip
    for method, path, options, field in cases:
        reply = signed.request(method, url + path, timeout=60, **options)
        _refused(reply, field)


def test_the_openai_api_refuses_in_its_own_shape(agent: LiveServer) -> None:
    body = {"model": "erp-agent", "messages": [{"role": "user", "content": "How many\x00?"}]}
    reply = requests.post(
        f"{agent.url}/v1/chat/completions",
        json=body,
        headers={"Authorization": "Bearer eak_not_checked_before_the_text"},
        timeout=60,
    )
    message = _refused(reply, "messages[0].content")
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == "messages[0].content"
    assert error["code"] == "invalid_characters"
    assert "U+0000" in message


def test_mcp_refuses_with_a_json_rpc_error(agent: LiveServer) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "sales_invoice.get", "arguments": {"id": "SINV\x00-1"}},
    }
    reply = requests.post(
        f"{agent.url}/mcp",
        json=call,
        headers={"Authorization": "Bearer eak_x", "Accept": "application/json, text/event-stream"},
        timeout=60,
    )
    assert reply.status_code == 400
    body = reply.json()
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == 7
    assert body["error"]["code"] == -32600
    assert "'params.arguments.id'" in body["error"]["message"]


def test_a_lone_surrogate_and_a_raw_control_character_are_named(
    agent: LiveServer, signed: requests.Session
) -> None:
    raw = b'{"message": "How many \\ud800?"}'
    reply = signed.post(
        f"{agent.url}/api/chat", data=raw, headers={"Content-Type": "application/json"}
    )
    assert "lone surrogate" in _refused(reply, "message")
    # A control character sent raw inside the JSON text (not escaped), and no Content-Type:
    # FastAPI would still read it as JSON, so it is checked as JSON.
    reply = signed.post(
        f"{agent.url}/api/auth/sign-in", data=b'{"user": "a\x07b", "password": "x"}'
    )
    assert "U+0007" in _refused(reply, "user")


def test_tab_newline_and_carriage_return_are_text(
    agent: LiveServer, signed: requests.Session
) -> None:
    reply = signed.post(
        f"{agent.url}/api/chat",
        json={"message": "Two lines:\r\n\tfirst\n\tsecond", "background": True},
        timeout=60,
    )
    assert reply.status_code == 202, reply.text


# ------------------------------------------------------------------ below HTTP: the store


@pytest.mark.postgres
@pytest.mark.anyio
async def test_the_postgres_store_never_fails_on_a_nul(tmp_path: Path) -> None:
    import datetime as dt

    from pg_fixtures import pg_database

    from erp_agent.store.records import Conversation, Turn
    from erp_agent.store.sql_store import open_store

    with pg_database() as url:
        store = open_store(url)
        await store.migrate()
        try:
            assert await store.get_conversation("c\x00x") is None
            assert await store.get_turn("t\x00x") is None
            assert await store.get_proposal("p\x00x") is None
            now = dt.datetime.now(dt.UTC)
            conversation = Conversation(id="c1", user="u\x00@x", org="default", title="A\x00B")
            turn = Turn(
                id="t1", conversation_id=conversation.id, seq=1, user_message="hi\x00there",
                status="done", state={"note": "x\x00y", "k\x00": ["\x00"]}, created_at=now,
                updated_at=now,
            )  # fmt: skip
            await store.create_conversation(conversation, turn)
            await store.save_turn(turn)
            stored = await store.get_turn("t1")
            assert stored is not None
            assert stored.user_message == "hi\ufffdthere"
            assert stored.state["note"] == "x\ufffdy"
        finally:
            await store.close()


# ------------------------------------------------------------------ knowledge front matter


@pytest.mark.anyio
@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\n---\n# Returns\n",
        "---\ntitle: a\n  bad: indent: here\n---\nbody\n",
        "---\n\t- tab\n---\nbody\n",
    ],
)
async def test_malformed_knowledge_front_matter_is_400(
    demo_erp: DemoERP, tmp_path: Path, text: str
) -> None:
    from server_doubles import build_app, client_for, make_runtime, sign_in

    from erp_agent.server.knowledge import IndexedKnowledge

    runtime = await make_runtime(demo_erp.url, tmp_path)
    knowledge = IndexedKnowledge(runtime.knowledge, tmp_path / "knowledge")
    try:
        async with client_for(build_app(runtime, tmp_path, knowledge=knowledge).app) as client:
            await sign_in(client, "admin@demo.local")
            reply = await client.post(
                "/api/admin/knowledge", json={"name": "returns.md", "text": text}
            )
    finally:
        await runtime.aclose()
    assert reply.status_code == 400, reply.text
    assert "front matter of returns.md is not valid YAML" in reply.json()["detail"]
    assert not (tmp_path / "knowledge" / "returns.md").exists()  # nothing kept


# ------------------------------------------------------------------ where errors become messages


@pytest.mark.parametrize(
    "error",
    [
        "StoreUnavailable",
        "StoreError",
        "ConfigError",
        "ErpAgentError",
    ],
)
def test_no_message_a_channel_shows_carries_the_stores_address(error: str) -> None:
    from erp_agent import errors
    from erp_agent.channels.faults import fault, user_message

    said = (
        "Could not save turn t1 in the store postgresql+psycopg://erp_agent:***@db.internal:5432/"
        'agent: connection to server at "10.0.0.7", port 5432 failed: FATAL: role "erp_agent" '
        "does not exist (host=db.internal port=5432 dbname=agent user=erp_agent) "
        "(Background on this error at: https://sqlalche.me/e/20/e3q8)"
    )
    exc = getattr(errors, error)(said)
    for shown in (user_message(exc), fault(exc).message):
        assert not DSN.search(shown), shown
        for leak in ("db.internal", "10.0.0.7", "erp_agent:", "sqlalche.me", "agent:"):
            assert leak not in shown, shown
