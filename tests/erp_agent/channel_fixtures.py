"""Fixtures for the channel tests (MCP, the OpenAI-compatible API, the relay): a demo ERP of their
own (issuing API keys rotates a user's ERP secret, which other tests' shared ERP must keep), the
agent server under uvicorn with the offline planner, keys issued through the admin API, and the
truth of a figure read from the ERP's REST API."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import LiveServer, serve_in_thread

from conftest import TEST_TODAY, DemoERP
from demo_erp.context import Settings as ErpSettings
from demo_erp.server import RunningServer, start_in_thread
from erp_agent.evals.spec import Query
from erp_agent.evals.truth import ErpTruth
from erp_agent.planner import OfflinePlanner

ADMIN = "admin@demo.local"


@dataclass
class OwnERP:
    url: str
    path: Path
    server: RunningServer


@pytest.fixture(scope="module")
def own_erp(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnERP]:
    """A copy of the seeded demo ERP (SQLite's backup API: consistent while others read it)."""
    path = tmp_path_factory.mktemp("channel-erp") / "demo.sqlite"
    source, copy = sqlite3.connect(demo_erp.path), sqlite3.connect(path)
    source.backup(copy)
    source.close()
    copy.close()
    server = start_in_thread(ErpSettings(db_path=str(path), version=15, today=TEST_TODAY))
    yield OwnERP(server.url, path, server)
    server.stop()


@pytest.fixture(scope="module")
def agent(own_erp: OwnERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The agent server with the offline planner (no model key), on a free loopback port."""
    server = serve_in_thread(
        own_erp.url,
        tmp_path_factory.mktemp("channel-agent"),
        model=lambda rt: OfflinePlanner(rt.catalog, rt.connector.name),
    )
    yield server
    server.stop()


def admin_client(url: str, user: str = ADMIN) -> httpx.Client:
    """A web session of ``user`` (the administrator by default), signed in as the browser is."""
    client = httpx.Client(base_url=url, timeout=60)
    csrf = client.get("/api/auth/csrf").json()["csrf"]
    reply = client.post(
        "/api/auth/sign-in",
        json={"user": user, "password": "demo"},
        headers={"X-CSRF-Token": csrf},
    )
    reply.raise_for_status()
    client.headers["X-CSRF-Token"] = reply.json()["csrf"]
    return client


def issue_key(url: str, user: str) -> str:
    """A user API key, issued as an administrator would in the admin console."""
    client = admin_client(url)
    try:
        reply = client.post("/api/admin/api-keys", json={"user": user, "label": "test"})
    finally:
        client.close()
    assert reply.status_code == 200, reply.text
    return str(reply.json()["key"])


def revenue(erp_url: str, year: int, *filters: list[Any], user: str = ADMIN) -> list[Any]:
    """Net sales of submitted Sales Invoices in ``year`` per currency, read from the ERP's REST
    API as ``user`` and added up there (never through the agent's code)."""
    query = Query.model_validate({
        "op": "sum", "doctype": "Sales Invoice", "field": "net_total", "docstatus": 1,
        "group_by": ["currency"],
        "filters": [["posting_date", "between", [f"{year}-01-01", f"{year}-12-31"]], *filters],
    })  # fmt: skip

    async def compute() -> list[Any]:
        truth = ErpTruth(erp_url, "demo", dt.date.today())
        try:
            return await truth.figures(user, query, None)
        finally:
            await truth.aclose()

    with ThreadPoolExecutor(1) as pool:  # a loop of its own, whatever the caller runs
        return pool.submit(asyncio.run, compute()).result()


def rest_names(erp_url: str, doctype: str, filters: list[list[Any]]) -> list[str]:
    """Names of the records matching ``filters``, read over REST as the administrator."""
    import json

    with httpx.Client(base_url=erp_url, timeout=60) as client:
        client.post("/api/method/login", data={"usr": ADMIN, "pwd": "demo"}).raise_for_status()
        reply = client.get(
            f"/api/resource/{doctype}",
            params={"filters": json.dumps(filters), "limit_page_length": 0},
        )
        reply.raise_for_status()
        return [str(r["name"]) for r in reply.json()["data"]]
