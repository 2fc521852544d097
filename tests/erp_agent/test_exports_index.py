"""Exports are indexed in the store (owner, path, created, expiry): any worker serves one to
its owner only, deleting a user's data removes their files and rows, and expired exports go."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import SALES_BY_CUSTOMER, Harness, build_app, client_for, sign_in, sse_events

from conftest import DemoERP
from erp_agent.config import Settings
from erp_agent.results.store import ResultStore
from erp_agent.runtime import Runtime
from erp_agent.server import retention

pytestmark = pytest.mark.anyio
SALES, ADMIN = "sales@demo.local", "admin@demo.local"


def result_ids(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = (
            [str(value["result_id"])] if str(value.get("result_id", "")).startswith("res_") else []
        )
        return own + [i for v in value.values() for i in result_ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in result_ids(v)]
    return []


async def a_result(client: httpx.AsyncClient) -> str:
    reply = await client.post("/api/chat", json={"message": SALES_BY_CUSTOMER})
    response = next(data for name, data in sse_events(reply.text) if name == "response")
    return result_ids(response["blocks"])[0]


@pytest.fixture
async def workers(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[list[Harness]]:
    """Two workers of one deployment: one database, each its own data directory (as on two
    hosts)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}"
    harnesses = []
    for name in ("a", "b"):
        folder = tmp_path / name
        settings = Settings(erp_url=demo_erp.url, data_dir=str(folder), database_url=url)
        harnesses.append(build_app(await Runtime.create(settings), folder))
    yield harnesses
    for harness in harnesses:
        await harness.runtime.aclose()


def another_browser(harness: Harness) -> httpx.AsyncClient:
    """Another browser on a running app (its lifespan is already started)."""
    transport = httpx.ASGITransport(app=harness.app)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


def index(harness: Harness) -> ResultStore:
    return harness.runtime.results


async def test_an_export_is_indexed_and_served_by_any_worker_to_its_owner_only(
    workers: list[Harness],
) -> None:
    a, b = workers
    async with client_for(a.app) as on_a, client_for(b.app) as on_b:
        await sign_in(on_a, SALES)
        await sign_in(on_b, SALES)
        result_id = await a_result(on_a)
        first = await on_a.get(f"/api/results/{result_id}/export?format=csv")
        assert first.status_code == 200, first.text
        found = await index(b).find_export(SALES, result_id, "csv")  # read through worker b
        assert found is not None
        assert Path(found.path).is_file()
        assert Path(found.path).is_relative_to(Path(a.runtime.settings.data_dir))
        assert found.expires_at is not None
        assert found.expires_at - found.created_at == dt.timedelta(days=7)  # retention default
        # Worker b has no such file in its data directory: it writes the same export again.
        second = await on_b.get(f"/api/results/{result_id}/export?format=csv")
        assert second.status_code == 200
        assert second.content == first.content
        # Asked again on a, the indexed file is served as it is (not written again).
        again = await index(a).find_export(SALES, result_id, "csv")
        assert again is not None
        mtime = Path(again.path).stat().st_mtime_ns
        assert (await on_a.get(f"/api/results/{result_id}/export?format=csv")).content == (
            first.content
        )
        assert Path(again.path).stat().st_mtime_ns == mtime
        async with another_browser(b) as admin:
            await sign_in(admin, ADMIN)
            refused = await admin.get(f"/api/results/{result_id}/export?format=csv")
            assert refused.status_code == 404  # another user's export: as if it did not exist
    assert await index(a).find_export(ADMIN, result_id, "csv") is None


async def test_deleting_a_users_data_removes_their_exports(workers: list[Harness]) -> None:
    a, b = workers
    async with client_for(a.app) as sales, client_for(b.app) as admin:
        await sign_in(sales, SALES)
        await sign_in(admin, ADMIN)
        result_id = await a_result(sales)
        assert (await sales.get(f"/api/results/{result_id}/export?format=xlsx")).status_code == 200
        found = await index(a).find_export(SALES, result_id, "xlsx")
        assert found is not None
        assert Path(found.path).is_file()
        deleted = (await admin.delete(f"/api/admin/users/{SALES}/data")).json()["deleted"]
        assert deleted["exports"] >= 1
    assert await index(a).find_export(SALES, result_id, "xlsx") is None
    assert not Path(found.path).exists()


async def test_expired_exports_are_removed_and_fresh_ones_stay(workers: list[Harness]) -> None:
    a, _ = workers
    async with client_for(a.app) as sales:
        await sign_in(sales, SALES)
        result_id = await a_result(sales)
        assert (await sales.get(f"/api/results/{result_id}/export?format=csv")).status_code == 200
    state = a.app.state.server
    found = await index(a).find_export(SALES, result_id, "csv")
    assert found is not None
    assert found.expires_at is not None
    today = await retention.purge(state)
    assert today["exports"] == 0
    assert Path(found.path).is_file()
    later = await retention.purge(state, found.expires_at + dt.timedelta(seconds=1))
    assert later["exports"] >= 1
    assert not Path(found.path).exists()
    assert await index(a).find_export(SALES, result_id, "csv") is None
