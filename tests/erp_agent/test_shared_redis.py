"""What workers share through a real Redis (a key prefix per test): one token-rate gate, turn
progress readable from another process's client, sign-in failure counts; and when Redis is
down, the in-process fallbacks answer, with a warning, and nothing is lost."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator

import pytest

from erp_agent.coordination.rate_gate import RedisRateGate
from erp_agent.coordination.redis_link import RedisLink
from erp_agent.coordination.sign_ins import RedisSignInCounts
from erp_agent.coordination.turn_events import END, TurnEvents
from erp_agent.store.memory import MemoryStore

pytestmark = [pytest.mark.anyio, pytest.mark.redis]
REDIS_URL = os.environ.get("ERP_AGENT_TEST_REDIS", "redis://127.0.0.1:6379/0")
DEAD_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
async def links() -> AsyncIterator[list[RedisLink]]:
    made: list[RedisLink] = []
    yield made
    for link in made:
        await link.aclose()


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    name = f"erp-test-{uuid.uuid4().hex[:10]}"
    probe = RedisLink(REDIS_URL, prefix=name)
    if not await probe.ping():
        pytest.fail(f"Redis is not reachable at {REDIS_URL}: .ci/run starts it.")
    yield name
    keys = [k async for k in probe.client.scan_iter(f"{name}:*")]
    if keys:
        await probe.client.delete(*keys)
    await probe.aclose()


def link(links: list[RedisLink], prefix: str, url: str = REDIS_URL) -> RedisLink:
    made = RedisLink(url, prefix=prefix)
    links.append(made)
    return made


async def test_two_workers_share_one_token_bucket(prefix: str, links: list[RedisLink]) -> None:
    # Two links = two workers' pools on one bucket of 6,000 tokens a minute (100 a second).
    gates = [RedisRateGate(link(links, prefix), 6000), RedisRateGate(link(links, prefix), 6000)]
    await gates[0].acquire(5900)
    started = time.monotonic()
    await gates[1].acquire(200)  # 100 left: waits about a second for 100 more
    waited = time.monotonic() - started
    assert 0.8 <= waited <= 2.5, waited
    assert await gates[0].available() < 50
    await gates[1].settle(200, 50)  # the call used less: 150 back, seen by the other worker
    assert 150 <= await gates[0].available() <= 250


async def test_a_turns_events_are_read_by_another_worker_from_the_start(
    prefix: str, links: list[RedisLink]
) -> None:
    writer = TurnEvents(link(links, prefix))
    reader = TurnEvents(link(links, prefix))
    await writer.publish("t1", "progress", {"label": "Thinking…"})
    assert await reader.exists("t1")

    async def finish_later() -> None:
        await asyncio.sleep(0.3)
        await writer.publish("t1", "response", {"outcome": "answered"})
        await writer.publish("t1", END, None)

    task = asyncio.create_task(finish_later())
    seen = [item async for item in reader.read("t1", timeout=5)]
    await task
    assert seen == [("progress", {"label": "Thinking…"}), ("response", {"outcome": "answered"})]


async def test_a_burst_of_events_goes_in_one_round_trip_and_keeps_its_order(
    prefix: str, links: list[RedisLink]
) -> None:
    redis = link(links, prefix)
    writer, reader = TurnEvents(redis), TurnEvents(link(links, prefix))
    pieces = [("delta", {"text": f"piece {n} "}) for n in range(50)]
    before = (await redis.client.info("stats"))["total_commands_processed"]
    await writer.publish_many("t2", [*pieces, ("response", {"outcome": "answered"}), (END, None)])
    after = (await redis.client.info("stats"))["total_commands_processed"]
    # 52 XADDs, one EXPIRE and the INFO; one message at a time would be 104 commands. (The
    # count is the server's: a little room for another client's.)
    assert after - before <= 70, after - before
    seen = [item async for item in reader.read("t2", timeout=5)]
    assert seen == [*pieces, ("response", {"outcome": "answered"})]


async def test_sign_in_failures_count_across_workers(prefix: str, links: list[RedisLink]) -> None:
    store = MemoryStore()
    a = RedisSignInCounts(link(links, prefix), store)
    b = RedisSignInCounts(link(links, prefix), store)
    now = dt.datetime.now(dt.UTC)
    for n in range(3):
        await a.add_sign_in_failure(["account:amina"], now + dt.timedelta(seconds=n))
    assert len(await b.sign_in_failures("account:amina", now - dt.timedelta(minutes=1))) == 3
    assert await store.sign_in_failures("account:amina", now - dt.timedelta(minutes=1)) == []
    await b.clear_sign_in_failures("account:amina")
    assert await a.sign_in_failures("account:amina", now - dt.timedelta(minutes=1)) == []


async def test_redis_down_falls_back_in_process_with_a_warning(
    caplog: pytest.LogCaptureFixture, links: list[RedisLink]
) -> None:
    dead = link(links, "erp-test-dead", DEAD_URL)
    caplog.set_level(logging.WARNING, logger="erp_agent.coordination")
    gate = RedisRateGate(dead, 600)
    await gate.acquire(100)  # answered by the local bucket
    assert 495 <= gate.local.available <= 505
    store = MemoryStore()
    counts = RedisSignInCounts(dead, store)
    now = dt.datetime.now(dt.UTC)
    await counts.add_sign_in_failure(["account:amina"], now)
    assert await counts.sign_in_failures("account:amina", now - dt.timedelta(minutes=1)) == [now]
    events = TurnEvents(dead)
    await events.publish("t1", "progress", {"label": "Thinking…"})
    await events.publish("t1", END, None)
    assert [item async for item in events.read("t1", timeout=1)] == [
        ("progress", {"label": "Thinking…"})
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("falls back to this process alone" in w for w in warnings)
    assert "127.0.0.1:1" in warnings[0]
