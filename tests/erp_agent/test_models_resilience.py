"""ResilientModel over a real provider client and the fake server: retries, error classes,
timeouts, the monthly budget and usage recording."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest
from pydantic import SecretStr

from erp_agent.config import ModelSettings
from erp_agent.errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelContextTooLong,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
    TokenBudgetExceeded,
)
from erp_agent.models.base import Completion, Message, StreamDelta, Usage
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply
from erp_agent.models.openai_compatible import OpenAICompatibleModel
from erp_agent.models.registry import ModelRegistry
from erp_agent.models.resilience import ResilientModel, RetryPolicy, UsageEvent
from erp_agent.models.testing import FakeClock, ScriptedModel
from erp_agent.models.usage import InMemoryUsageLedger

pytestmark = pytest.mark.anyio
HI = [Message("user", "Hi")]


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[FakeOpenAIServer, str]]:
    server = FakeOpenAIServer(api_key="test-key", context_limit=500)
    with server.running() as url:
        yield server, url


@pytest.fixture
def fake(running: tuple[FakeOpenAIServer, str]) -> FakeOpenAIServer:
    running[0].reset()
    return running[0]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def resilient(
    url: str, clock: FakeClock, *, key: str = "test-key", timeout: float = 5.0, **kw: object
) -> ResilientModel:
    settings = ModelSettings(model="m", base_url=url, api_key=SecretStr(key), timeout=timeout)
    return ResilientModel(
        OpenAICompatibleModel(settings),
        timeout=timeout,
        retry=RetryPolicy(max_retries=3, base_delay=1.0),
        clock=clock,
        rand=lambda: 0.5,
        **kw,  # type: ignore[arg-type]
    )


async def test_429_is_retried_after_the_wait_the_provider_asked_for(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    fake.enqueue(FakeReply.rate_limited(2), FakeReply.rate_limited(3), FakeReply.text("ok"))
    model = resilient(running[1], clock)
    assert (await model.complete(HI)).content == "ok"
    assert len(fake.requests) == 3
    assert clock.sleeps == [pytest.approx(2.1), pytest.approx(3.15)]  # never earlier than asked
    await model.aclose()


async def test_429_exhausted_says_when_to_try_again(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    fake.enqueue(*[FakeReply.rate_limited(7)] * 4)
    model = resilient(running[1], clock)
    with pytest.raises(ModelRateLimited) as caught:
        await model.complete(HI)
    assert len(fake.requests) == 4  # one call and three retries
    assert caught.value.retry_after == 7
    assert str(caught.value) == (
        "The AI model provider is limiting how fast we can send requests. "
        "Please try again in about 7 seconds."
    )
    await model.aclose()


async def test_a_retry_after_longer_than_a_turn_can_wait_is_not_waited_for(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    fake.enqueue(FakeReply.rate_limited(600))
    model = resilient(running[1], clock)
    with pytest.raises(ModelRateLimited, match="in about 600 seconds"):
        await model.complete(HI)
    assert clock.sleeps == []
    await model.aclose()


async def test_5xx_is_retried_with_exponential_backoff(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    fake.enqueue(FakeReply.server_error(500), FakeReply.server_error(503), FakeReply.text("ok"))
    model = resilient(running[1], clock)
    assert (await model.complete(HI)).content == "ok"
    assert clock.sleeps == [0.75, 1.5]  # base 1s doubling, jitter between half and full
    await model.aclose()


async def test_5xx_exhausted_is_unavailable(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    fake.enqueue(*[FakeReply.server_error(502)] * 4)
    model = resilient(running[1], clock)
    with pytest.raises(ModelUnavailable, match="try again in a few minutes") as caught:
        await model.complete(HI)
    assert caught.value.status == 502
    await model.aclose()


async def test_wrong_key_is_an_admin_problem_and_not_retried(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    model = resilient(running[1], clock, key="sk-wrong-key-1234")
    with pytest.raises(ModelAuthError, match="tell an administrator") as caught:
        await model.complete(HI)
    assert len(fake.requests) == 1
    assert clock.sleeps == []
    assert "Incorrect API key" in caught.value.detail
    assert "sk-wrong-key-1234" not in caught.value.detail  # the provider masks it; so do we
    await model.aclose()


async def test_context_too_long_is_its_own_error_and_not_retried(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    model = resilient(running[1], clock)
    with pytest.raises(ModelContextTooLong, match="too long") as caught:
        await model.complete([Message("user", "word " * 1000)])
    assert len(fake.requests) == 1
    assert "maximum context length is 500 tokens" in caught.value.detail
    await model.aclose()


async def test_bad_request_is_not_retried(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    model = resilient(running[1], clock)
    with pytest.raises(ModelBadRequest, match="administrator") as caught:
        await model.complete([Message("tool", "[]", tool_call_id="call_nobody_made")])
    assert len(fake.requests) == 1
    assert "must be a response to a preceeding message with 'tool_calls'" in caught.value.detail
    await model.aclose()


async def test_timeout_is_retried_then_reported(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    fake.enqueue(FakeReply.slow(0.6), FakeReply.text("in time"))
    model = resilient(running[1], clock, timeout=0.2)
    assert (await model.complete(HI)).content == "in time"
    assert len(clock.sleeps) == 1

    fake.enqueue(*[FakeReply.slow(0.6)] * 2)
    model.retry = RetryPolicy(max_retries=1)
    with pytest.raises(ModelTimeout, match="did not answer"):
        await model.complete(HI)
    await model.aclose()


class Hanging(ScriptedModel):
    """A provider whose client has no timeout of its own."""

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        await asyncio.sleep(10)
        raise AssertionError("not reached")


class FailsMidStream(ScriptedModel):
    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        yield StreamDelta(text="a ")
        raise ModelUnavailable()


async def test_our_own_timeout_bounds_a_provider_that_never_times_out(clock: FakeClock) -> None:
    model = ResilientModel(Hanging(), timeout=0.05, retry=RetryPolicy(max_retries=0), clock=clock)
    with pytest.raises(ModelTimeout, match=r"within 0\.05 seconds"):
        await model.complete(HI)


async def test_stream_is_retried_only_before_the_first_delta(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    fake.enqueue(FakeReply.rate_limited(1), FakeReply.text("streamed answer"))
    model = resilient(running[1], clock)
    deltas = [d async for d in model.stream(HI)]
    assert "".join(d.text for d in deltas) == "streamed answer"
    assert len(clock.sleeps) == 1
    await model.aclose()

    mid = ResilientModel(FailsMidStream(), clock=clock)
    seen: list[str] = []

    async def consume() -> None:
        async for delta in mid.stream(HI):
            seen.append(delta.text)

    with pytest.raises(ModelUnavailable):
        await consume()
    assert seen == ["a "]  # not repeated by a retry
    assert len(clock.sleeps) == 1


async def test_budget_is_enforced_before_the_call_and_usage_recorded(
    fake: FakeOpenAIServer, running: tuple[FakeOpenAIServer, str], clock: FakeClock
) -> None:
    today = dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)
    ledger = InMemoryUsageLedger(now=lambda: today)
    events: list[UsageEvent] = []
    model = resilient(
        running[1], clock, ledger=ledger, monthly_token_budget=1000, on_usage=events.append
    )
    fake.enqueue(FakeReply.text("ok", prompt_tokens=900, completion_tokens=50, cached_tokens=800))
    await model.for_org("acme").complete(HI)
    assert await ledger.month_total("acme") == 950
    assert [(e.org, e.usage.cached_tokens, e.attempts) for e in events] == [("acme", 800, 1)]

    fake.enqueue(FakeReply.text("ok", prompt_tokens=60, completion_tokens=0))
    await model.for_org("acme").complete(HI)  # 950 < 1000: allowed, and now over
    with pytest.raises(TokenBudgetExceeded) as caught:
        await model.for_org("acme").complete(HI)
    assert len(fake.requests) == 2  # the refused call never reached the provider
    message = str(caught.value)
    assert "monthly AI budget (1,010 of 1,000 tokens)" in message
    assert "resets on the first day of next month" in message
    assert "ERP_AGENT_MONTHLY_TOKEN_BUDGET" in message
    assert isinstance(caught.value, ModelError)

    fake.enqueue(FakeReply.text("other org"))
    assert (await model.for_org("globex").complete(HI)).content == "other org"
    await model.aclose()


async def test_budget_resets_with_the_calendar_month() -> None:
    now = dt.datetime(2026, 11, 30, 23, tzinfo=dt.UTC)
    ledger = InMemoryUsageLedger(now=lambda: now)
    await ledger.record("acme", "m", Usage(prompt_tokens=5000))
    model = ResilientModel(
        ScriptedModel(ScriptedModel.reply("December")), ledger=ledger, monthly_token_budget=1000
    )
    with pytest.raises(TokenBudgetExceeded):
        await model.for_org("acme").complete(HI)
    now = dt.datetime(2026, 12, 1, 0, 5, tzinfo=dt.UTC)
    assert (await model.for_org("acme").complete(HI)).content == "December"


async def test_the_ledger_keeps_totals_and_a_store_budget_replaces_it() -> None:
    """A long-lived process must not hold one entry per model call: the ledger keeps a counter
    per organisation and month, and a registry counting in the store keeps no ledger at all."""
    ledger = InMemoryUsageLedger(now=lambda: dt.datetime(2026, 12, 7, tzinfo=dt.UTC))
    for _ in range(500):
        await ledger.record("acme", "m", Usage(prompt_tokens=3, completion_tokens=1))
    assert await ledger.month_total("acme") == 2000
    assert len(ledger.tokens) == 1
    assert ledger.calls == {"m": 500}

    class StoreBudget:
        async def check(self, org: str) -> None:
            raise TokenBudgetExceeded(org, 10, 10)

    registry = ModelRegistry(monthly_token_budget=10)
    assert registry.ledger is not None  # no store: the process counts for itself
    registry.count_in(StoreBudget())
    assert registry.ledger is None
    await registry.configure("reasoning", ModelSettings(model="m"), ScriptedModel())
    with pytest.raises(TokenBudgetExceeded):
        await registry.model("reasoning", org="acme").complete(HI)
