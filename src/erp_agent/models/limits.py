"""The token-rate gate: a tokens-per-minute budget shared by every model call in the process.

A call reserves its estimated tokens before it is sent and settles with the real usage after;
when the budget is spent, callers wait (first come, first served) instead of provoking 429s.
``RateGate`` is the seam for a shared implementation (e.g. Redis) across workers.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from typing import Any, Protocol

from erp_agent.models.base import Message

DEFAULT_COMPLETION_RESERVE = 1024  # reserved for the answer when the caller sets no max_tokens


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class RateGate(Protocol):
    async def acquire(self, tokens: int) -> None:
        """Return once ``tokens`` may be spent; wait if the budget is spent."""

    async def settle(self, reserved: int, used: int) -> None:
        """Correct a reservation with what the call really used (0 when it failed unsent)."""


class TokenRateGate:
    """A token bucket holding one minute's budget, refilled continuously."""

    def __init__(self, tokens_per_minute: int, *, clock: Clock | None = None) -> None:
        if tokens_per_minute <= 0:
            raise ValueError("tokens_per_minute must be positive")
        self.capacity = tokens_per_minute
        self._rate = tokens_per_minute / 60.0
        self._clock = clock or SystemClock()
        self._available = float(tokens_per_minute)
        self._stamp = self._clock.now()
        self._queue = asyncio.Lock()  # FIFO, so a large call is not starved by small ones

    @property
    def available(self) -> float:
        self._refill()
        return self._available

    async def acquire(self, tokens: int) -> None:
        # A call larger than the whole budget waits for a full bucket rather than forever.
        tokens = min(tokens, self.capacity)
        async with self._queue:
            while True:
                self._refill()
                if self._available >= tokens:
                    self._available -= tokens
                    return
                await self._clock.sleep((tokens - self._available) / self._rate)

    async def settle(self, reserved: int, used: int) -> None:
        self._refill()
        # May go below zero when a call used more than it reserved: later callers wait it off.
        self._available = min(float(self.capacity), self._available + reserved - used)

    def _refill(self) -> None:
        now = self._clock.now()
        elapsed = max(0.0, now - self._stamp)
        self._stamp = now
        self._available = min(float(self.capacity), self._available + elapsed * self._rate)


def estimate_tokens(messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
    """A provider-neutral estimate (about four characters a token), good enough to reserve."""
    chars = sum(
        len(m.content or "") + sum(len(c.name) + len(c.arguments) for c in m.tool_calls) + 16
        for m in messages
    )
    chars += sum(len(str(t)) for t in tools)
    return math.ceil(chars / 4)
