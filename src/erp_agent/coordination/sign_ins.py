"""Failed sign-ins counted in Redis (one sorted set per account or address, scored by time),
so every worker throttles on the same counts without a write to the store per failure. The
store keeps counting while Redis does not answer."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any

from erp_agent.coordination.redis_link import ERRORS, RedisLink
from erp_agent.store.base import SIGN_IN_FAILURES_KEPT, Store


class RedisSignInCounts:
    def __init__(self, link: RedisLink, fallback: Store) -> None:
        self.link = link
        self.fallback = fallback

    def _key(self, key: str) -> str:
        return self.link.key("sign-in", key)

    async def add_sign_in_failure(self, keys: Sequence[str], at: dt.datetime) -> None:
        stamp = at.timestamp()
        kept = int(SIGN_IN_FAILURES_KEPT.total_seconds())
        try:
            async with self.link.client.pipeline(transaction=True) as pipe:
                for key in keys:
                    name = self._key(key)
                    pipe.zadd(name, {f"{stamp}:{uuid.uuid4().hex[:8]}": stamp})
                    pipe.zremrangebyscore(name, "-inf", stamp - kept)
                    pipe.expire(name, kept)
                await pipe.execute()
        except ERRORS as exc:
            self.link.degraded("sign-in throttling", exc)
            await self.fallback.add_sign_in_failure(keys, at)

    async def sign_in_failures(self, key: str, since: dt.datetime) -> list[dt.datetime]:
        try:
            scores: Any = await self.link.client.zrangebyscore(
                self._key(key), since.timestamp(), "+inf", withscores=True
            )
        except ERRORS as exc:
            self.link.degraded("sign-in throttling", exc)
            return await self.fallback.sign_in_failures(key, since)
        # Failures counted in the store while Redis was down still count.
        stored = await self.fallback.sign_in_failures(key, since)
        return sorted([*stored, *(dt.datetime.fromtimestamp(s, dt.UTC) for _, s in scores)])

    async def clear_sign_in_failures(self, key: str) -> None:
        try:
            await self.link.client.delete(self._key(key))
        except ERRORS as exc:
            self.link.degraded("sign-in throttling", exc)
        await self.fallback.clear_sign_in_failures(key)
