"""The token-rate gate shared by every worker: one token bucket in Redis (a Lua script makes
each take-or-wait atomic), the same contract as ``models.limits.TokenRateGate``, which serves
instead while Redis does not answer."""

from __future__ import annotations

import asyncio
import time

from erp_agent.coordination.redis_link import ERRORS, RedisLink
from erp_agent.models.limits import TokenRateGate

# KEYS[1] bucket; ARGV capacity, rate/s, tokens (negative: give back), now. Returns the seconds
# to wait ("0" once taken). The bucket refills continuously and never exceeds its capacity.
_TAKE = """
local cap = tonumber(ARGV[1]); local rate = tonumber(ARGV[2])
local want = tonumber(ARGV[3]); local now = tonumber(ARGV[4])
local v = redis.call('HMGET', KEYS[1], 'a', 't')
local a = tonumber(v[1]) or cap
local t = tonumber(v[2]) or now
a = math.min(cap, a + math.max(0, now - t) * rate)
local wait = 0
if want < 0 then a = math.min(cap, a - want)
elseif a >= want then a = a - want
else wait = (want - a) / rate end
redis.call('HSET', KEYS[1], 'a', tostring(a), 't', tostring(now))
redis.call('EXPIRE', KEYS[1], 3600)
return tostring(wait)
"""


class RedisRateGate:
    def __init__(self, link: RedisLink, tokens_per_minute: int, *, name: str = "tpm") -> None:
        if tokens_per_minute <= 0:
            raise ValueError("tokens_per_minute must be positive")
        self.link = link
        self.capacity = tokens_per_minute
        self.rate = tokens_per_minute / 60.0
        self.key = link.key("rate", name)
        self.local = TokenRateGate(tokens_per_minute)
        self._script = link.client.register_script(_TAKE)

    async def _take(self, tokens: int) -> float:
        args = [self.capacity, self.rate, tokens, time.time()]
        return float(await self._script(keys=[self.key], args=args))

    async def acquire(self, tokens: int) -> None:
        tokens = min(tokens, self.capacity)  # larger calls wait for a full bucket, not forever
        while True:
            try:
                wait = await self._take(tokens)
            except ERRORS as exc:
                self.link.degraded("the token-rate gate", exc)
                await self.local.acquire(tokens)
                return
            if wait <= 0:
                return
            await asyncio.sleep(min(wait, 5.0))

    async def settle(self, reserved: int, used: int) -> None:
        if reserved == used:
            return
        try:
            await self._take(used - reserved)  # negative: tokens given back
        except ERRORS as exc:
            self.link.degraded("the token-rate gate", exc)
            await self.local.settle(reserved, used)

    async def available(self) -> float:
        """Tokens the bucket holds now (for tests and the admin view)."""
        await self._take(0)
        raw = await self.link.client.hget(self.key, "a")
        return float(raw or self.capacity)
