"""Progress of running turns, readable from any worker: a turn's events are appended to a
Redis stream named by its id (kept a few minutes after it ends), and a browser connected to
any worker reads it from the start. Without Redis (or while it is down) the events go
through this process's memory, which serves a browser connected to this same process.

Each entry is one SSE message: ``event`` (progress, delta, response, error) and its ``data``;
``end`` closes the stream.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from typing import Any

from erp_agent.coordination.redis_link import ERRORS, RedisLink, as_text

END = "end"
KEEP_SECONDS = 600  # a finished turn's events can still be read this long
MAX_ENTRIES = 5000  # per turn: a runaway stream cannot fill Redis
BLOCK_SECONDS = 2.0


class LocalTurnEvents:
    """Per-process: every event kept until the turn ends (+ KEEP), readers woken on append."""

    def __init__(self) -> None:
        self._entries: dict[str, list[tuple[str, Any]]] = defaultdict(list)
        self._changed: dict[str, asyncio.Event] = defaultdict(asyncio.Event)

    async def publish(self, turn_id: str, event: str, data: Any) -> None:
        self._entries[turn_id].append((event, data))
        self._changed[turn_id].set()
        if event == END:
            asyncio.get_running_loop().call_later(KEEP_SECONDS, self._forget, turn_id)

    def _forget(self, turn_id: str) -> None:
        self._entries.pop(turn_id, None)
        self._changed.pop(turn_id, None)

    def known(self, turn_id: str) -> bool:
        return turn_id in self._entries

    async def read(self, turn_id: str, *, timeout: float) -> AsyncIterator[tuple[str, Any]]:
        position = 0
        while True:
            entries = self._entries.get(turn_id, [])
            while position < len(entries):
                event, data = entries[position]
                position += 1
                if event == END:
                    return
                yield event, data
            changed = self._changed[turn_id]
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), timeout)
            except TimeoutError:
                yield "keepalive", None


class TurnEvents:
    """Redis streams, with the local broker as the fallback."""

    def __init__(self, link: RedisLink | None) -> None:
        self.link = link
        self.local = LocalTurnEvents()

    def _key(self, turn_id: str) -> str:
        assert self.link is not None
        return self.link.key("turn", turn_id)

    async def publish(self, turn_id: str, event: str, data: Any) -> None:
        await self.publish_many(turn_id, [(event, data)])

    async def publish_many(self, turn_id: str, items: Sequence[tuple[str, Any]]) -> None:
        """Several messages in order, in one round trip (a streamed answer's text arrives in
        many small pieces)."""
        if not items:
            return
        if self.link is not None:
            try:
                key = self._key(turn_id)
                ended = any(event == END for event, _ in items)
                async with self.link.client.pipeline(transaction=False) as pipe:
                    for event, data in items:
                        fields: dict[Any, Any] = {"e": event, "d": json.dumps(data, default=str)}
                        pipe.xadd(key, fields, maxlen=MAX_ENTRIES, approximate=True)
                    pipe.expire(key, KEEP_SECONDS if ended else 3 * KEEP_SECONDS)
                    await pipe.execute()
                return
            except ERRORS as exc:
                self.link.degraded("progress streaming between workers", exc)
        for event, data in items:
            await self.local.publish(turn_id, event, data)

    async def read(self, turn_id: str, *, timeout: float = 15.0) -> AsyncIterator[tuple[str, Any]]:
        """The turn's events from its first; ``("keepalive", None)`` after ``timeout`` quiet
        seconds. Ends after the turn's last event."""
        if self.link is None or self.local.known(turn_id):
            async for item in self.local.read(turn_id, timeout=timeout):
                yield item
            return
        key, last, quiet = self._key(turn_id), "0-0", 0.0
        # Each read blocks for less than the client's socket timeout (a longer block would
        # look like a dead connection); quiet time adds up to a keep-alive.
        block = min(timeout, BLOCK_SECONDS)
        while True:
            try:
                found: Any = await self.link.client.xread({key: last}, block=int(block * 1000))
            except ERRORS as exc:
                self.link.degraded("progress streaming between workers", exc)
                async for item in self.local.read(turn_id, timeout=timeout):
                    yield item
                return
            if not found:
                quiet += block
                if quiet >= timeout:
                    quiet = 0.0
                    yield "keepalive", None
                continue
            quiet = 0.0
            for entry_id, fields in found[0][1]:
                last = as_text(entry_id)
                values = {as_text(k): as_text(v) for k, v in fields.items()}
                if values.get("e") == END:
                    return
                yield values.get("e", "progress"), json.loads(values.get("d", "null"))

    async def exists(self, turn_id: str) -> bool:
        if self.local.known(turn_id):
            return True
        if self.link is None:
            return False
        try:
            return bool(await self.link.client.exists(self._key(turn_id)))
        except ERRORS:
            return False
