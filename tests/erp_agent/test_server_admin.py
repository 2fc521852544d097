"""The admin console API: System Manager only; the model key is write-only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import (
    CREATE_LEAD,
    SALES_BY_CUSTOMER,
    Harness,
    build_app,
    client_for,
    make_runtime,
    sign_in,
    sse_events,
)

from erp_agent.models.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
ADMIN = "admin@demo.local"
SALES = "sales@demo.local"
SECRET = "sk-test-never-shown-0123456789"


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """A real OpenAI-compatible endpoint on loopback that accepts SECRET (its base URL)."""
    server = FakeOpenAIServer(api_key=SECRET, model="gpt-test")
    with server.running() as url:
        yield url


class FakeKnowledge:
    def __init__(self) -> None:
        self.docs: dict[str, str] = {}

    async def upload(self, name: str, text: str) -> dict[str, Any]:
        self.docs[name] = text
        return {"indexed": [name]}

    async def reindex(self) -> dict[str, Any]:
        return {"indexed": sorted(self.docs)}


@pytest.fixture
async def harness(demo_erp: Any, tmp_path: Path) -> AsyncIterator[Harness]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    built = build_app(runtime, tmp_path)
    yield built
    await built.switch.aclose()  # the provider clients a switch opened
    await runtime.aclose()


@pytest.fixture
async def admin(harness: Harness) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(harness.app) as client:
        await sign_in(client, ADMIN)
        yield client


def browser(harness: Harness) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=harness.app), base_url="http://testserver"
    )


ADMIN_ROUTES = [
    ("GET", "/api/admin/model", None),
    ("PUT", "/api/admin/model", {"provider": "offline"}),
    ("GET", "/api/admin/policy", None),
    ("PUT", "/api/admin/policy", {"yaml": "everyone: []"}),
    ("GET", "/api/admin/tenant", None),
    ("PUT", "/api/admin/tenant", {"read_only": True}),
    ("GET", "/api/admin/budgets", None),
    ("PUT", "/api/admin/budgets", {"org": "default", "tokens": 1}),
    ("GET", "/api/admin/usage", None),
    ("GET", "/api/admin/log", None),
    ("GET", "/api/admin/log/turn_x", None),
    ("GET", "/api/admin/audit", None),
    ("POST", "/api/admin/knowledge", {"name": "a.md", "text": "# A"}),
    ("POST", "/api/admin/knowledge/reindex", None),
]


async def test_admin_routes_refuse_other_users(admin: httpx.AsyncClient, harness: Harness) -> None:
    async with browser(harness) as sales:
        await sign_in(sales, SALES)
        for method, path, body in ADMIN_ROUTES:
            response = await sales.request(method, path, json=body)
            assert response.status_code == 403, (method, path)
            assert "System Manager" in response.json()["detail"]
    # Nothing the refused requests asked for happened.
    assert (await admin.get("/api/admin/tenant")).json() == {
        "read_only": False,
        "source": "environment",
    }


async def test_the_model_key_is_write_only(
    admin: httpx.AsyncClient, harness: Harness, provider: str
) -> None:
    start = (await admin.get("/api/admin/model")).json()
    assert start == {
        "provider": "offline",
        "model": "scripted-1",
        "base_url": None,
        "key_set": False,
        "switchable": True,
        "source": "environment",
        "problems": [],
    }
    choice = {
        "provider": "openai",
        "model": "gpt-test",
        "base_url": provider,
        "api_key": SECRET,
    }
    switched = await admin.put("/api/admin/model", json=choice)
    assert switched.status_code == 200
    assert switched.json()["key_set"] is True
    assert SECRET not in switched.text
    again = await admin.get("/api/admin/model")
    assert SECRET not in again.text
    assert again.json()["model"] == "gpt-test"
    # Changing only the model keeps the key, without the admin sending it again.
    kept = (
        await admin.put("/api/admin/model", json={**choice, "model": "gpt-other", "api_key": None})
    ).json()
    assert kept["key_set"] is True
    # Another endpoint never receives the old key: without one it cannot answer, so the
    # switch is refused and the current choice stays.
    moved = await admin.put(
        "/api/admin/model", json={**choice, "base_url": "http://127.0.0.1:9/v1", "api_key": None}
    )
    assert moved.status_code == 422
    assert (await admin.get("/api/admin/model")).json()["base_url"] == provider
    for path in ("/api/admin/model", "/api/admin/log", "/api/admin/audit", "/openapi.json"):
        assert SECRET not in (await admin.get(path)).text
    stored = (await harness.runtime.store.admin_settings())["model"]
    assert SECRET not in str(stored)
    assert (await admin.put("/api/admin/model", json={"provider": "nonsense"})).status_code == 422
    assert (await admin.put("/api/admin/model", json={"provider": "openai"})).status_code == 422
    back = (await admin.put("/api/admin/model", json={"provider": "offline"})).json()
    assert back["provider"] == "offline"


async def test_policy_edits_are_validated_and_apply_to_new_sessions(
    admin: httpx.AsyncClient, harness: Harness
) -> None:
    policy = (await admin.get("/api/admin/policy")).json()
    assert "Sales User" in policy["policy"]["roles"]
    bad = await admin.put("/api/admin/policy", json={"yaml": "roles:\n  Sales User: lead.*\n"})
    assert bad.status_code == 422
    assert "expected a list of glob strings" in bad.json()["detail"]
    # A misspelt key is refused, not ignored (it would silently drop every role's tools).
    typo = await admin.put("/api/admin/policy", json={"yaml": "role:\n  Sales User: [lead.*]\n"})
    assert typo.status_code == 422
    assert "unknown key(s) 'role'" in typo.json()["detail"]
    assert (
        await admin.put("/api/admin/policy", json={"yaml": "roles: [unclosed"})
    ).status_code == 422
    async with browser(harness) as before:
        await sign_in(before, SALES)
        narrowed = dict(policy["policy"])
        narrowed["roles"] = {**narrowed["roles"], "Sales User": ["customer.*"]}
        import yaml

        saved = await admin.put("/api/admin/policy", json={"yaml": yaml.safe_dump(narrowed)})
        assert saved.status_code == 200
        assert saved.json()["policy"]["roles"]["Sales User"] == ["customer.*"]
        async with browser(harness) as after:
            await sign_in(after, SALES)
            answer = sse_events(
                (await after.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text
            )[-1][1]
            assert [b["type"] for b in answer["blocks"]] == ["text"]  # the aggregate was refused
        # A session signed in before the change keeps what it was granted.
        earlier = sse_events(
            (await before.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text
        )[-1][1]
        assert "table" in [b["type"] for b in earlier["blocks"]]


async def test_read_only_switch_refuses_writes_in_open_sessions(admin: httpx.AsyncClient) -> None:
    proposal = next(
        b
        for b in sse_events((await admin.post("/api/chat", json={"message": CREATE_LEAD})).text)[
            -1
        ][1]["blocks"]
        if b["type"] == "proposal"
    )
    assert (await admin.put("/api/admin/tenant", json={"read_only": True})).json() == {
        "read_only": True,
        "source": "admin console",
    }
    assert (await admin.get("/api/auth/me")).json()["read_only"] is True
    refused = (
        await admin.post(
            f"/api/proposals/{proposal['id']}/confirm",
            json={"payload_hash": proposal["payload_hash"]},
        )
    ).json()
    assert refused["ok"] is False
    assert "no longer available" in refused["message"]
    await admin.put("/api/admin/tenant", json={"read_only": False})


async def test_budgets_stop_turns_and_usage_is_charted(admin: httpx.AsyncClient) -> None:
    sse_events((await admin.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text)
    usage = (await admin.get("/api/admin/usage", params={"days": 7})).json()
    assert usage["rows"][0]["org"] == "default"
    assert usage["rows"][0]["prompt"] == 350
    budgets = (await admin.put("/api/admin/budgets", json={"org": "default", "tokens": 100})).json()
    default = next(o for o in budgets["orgs"] if o["org"] == "default")
    assert default == {"org": "default", "tokens": 100, "used_this_month": 385}
    over = await admin.post("/api/chat", json={"message": SALES_BY_CUSTOMER})
    assert over.status_code == 429
    assert "100" in over.json()["detail"]
    await admin.put("/api/admin/budgets", json={"org": "default", "tokens": None})
    assert (await admin.post("/api/chat", json={"message": "hello"})).status_code == 200


async def test_interaction_log_filters_and_detail(admin: httpx.AsyncClient) -> None:
    sse_events((await admin.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text)
    sse_events((await admin.post("/api/chat", json={"message": "hello"})).text)
    everything = (await admin.get("/api/admin/log")).json()
    assert len(everything) == 2
    by_tool = (await admin.get("/api/admin/log", params={"tool": "display.chart"})).json()
    assert [r["message"] for r in by_tool] == [SALES_BY_CUSTOMER]
    assert (await admin.get("/api/admin/log", params={"user": "nobody@x"})).json() == []
    detail = (await admin.get(f"/api/admin/log/{by_tool[0]['turn_id']}")).json()
    assert detail["log"]["tools_called"] == [
        "sales_invoice.aggregate",
        "display.table",
        "display.chart",
    ]
    assert {e["tool"] for e in detail["events"]} >= {"sales_invoice.aggregate", "display.chart"}
    audit = (
        await admin.get("/api/admin/audit", params={"tool": "display.chart", "decision": "allowed"})
    ).json()
    assert audit
    assert all(e["tool"] == "display.chart" for e in audit)


async def test_knowledge_without_an_indexer_is_501(admin: httpx.AsyncClient) -> None:
    response = await admin.post(
        "/api/admin/knowledge", json={"name": "returns.md", "text": "# Returns"}
    )
    assert response.status_code == 501
    assert "no knowledge indexer" in response.json()["detail"]
    assert (await admin.post("/api/admin/knowledge/reindex")).status_code == 501


async def test_knowledge_upload_and_reindex_with_an_indexer(demo_erp: Any, tmp_path: Path) -> None:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    knowledge = FakeKnowledge()
    harness = build_app(runtime, tmp_path, knowledge=knowledge)
    async with client_for(harness.app) as admin:
        await sign_in(admin, ADMIN)
        bad = await admin.post("/api/admin/knowledge", json={"name": "../etc/passwd", "text": "x"})
        assert bad.status_code == 422
        ok = await admin.post(
            "/api/admin/knowledge", json={"name": "returns.md", "text": "# Returns"}
        )
        assert ok.json() == {"indexed": ["returns.md"]}
        assert (await admin.post("/api/admin/knowledge/reindex")).json() == {
            "indexed": ["returns.md"]
        }
    await runtime.aclose()


async def test_admin_settings_survive_a_restart(
    demo_erp: Any, tmp_path: Path, provider: str
) -> None:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    first = build_app(runtime, tmp_path)
    async with client_for(first.app) as admin:
        await sign_in(admin, ADMIN)
        await admin.put("/api/admin/tenant", json={"read_only": True})
        await admin.put("/api/admin/budgets", json={"org": "acme", "tokens": 5000})
        await admin.put(
            "/api/admin/model",
            json={"provider": "openai", "model": "m", "base_url": provider, "api_key": SECRET},
        )
    second = build_app(runtime, tmp_path)
    async with client_for(second.app) as admin:
        await sign_in(admin, ADMIN)
        assert (await admin.get("/api/admin/tenant")).json()["read_only"] is True
        assert {"org": "acme", "tokens": 5000, "used_this_month": 0} in (
            await admin.get("/api/admin/budgets")
        ).json()["orgs"]
        assert (await admin.get("/api/admin/model")).json()["key_set"] is True
    await first.switch.aclose()
    await second.switch.aclose()
    await runtime.aclose()


async def test_index_panel_shows_cards_waiting_for_embeddings(
    admin: httpx.AsyncClient, harness: Harness
) -> None:
    from erp_agent.retrieval.backfill import Backfill
    from erp_agent.retrieval.documents import Document, Kind

    runtime = harness.runtime
    index, embedder = runtime.retriever.index, runtime.retriever.embedder
    assert embedder is not None
    before = (await admin.get("/api/admin/index")).json()
    cards = [
        Document(key=f"lead:L-{i}", kind=Kind.RECORD, tenant="default", title=f"Lead L-{i}",
                 text=f"Lead L-{i} from the admin console test.", entity="lead", parent="lead")
        for i in range(3)
    ]  # fmt: skip
    index.upsert(cards)
    status = (await admin.get("/api/admin/index")).json()
    assert status["available"] is True
    assert status["documents"] == before["documents"] + 3
    assert status["keyword_only"] == before["keyword_only"] + 3
    Backfill(index, embedder, progress=runtime.index_progress).run()
    status = (await admin.get("/api/admin/index")).json()
    assert status["keyword_only"] == 0
    job = status["jobs"]["embedding"]
    assert job["done"] == job["total"] == before["keyword_only"] + 3
    assert job["running"] is False
    assert job["rate"] > 0
