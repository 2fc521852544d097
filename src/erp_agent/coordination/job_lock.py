"""One run at a time of a scheduled job across every worker: a Redis lock when Redis is
configured (``SET NX PX`` with this run's token, released only by its holder), else a file
lock in the data directory (workers of one host)."""

from __future__ import annotations

import contextlib
import fcntl
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

from erp_agent.coordination.redis_link import ERRORS, RedisLink

# Deletes the key only while it still holds this run's token: a run that outlived its lease
# never releases the next run's lock.
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


@contextlib.asynccontextmanager
async def held(
    name: str, *, redis: RedisLink | None, folder: Path, lease_seconds: float
) -> AsyncIterator[bool]:
    """Yields True if this run holds the lock for ``name``, False if another run holds it.
    The Redis lease expires after ``lease_seconds`` (a worker killed mid-run frees it)."""
    if redis is not None:
        key, token = redis.key("job", name), secrets.token_hex(8)
        try:
            got = bool(await redis.client.set(key, token, nx=True, px=int(lease_seconds * 1000)))
        except ERRORS as exc:
            redis.degraded(f"the lock of {name}", exc)
        else:
            try:
                yield got
            finally:
                if got:
                    with contextlib.suppress(*ERRORS):
                        await redis.client.eval(_RELEASE, 1, key, token)
            return
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{name}.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
