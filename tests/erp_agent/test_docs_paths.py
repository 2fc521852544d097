"""The docs name only addresses that exist: every path of the agent's HTTP API in
docs/configuration.md, docs/channels.md and docs/deployment.md is a route of the app (the single
sign-on callback, the relay, the MCP endpoint…), every file they point at is in the repository,
and the client examples in docs/channels.md set timeouts and run, as written, against a server."""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from channel_fixtures import ADMIN, agent, issue_key, own_erp
from fastapi import FastAPI
from server_doubles import SESSION_KEY, LiveServer, ScriptBook
from starlette.routing import Match

from erp_agent.config import Settings
from erp_agent.runtime import Runtime
from erp_agent.server import ModelSwitch, create_app
from erp_agent.store.memory import MemoryStore

__all__ = ["agent", "own_erp"]
REPO = Path(__file__).resolve().parents[2]
DOCS = ("configuration.md", "channels.md", "deployment.md")
HOST = "https://agent.example.com"
PREFIX = "/agent"  # the documented root path (docs/deployment.md)
# Where our own routes live; anything else (/app/…, /api/method/…) is the ERP's, not ours.
OURS = re.compile(r"^/(api/(?!method/|resource/)|v1\b|mcp\b|metrics\b|healthz\b|admin\b|docs\b"
                  r"|openapi\.json|static/|\.well-known/)")  # fmt: skip
PLACEHOLDER = re.compile(r"[{<…]|\.\.\.")


def _doc_paths(text: str) -> set[str]:
    """The agent's paths a page names: under its example host, or bare in code spans."""
    found = {m.group(1) for m in re.finditer(re.escape(HOST) + r"(/[^\s`'\"),]*)", text)}
    found |= {m.group(1) for m in re.finditer(r"(?<![\w/.:])(/[A-Za-z.][^\s`'\"),]*)", text)}
    paths = set()
    for path in found:
        path = path.rstrip(".:;")
        if path.startswith(PREFIX + "/"):
            path = path[len(PREFIX) :]
        if OURS.match(path):
            paths.add(path.split("?")[0])
    return paths


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    """The server's app as `erp-agent serve` builds it (its routes are all that is needed)."""

    async def build() -> FastAPI:
        folder = tmp_path_factory.mktemp("routes")
        settings = Settings(erp_url="http://127.0.0.1:9", data_dir=str(folder))
        runtime = await Runtime.create(settings, store=MemoryStore())
        try:
            return create_app(runtime, ModelSwitch(lambda: ScriptBook()), session_key=SESSION_KEY)
        finally:
            await runtime.aclose()

    return asyncio.run(build())


def _served(app: FastAPI, path: str) -> bool:
    """Does a route of ``app`` answer ``path`` ({id}, rt_… and the like stand for any value)?"""
    segments = path.split("/")
    if segments[-1] == "…":  # "anything under": some route lies below the rest
        below = "/".join("[^/]+" if PLACEHOLDER.search(s) else re.escape(s) for s in segments[:-1])
        return any(re.match(below + "/", p) for p in app.openapi()["paths"])
    concrete = "/".join("x" if PLACEHOLDER.search(s) else s for s in segments)
    scope = {"type": "http", "method": "GET", "path": concrete, "root_path": "",
             "headers": [], "query_string": b""}  # fmt: skip
    if any(route.matches(scope)[0] is not Match.NONE for route in app.router.routes):
        return True
    # A prefix the docs name in prose (`/api/relay`, `/v1`): some route lies under it.
    return any(p.startswith(path.rstrip("/") + "/") for p in app.openapi()["paths"])


@pytest.mark.parametrize("page", DOCS)
def test_every_agent_path_in_the_docs_is_a_route(page: str, app: FastAPI) -> None:
    paths = _doc_paths((REPO / "docs" / page).read_text(encoding="utf-8"))
    assert paths, f"docs/{page} names no path of the agent"
    missing = sorted(p for p in paths if not _served(app, p))
    assert not missing, f"docs/{page} names paths the server does not serve: {missing}"


def test_the_sign_on_callback_the_docs_name_is_the_servers(app: FastAPI) -> None:
    for page in ("configuration.md", "deployment.md"):
        text = (REPO / "docs" / page).read_text(encoding="utf-8")
        named = set(re.findall(r"/api/auth/\w+/callback", text))
        assert named == {"/api/auth/sso/callback"}, (page, named)
    assert _served(app, "/api/auth/sso/callback")
    assert not _served(app, "/api/auth/oauth/callback")


@pytest.mark.parametrize("page", DOCS)
def test_every_file_the_docs_name_exists(page: str) -> None:
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    named = set(
        re.findall(
            r"(?<![\w/.-])((?:docs|src|tests|benchmarks|integrations|scripts|\.ci)/[\w./-]*\w"
            r"|erp_agent_plugin/[\w./-]*\.py)",
            text,
        )
    )
    plugin = REPO / "integrations" / "frappe" / "erp_agent_plugin"
    missing = sorted(n for n in named if not ((REPO / n).exists() or (plugin / n).exists()))
    assert not missing, f"docs/{page} points at files that do not exist: {missing}"


def _python_blocks(page: str) -> list[str]:
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def _example(marker: str) -> str:
    return next(block for block in _python_blocks("channels.md") if marker in block)


def test_the_client_examples_set_timeouts_that_hold_under_load() -> None:
    mcp_example, openai_example = _example("streamable_http_client"), _example("from openai")
    assert re.search(r"timeout=httpx2\.Timeout\((\d+)", mcp_example), mcp_example
    assert int(re.search(r"Timeout\((\d+)", mcp_example).group(1)) >= 60  # type: ignore[union-attr]
    assert re.search(r"read_timeout_seconds=(\d+)", mcp_example)
    assert re.search(r"timeout=(\d+)", openai_example), openai_example
    assert "max_retries=0" in openai_example  # a retried request would be a second turn


def _as_written(block: str, url: str, key: str) -> str:
    return block.replace(HOST, url).replace("eak_…", key).replace("2026-", "2025-")


def test_the_client_examples_run_as_written(agent: LiveServer, capsys: Any) -> None:
    key = issue_key(agent.url, ADMIN)
    mcp_example = _as_written(_example("streamable_http_client"), agent.url, key)
    body = textwrap.indent(mcp_example, "    ")
    scope: dict[str, Any] = {}
    exec(f"async def example():\n{body}", scope)  # the page's code, inside a coroutine
    asyncio.run(scope["example"]())
    printed = capsys.readouterr().out
    assert "is_error=False" in printed, printed[:500]  # the tool's result, printed
    openai_example = _as_written(_example("from openai"), agent.url, key)
    exec(openai_example, {})
    assert capsys.readouterr().out.strip(), "the OpenAI example printed no answer"
