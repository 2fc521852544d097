"""Shared fixtures. Fixtures that start servers live next to the tests that need them."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from demo_erp import db
from demo_erp.context import ADMINISTRATOR, Ctx, Settings, as_user

# The demo data and every date-relative rule are pinned to this day in tests.
TEST_TODAY = dt.date(2026, 11, 30)


def pytest_configure(config: pytest.Config) -> None:
    """Browser checks wait up to 15 s for what a page shows (Playwright's default is 5 s): with
    a test worker per CPU the server behind the page shares the machine with another test."""
    from playwright.sync_api import expect

    expect.set_options(timeout=15_000)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """What a test recorded for the log (``record_property("printed", text)``: the eval runs'
    scores), printed at the end whichever worker process ran it."""
    printed = [
        value
        for status in ("passed", "failed")
        for report in terminalreporter.stats.get(status, [])
        for key, value in getattr(report, "user_properties", [])
        if key == "printed" and getattr(report, "when", "call") == "call"
    ]
    if printed:
        terminalreporter.section("recorded by the tests")
        for text in printed:
            terminalreporter.write_line(str(text))


@pytest.fixture(scope="session", autouse=True)
def _data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stores, indexes and exports the agent writes go to a temporary folder, not the checkout."""
    import os

    previous = os.environ.get("ERP_AGENT_DATA_DIR")
    os.environ["ERP_AGENT_DATA_DIR"] = str(tmp_path_factory.mktemp("agent-data"))
    yield
    if previous is None:
        os.environ.pop("ERP_AGENT_DATA_DIR", None)
    else:
        os.environ["ERP_AGENT_DATA_DIR"] = previous


@pytest.fixture
def empty_db(tmp_path: Path) -> Iterator[tuple[Settings, Ctx]]:
    """A fresh demo ERP database with the schema and nothing else; an Administrator context."""
    path = tmp_path / "erp.sqlite"
    conn = db.connect(path)
    db.create_schema(conn)
    settings = Settings(db_path=str(path), today=TEST_TODAY)
    yield settings, as_user(conn, settings, ADMINISTRATOR)
    conn.close()


@dataclass(frozen=True)
class DemoERP:
    """A seeded demo ERP served over real HTTP, imitating Frappe v15 and v16."""

    url: str
    v16_url: str
    path: Path


def raw(demo: DemoERP, sql: str, *params: object) -> list[sqlite3.Row]:
    """Rows read straight from the demo ERP's database: the independent side of a check."""
    conn = sqlite3.connect(demo.path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="session")
def demo_erp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoERP]:
    """The demo data set at a tenth of its volume (fast), with the business date pinned."""
    from demo_erp.seed import seed
    from demo_erp.server import start_in_thread

    path = tmp_path_factory.mktemp("demo-erp") / "demo.sqlite"
    seed(path, today=TEST_TODAY, scale=0.1)
    v15 = start_in_thread(Settings(db_path=str(path), version=15, today=TEST_TODAY))
    v16 = start_in_thread(Settings(db_path=str(path), version=16, today=TEST_TODAY))
    yield DemoERP(v15.url, v16.url, path)
    v15.stop()
    v16.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_real_model_providers() -> Iterator[None]:
    """Any real HTTP request to a non-loopback host fails the test."""
    from erp_agent.models.testing import block_real_providers

    with block_real_providers() as blocked:
        yield
    assert not blocked.urls, f"a test reached real hosts: {blocked.urls}"


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Any]:
    """The agent's runtime on the seeded demo ERP, its store in the test's own directory."""
    from erp_agent.config import Settings as AgentSettings
    from erp_agent.runtime import Runtime
    from erp_agent.store.sql_store import open_store

    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    settings = AgentSettings(erp_url=demo_erp.url, data_dir=str(tmp_path))
    rt = await Runtime.create(settings, store=store)
    yield rt
    await rt.aclose()


@pytest.fixture
async def chat(runtime: Any, request: pytest.FixtureRequest) -> Any:
    """One planner conversation on the demo ERP, signed in as the test module's ``USER``
    (the administrator when it names none)."""
    from test_planner_conversation import ADMIN, chat_as

    return await chat_as(runtime, getattr(request.module, "USER", ADMIN))


@pytest.fixture
def rest(demo_erp: DemoERP, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The demo ERP's own REST API as the test module's ``USER``: where expected figures come
    from, never through the agent."""
    from rest_truth import RestERP

    erp = RestERP(demo_erp.url, getattr(request.module, "USER", "admin@demo.local"))
    yield erp
    erp.close()


async def ask_offline(rt: Any, question: str, user: str = "accounts@demo.local") -> dict[str, Any]:
    """One turn of the offline planner as ``user``: its text, tool calls, and whether every
    figure in the text is found in the turn's tool results."""
    from erp_agent.config import EngineSettings
    from erp_agent.evals.score import grounded, plain, tool_sources
    from erp_agent.gateway.signin import sign_in
    from erp_agent.planner import OfflinePlanner
    from erp_agent.planner.read_as import split

    session = await sign_in(rt.connector, rt.registry, rt.policy, user, "demo")
    engine = rt.engine(OfflinePlanner(rt.catalog), EngineSettings(today=TEST_TODAY))
    response = await engine.run_turn(session, question)
    turns = await rt.store.turns(response.conversation_id)
    whole = plain("\n".join(b["markdown"] for b in response.blocks if b["type"] == "text"))
    reading, text = split(whole)  # "Read as: …", then the answer itself
    sources = tool_sources(turns[-1].state["messages"])
    return {"text": text, "calls": response.tools_called, "reading": reading,
            "grounded": grounded(whole, sources, question)}  # fmt: skip
