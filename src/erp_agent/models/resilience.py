"""``ResilientModel``: what every model call goes through, whichever provider answers.

In order: the organisation's monthly budget is checked; tokens are reserved at the shared rate
gate; the call runs under a timeout; rate limits, server errors and timeouts are retried with
exponential backoff and jitter (a provider's retry-after is honoured); other errors are raised
at once; usage is recorded in the ledger and reported to ``on_usage``.
"""

from __future__ import annotations

import asyncio
import copy
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from erp_agent.errors import ModelError, ModelRateLimited, ModelTimeout
from erp_agent.models.base import ChatModel, Completion, Message, ModelProfile, StreamDelta, Usage
from erp_agent.models.limits import (
    DEFAULT_COMPLETION_RESERVE,
    Clock,
    RateGate,
    SystemClock,
    estimate_tokens,
)
from erp_agent.models.usage import BudgetCheck, LedgerBudget, UsageLedger


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    # A provider asking for a longer pause than this is not worth holding a user's turn for.
    max_retry_after: float = 60.0

    def delay(self, retry: int, error: ModelError, rand: float) -> float | None:
        """Seconds to wait before retry number ``retry`` (0-based), or None to give up."""
        if not error.retryable or retry >= self.max_retries:
            return None
        if isinstance(error, ModelRateLimited) and error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                return None
            # Never earlier than asked; a little later, so waiting callers do not all return at once.
            return error.retry_after * (1 + 0.1 * rand)
        backoff = min(self.max_delay, self.base_delay * 2.0**retry)
        return backoff * (0.5 + 0.5 * rand)


@dataclass(frozen=True)
class UsageEvent:
    org: str
    model: str
    usage: Usage
    attempts: int
    seconds: float


class ResilientModel(ChatModel):
    def __init__(
        self,
        inner: ChatModel,
        *,
        org: str = "default",
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        gate: RateGate | None = None,
        ledger: UsageLedger | None = None,
        monthly_token_budget: int | None = None,
        budget: BudgetCheck | None = None,
        on_usage: Callable[[UsageEvent], None] | None = None,
        clock: Clock | None = None,
        rand: Callable[[], float] = random.random,
        timeout_setting: str = "timeout in the model settings",
    ) -> None:
        self.inner = inner
        self.timeout_setting = timeout_setting
        self.profile = inner.profile
        self.org = org
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.gate = gate
        self.ledger = ledger
        self.monthly_token_budget = monthly_token_budget
        if budget is None and ledger is not None and monthly_token_budget is not None:
            budget = LedgerBudget(ledger, monthly_token_budget)
        self.budget = budget
        self.on_usage = on_usage
        self.clock: Clock = clock or SystemClock()
        self._rand = rand

    async def prepare(self) -> ModelProfile:
        self.profile = await self.inner.prepare()
        return self.profile

    def for_org(self, org: str) -> ResilientModel:
        """The same model, gate and ledger, with usage and budget counted for ``org``."""
        bound = copy.copy(self)
        bound.org = org
        return bound

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        await self._check_budget()
        reserve = estimate_tokens(messages, tools) + (max_tokens or DEFAULT_COMPLETION_RESERVE)
        started = time.monotonic()
        retry = 0
        while True:
            await self._acquire(reserve)
            try:
                async with asyncio.timeout(self.timeout):
                    completion = await self.inner.complete(
                        messages, tools, temperature=temperature, max_tokens=max_tokens
                    )
            except (TimeoutError, ModelError) as exc:
                await self._settle(reserve, 0)
                error = self._as_model_error(exc)
                delay = self.retry.delay(retry, error, self._rand())
                if delay is None:
                    raise error from exc
                await self.clock.sleep(delay)
                retry += 1
                continue
            await self._record(completion, reserve, retry + 1, started)
            return completion

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        """Retried only until the first delta is out: after that the user has seen text, and a
        second attempt would repeat it. The timeout bounds the wait for each delta."""
        await self._check_budget()
        reserve = estimate_tokens(messages, tools) + (max_tokens or DEFAULT_COMPLETION_RESERVE)
        started = time.monotonic()
        retry = 0
        while True:
            await self._acquire(reserve)
            yielded = False
            try:
                deltas = self.inner.stream(
                    messages, tools, temperature=temperature, max_tokens=max_tokens
                )
                try:
                    while True:
                        try:
                            async with asyncio.timeout(self.timeout):
                                delta = await anext(deltas)
                        except StopAsyncIteration:
                            return
                        if delta.done is not None:
                            await self._record(delta.done, reserve, retry + 1, started)
                        yielded = True
                        yield delta
                finally:
                    await _aclose(deltas)
            except (TimeoutError, ModelError) as exc:
                await self._settle(reserve, 0)
                error = self._as_model_error(exc)
                delay = None if yielded else self.retry.delay(retry, error, self._rand())
                if delay is None:
                    raise error from exc
                await self.clock.sleep(delay)
                retry += 1

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _as_model_error(self, exc: TimeoutError | ModelError) -> ModelError:
        if isinstance(exc, ModelError):
            return exc
        return ModelTimeout(
            f"The AI model did not answer within {self.timeout:g} seconds. Please try again, or "
            "ask a smaller question; a slow (for example self-hosted) model needs a longer "
            f"limit: an administrator can raise {self.timeout_setting}.",
            detail=f"timeout after {self.timeout:g}s",
        )

    async def _check_budget(self) -> None:
        if self.budget is not None:
            await self.budget.check(self.org)

    async def _acquire(self, tokens: int) -> None:
        if self.gate is not None:
            await self.gate.acquire(tokens)

    async def _settle(self, reserved: int, used: int) -> None:
        if self.gate is not None:
            await self.gate.settle(reserved, used)

    async def _record(
        self, completion: Completion, reserved: int, attempts: int, started: float
    ) -> None:
        usage = completion.usage
        await self._settle(reserved, usage.total)
        model = completion.model or self.profile.name
        if self.ledger is not None:
            await self.ledger.record(self.org, model, usage)
        if self.on_usage is not None:
            self.on_usage(UsageEvent(self.org, model, usage, attempts, time.monotonic() - started))


async def _aclose(iterator: AsyncIterator[StreamDelta]) -> None:
    """Close an abandoned provider stream now, releasing its HTTP connection."""
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()
