"""One Redis connection pool per process, and the fallback rule every shared part follows:
a Redis error is logged once (as a warning) and the in-process fallback answers instead, so a
Redis outage degrades sharing between workers but loses no request."""

from __future__ import annotations

import logging
import time
from typing import Any

from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis

log = logging.getLogger("erp_agent.coordination")
ERRORS = (redis_errors.RedisError, OSError)
_WARN_EVERY_SECONDS = 60.0
MAX_CONNECTIONS = 50


class RedisLink:
    """A Redis client with a key prefix (one deployment, or one test, per prefix)."""

    def __init__(self, url: str, *, prefix: str = "erp-agent") -> None:
        self.url = url
        self.prefix = prefix
        # A bounded pool: hundreds of concurrent turns wait briefly for a connection instead
        # of opening one each.
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=5.0,
            socket_connect_timeout=2.0,
            socket_timeout=5.0,
            health_check_interval=15,
        )
        self.client: Redis = Redis(connection_pool=pool)
        self._warned_at = float("-inf")

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def degraded(self, what: str, exc: BaseException) -> None:
        """Say (at most once a minute) that ``what`` fell back to this process alone."""
        now = time.monotonic()
        if now - self._warned_at >= _WARN_EVERY_SECONDS:
            self._warned_at = now
            log.warning(
                "Redis at %s is not answering (%s): %s falls back to this process alone "
                "until it is back.",
                self.safe_url,
                type(exc).__name__,
                what,
            )

    @property
    def safe_url(self) -> str:
        # Never log a password that may be in the URL.
        _, sep, tail = self.url.rpartition("@")
        return f"{self.url.split('://', 1)[0]}://…@{tail}" if sep else self.url

    async def ping(self) -> bool:
        try:
            return bool(await self.client.ping())
        except ERRORS:
            return False

    async def aclose(self) -> None:
        await self.client.aclose()
        await self.client.connection_pool.disconnect()  # a pool we made is ours to close


def as_text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
