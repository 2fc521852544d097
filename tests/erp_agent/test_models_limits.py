"""The shared token-rate gate waits instead of exceeding the budget (on a fake clock)."""

from __future__ import annotations

import asyncio

import pytest

from erp_agent.models.base import Message
from erp_agent.models.limits import TokenRateGate, estimate_tokens
from erp_agent.models.resilience import ResilientModel
from erp_agent.models.testing import FakeClock, ScriptedModel

pytestmark = pytest.mark.anyio


async def test_calls_within_the_budget_do_not_wait() -> None:
    clock = FakeClock()
    gate = TokenRateGate(6000, clock=clock)
    await gate.acquire(3000)
    await gate.acquire(3000)
    assert clock.sleeps == []
    assert gate.available == 0


async def test_a_call_over_the_budget_waits_for_the_refill() -> None:
    clock = FakeClock()
    gate = TokenRateGate(6000, clock=clock)  # 100 tokens a second
    await gate.acquire(5000)
    await gate.acquire(2000)  # 1000 short: ten seconds
    assert clock.sleeps == [pytest.approx(10.0)]
    assert clock.now() == pytest.approx(10.0)


async def test_settling_refunds_unused_tokens_and_charges_overruns() -> None:
    clock = FakeClock()
    gate = TokenRateGate(6000, clock=clock)
    await gate.acquire(4000)
    await gate.settle(reserved=4000, used=1000)
    assert gate.available == 5000
    await gate.acquire(1000)
    await gate.settle(reserved=1000, used=7000)  # far over: later callers wait it off
    assert gate.available == -2000
    await gate.acquire(600)
    assert sum(clock.sleeps) == pytest.approx(26.0)


async def test_a_call_larger_than_the_whole_budget_waits_for_a_full_bucket() -> None:
    clock = FakeClock()
    gate = TokenRateGate(600, clock=clock)
    await gate.acquire(600)
    await gate.acquire(10_000)
    assert sum(clock.sleeps) == pytest.approx(60.0)


async def test_waiters_are_served_in_arrival_order() -> None:
    clock = FakeClock()
    gate = TokenRateGate(600, clock=clock)  # 10 tokens a second
    await gate.acquire(600)
    order: list[str] = []

    async def take(name: str, tokens: int) -> None:
        await gate.acquire(tokens)
        order.append(name)

    await asyncio.gather(take("big", 500), take("small", 10))
    assert order == ["big", "small"]


async def test_every_model_call_in_the_process_shares_the_gate() -> None:
    clock = FakeClock()
    gate = TokenRateGate(1200, clock=clock)
    replies = [ScriptedModel.reply("ok")] * 3
    first = ResilientModel(ScriptedModel(*replies), gate=gate, clock=clock)
    second = ResilientModel(ScriptedModel(*replies), gate=gate, clock=clock)
    prompt = [Message("user", "x" * 400)]  # ~105 tokens + 100 reserved for the answer
    await first.complete(prompt, max_tokens=100)
    await second.complete(prompt, max_tokens=100)
    assert clock.sleeps == []
    # Scripted replies report no usage, so settling refunds the reservations...
    assert gate.available == 1200
    await gate.acquire(1200)
    await first.for_org("other").complete(prompt, max_tokens=100)
    # ... and once the budget is spent the next call waits its share of a minute.
    assert len(clock.sleeps) == 1
    assert clock.sleeps[0] == pytest.approx((estimate_tokens(prompt) + 100) / 20)
