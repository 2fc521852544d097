"""The response cache: exact and reworded questions within one organisation, permission
fingerprint and data scope; never across permissions or scopes; an answer about the asker stays
theirs; entries expire, and changed entities drop them; in this process and in Redis alike.
(Every demo user against every other, through the server: test_redteam_cache.py.)"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import SALES_BY_CUSTOMER, build_app, client_for, sign_in, sse_events
from test_shared_redis import REDIS_URL

from erp_agent.calls.session import Session
from erp_agent.config import Settings
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.scope import DataScope
from erp_agent.coordination.redis_link import RedisLink
from erp_agent.coordination.response_cache import (
    CacheScope,
    ResponseCache,
    about_the_asker,
    fingerprint,
    pinned,
)
from erp_agent.retrieval.embeddings import MiniLMEmbedder
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
EMBEDDER = MiniLMEmbedder()
ANSWER = {"outcome": "answered", "blocks": [{"type": "text", "markdown": "42 customers."}]}


def session(
    user: str = "amina", roles: tuple[str, ...] = ("Sales User",), org: str = "acme"
) -> Session:
    return Session(
        id=f"s-{user}",
        user=user,
        credential=Credential(user, "sid"),
        roles=frozenset(roles),
        org=org,
        allowed_tools=frozenset({"customer.list", "customer.count"}),
    )


NAIROBI = DataScope.of({"Territory": ["Nairobi"]})


def scope(
    user: str = "amina",
    roles: tuple[str, ...] = ("Sales User",),
    org: str = "acme",
    data: DataScope | None = NAIROBI,
) -> CacheScope:
    return fingerprint(session(user, roles, org), data)


async def put(cache: ResponseCache, where: CacheScope, question: str, entities: list[str]) -> None:
    await cache.put(where, question, ANSWER, entities, org="acme", shared=True)


@pytest.fixture(params=["process", pytest.param("redis", marks=pytest.mark.redis)])
async def cache(request: pytest.FixtureRequest) -> AsyncIterator[ResponseCache]:
    if request.param == "process":
        yield ResponseCache(None, ttl=60, embed=EMBEDDER.embed_one)
        return
    link = RedisLink(REDIS_URL, prefix=f"erp-test-{uuid.uuid4().hex[:10]}")
    yield ResponseCache(link, ttl=60, embed=EMBEDDER.embed_one)
    keys = [k async for k in link.client.scan_iter(f"{link.prefix}:*")]
    if keys:
        await link.client.delete(*keys)
    await link.aclose()


async def test_exact_and_reworded_questions_hit_within_one_scope(cache: ResponseCache) -> None:
    await put(cache, scope(), "How many customers do we have?", ["customer"])
    exact = await cache.get(scope("omar"), "  how many customers do we have ")
    assert exact is not None  # another user with the very same roles, tools and data scope
    assert (exact.kind, exact.response) == ("exact", ANSWER)
    reworded = await cache.get(scope(), "how many customers do we have in total")
    assert reworded is not None
    assert reworded.kind == "semantic"
    assert await cache.get(scope(), "How many suppliers do we have?") is None


async def test_another_period_is_never_a_semantic_hit(cache: ResponseCache) -> None:
    # MiniLM scores these two 0.97: only the pinned words tell them apart.
    assert pinned("Total sales this month") != pinned("Total sales last month")
    await put(cache, scope(), "What were total sales this month?", ["sales_invoice"])
    assert await cache.get(scope(), "What were total sales last month?") is None
    assert await cache.get(scope(), "total sales for this month") is not None


async def test_other_permissions_scope_or_organisation_never_see_an_answer(
    cache: ResponseCache,
) -> None:
    question = "How many customers do we have?"
    await put(cache, scope(), question, ["customer"])
    assert await cache.get(scope(roles=("Accounts User",)), question) is None
    assert await cache.get(scope(org="beta"), question) is None
    other_tools = session()
    other_tools.allowed_tools = frozenset({"customer.list"})
    assert await cache.get(fingerprint(other_tools, NAIROBI), question) is None
    # Same roles and tools, another User Permission: another answer.
    mombasa = DataScope.of({"Territory": ["Mombasa"]})
    assert await cache.get(scope("omar", data=mombasa), question) is None
    assert await cache.get(scope("omar", data=DataScope()), question) is None
    # A scope the ERP did not tell: nothing shared, either way.
    assert await cache.get(scope("omar", data=None), question) is None
    await put(cache, scope("omar", data=None), "How many leads are open?", ["lead"])
    assert await cache.get(scope("omar", data=None), "How many leads are open?") is not None
    assert await cache.get(scope("amina"), "How many leads are open?") is None


async def test_an_answer_kept_for_one_user_is_theirs_alone(cache: ResponseCache) -> None:
    assert about_the_asker("What was my net pay last month?")
    assert about_the_asker("how much leave do I have")
    assert not about_the_asker("How many customers do we have?")
    await cache.put(scope(), "What was my net pay last month?", ANSWER, ["salary_slip"], org="acme")
    assert await cache.get(scope(), "What was my net pay last month?") is not None
    assert await cache.get(scope("omar"), "What was my net pay last month?") is None
    assert await cache.get(scope("omar"), "what was my net pay last month") is None
    # A question about the asker never takes a shared answer, however close its words.
    await put(cache, scope(), "What was the net pay last month?", ["salary_slip"])
    assert await cache.get(scope("omar"), "What was my net pay last month?") is None


async def test_changed_entities_and_time_drop_entries(cache: ResponseCache) -> None:
    await put(cache, scope(), "How many customers do we have?", ["customer"])
    await put(cache, scope(), "How many items do we sell?", ["item"])
    assert await cache.invalidate("acme", ["customer"]) == 1
    assert await cache.get(scope(), "How many customers do we have?") is None
    assert await cache.get(scope(), "How many items do we sell?") is not None
    # An answer that read what no entity names (a report) goes with any change.
    await put(cache, scope(), "What is the balance sheet?", [])
    assert await cache.invalidate("acme", ["lead"]) == 1
    assert await cache.get(scope(), "What is the balance sheet?") is None
    cache.ttl = 1
    await put(cache, scope(), "How many leads are open?", ["lead"])
    await asyncio.sleep(1.3)
    assert await cache.get(scope(), "How many leads are open?") is None


async def test_proposals_and_questions_back_are_not_cached(cache: ResponseCache) -> None:
    proposal = {"outcome": "answered", "blocks": [{"type": "proposal", "id": "p1"}]}
    await cache.put(scope(), "Create a lead for Jane", proposal, ["lead"], org="acme", shared=True)
    failed = {"outcome": "error", "blocks": []}
    await cache.put(
        scope(), "How many customers do we have?", failed, ["customer"], org="acme", shared=True
    )
    assert await cache.get(scope(), "Create a lead for Jane") is None
    assert await cache.get(scope(), "How many customers do we have?") is None


async def answer(client: Any, message: str) -> dict[str, Any]:
    events = sse_events((await client.post("/api/chat", json={"message": message})).text)
    return next(data for name, data in events if name == "response")  # type: ignore[no-any-return]


async def test_the_server_serves_a_cached_answer_only_within_the_same_permissions(
    demo_erp: Any, tmp_path: Path
) -> None:
    settings = Settings(erp_url=demo_erp.url, data_dir=str(tmp_path), response_cache_seconds=300)
    runtime = await Runtime.create(settings, store=MemoryStore())
    harness = build_app(runtime, tmp_path)
    async with client_for(harness.app) as admin:
        await sign_in(admin, "admin@demo.local")
        first = await answer(admin, SALES_BY_CUSTOMER)
        assert first["usage"]["prompt"] > 0
        again = await answer(admin, SALES_BY_CUSTOMER)
        assert again["cached"]["kind"] == "exact"
        assert again["usage"] == {"prompt": 0, "cached": 0, "completion": 0}
        assert again["turn_id"] != first["turn_id"]
        assert [b["type"] for b in again["blocks"]] == [b["type"] for b in first["blocks"]]
        log = (await admin.get("/api/admin/log")).json()
        assert [r["turn_id"] for r in log] == [again["turn_id"], first["turn_id"]]
        transport = httpx.ASGITransport(app=harness.app)  # the app is running already
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as sales:
            await sign_in(sales, "sales@demo.local")  # other roles: never the admin's answer
            theirs = await answer(sales, SALES_BY_CUSTOMER)
            assert "cached" not in theirs
        metrics = (await admin.get("/metrics")).text
        assert 'erp_agent_response_cache_total{kind="exact",result="hit"} 1.0' in metrics
        assert 'erp_agent_response_cache_total{kind="any",result="miss"} 2.0' in metrics
    await harness.switch.aclose()
    await runtime.aclose()
