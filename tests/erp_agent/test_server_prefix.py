"""The path prefix (ERP_AGENT_ROOT_PATH, or a trusted proxy's X-Forwarded-Prefix) applied once, in
front of everything: routes, the CSRF exemptions of the bearer-only APIs, the pages' security
headers, and every URL the web app and the admin console call. tests/erp_agent/test_nginx_proxy.py
drives every channel through nginx under /agent; these pin the rules fast and in-process."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import SESSION_KEY, ScriptBook
from starlette.types import Receive, Scope, Send

from conftest import DemoERP
from erp_agent.config import ServerSettings, Settings
from erp_agent.errors import ConfigError
from erp_agent.runtime import Runtime
from erp_agent.server import ModelSwitch, create_app
from erp_agent.server.proxy import ProxyHeaders, route_path
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
STATIC = Path(__file__).resolve().parents[2] / "src" / "erp_agent" / "server" / "static"


async def _seen(
    headers: dict[str, str] | None = None,
    *,
    path: str = "/api/chat",
    root_path: str = "",
    configured: str = "/agent",
    client: str = "127.0.0.1",
    query: bytes = b"",
) -> tuple[int, dict[str, Any]]:
    """(status, the scope the app saw) for one request through ProxyHeaders."""
    seen: dict[str, Any] = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.update(scope)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    proxy = ProxyHeaders(app, ["127.0.0.1"], 0, root_path=configured)
    scope = {
        "type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
        "root_path": root_path, "query_string": query, "client": (client, 5000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
    }  # fmt: skip
    await proxy(scope, receive, send)
    status = int(sent[0]["status"])
    if status == 308:
        seen["location"] = dict(sent[0]["headers"])[b"location"].decode()
    return status, seen


async def test_the_configured_prefix_holds_whether_or_not_the_proxy_stripped_it() -> None:
    for path, root in (("/api/chat", ""), ("/agent/api/chat", ""), ("/agent/api/chat", "/agent")):
        _, scope = await _seen(path=path, root_path=root)
        assert (scope["root_path"], scope["path"]) == ("/agent", "/agent/api/chat"), path
        assert scope["raw_path"] == b"/agent/api/chat"
        assert route_path(scope) == "/api/chat"
    _, scope = await _seen(path="/agents/x")  # another word, not the prefix
    assert scope["path"] == "/agent/agents/x"
    _, plain = await _seen(configured="")
    assert (plain["root_path"], plain["path"]) == ("", "/api/chat")


async def test_a_trusted_proxys_prefix_wins_and_a_strangers_is_ignored() -> None:
    _, scope = await _seen({"X-Forwarded-Prefix": "/tools/agent/"}, configured="")
    assert (scope["root_path"], scope["path"]) == ("/tools/agent", "/tools/agent/api/chat")
    _, scope = await _seen({"X-Forwarded-Prefix": "/other"})
    assert scope["root_path"] == "/other"
    _, scope = await _seen({"X-Forwarded-Prefix": "/evil"}, client="203.0.113.7")
    assert scope["root_path"] == "/agent"  # not a trusted proxy: the setting stands
    for bad in ("//evil.example", "/a/../b", "https://x", "/a b"):
        _, scope = await _seen({"X-Forwarded-Prefix": bad})
        assert scope["root_path"] == "/agent", bad


async def test_the_bare_prefix_is_redirected_to_its_slash() -> None:
    status, seen = await _seen(path="/agent", query=b"proposal=prop_1")
    assert status == 308
    assert seen["location"] == "/agent/?proposal=prop_1"


def test_a_root_path_that_is_not_a_path_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="not a path prefix"):
        ProxyHeaders(lambda *_: None, [], 0, root_path="/a/../b")  # type: ignore[arg-type]


@pytest.fixture
async def prefixed(demo_erp: DemoERP, tmp_path: Path) -> Any:
    settings = Settings(
        erp_url=demo_erp.url, data_dir=str(tmp_path), server=ServerSettings(root_path="/agent")
    )
    runtime = await Runtime.create(settings, store=MemoryStore())
    app = create_app(runtime, ModelSwitch(lambda: ScriptBook()), session_key=SESSION_KEY)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield app, client
    await runtime.aclose()


async def test_bearer_apis_are_not_refused_for_csrf_under_the_prefix(prefixed: Any) -> None:
    _, client = prefixed
    bearer = {"Authorization": "Bearer eak_unknown"}
    for path, body in (
        ("/agent/v1/chat/completions", {"model": "erp-agent", "messages": []}),
        ("/agent/api/relay/turns", {"user": "x", "message": "hi"}),
    ):
        reply = await client.post(path, json=body, headers=bearer)
        assert reply.status_code == 401, (path, reply.text)  # the key's refusal, not CSRF's
        assert "CSRF" not in reply.text
    # The web API still wants the token, under the prefix as at /.
    refused = await client.post("/agent/api/auth/sign-out")
    assert refused.status_code == 403
    assert "CSRF" in refused.text
    page = await client.get("/agent/admin")
    assert "default-src 'self'" in page.headers["content-security-policy"]


def _api_calls(script: str) -> list[tuple[str, str]]:
    """(method, path) of every api(…) call, template parts as {x}."""
    text = (STATIC / script).read_text(encoding="utf-8")
    found = re.findall(r"api\(\s*'(GET|POST|PUT|DELETE)',\s*(['`])(.+?)\2", text)
    return [(method, re.sub(r"\$\{[^}]+\}", "{x}", path)) for method, _, path in found]


async def test_every_api_call_of_the_web_app_and_the_admin_console_is_a_route(
    prefixed: Any,
) -> None:
    app, _ = prefixed
    routes = [
        (method.upper(), re.compile("^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(path)) + "$"))
        for path, item in app.openapi()["paths"].items()
        for method in item
    ]
    scripts = [f.name for f in STATIC.glob("*.js")]  # the web app's and the console's own
    calls = [c for script in scripts for c in _api_calls(script)]
    assert len(calls) > 25
    for method, path in calls:
        # Relative to the app's root: a leading / would leave the root path behind.
        assert not path.startswith("/"), path
        if "${" in path:  # a nested template this reading cannot follow; the rule above held
            continue
        route = "/" + path.split("?")[0].replace("{x}", "x")
        assert any(m == method and p.match(route) for m, p in routes), (method, path)
