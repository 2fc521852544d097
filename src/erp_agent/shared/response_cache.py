"""The response cache: a standalone question asked again within a scope gets the stored answer.

A scope is an organisation plus a permission fingerprint (the user's roles, the tools their
ERP rights grant, read-only), so an answer is never served to anyone whose permissions differ.
Two look-ups, in order: *exact* (the same normalised question) and *semantic* (the question's
embedding within ``threshold`` cosine similarity of a cached one's). Every entry carries the
entities its answer read; it expires after ``ttl`` seconds, or sooner when ``invalidate`` is
told those entities changed (the delta sync does). Only answers without proposals or questions
back are cached, and only for a new conversation (a follow-up depends on what came before).

Kept in Redis when configured (shared by every worker), else in this process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from erp_agent.gateway.session import Session
from erp_agent.shared.redis_link import ERRORS, RedisLink, as_text

Embed = Callable[[str], Any]  # a question → its L2-normalised vector
DEFAULT_TTL = 300.0
# Measured with the bundled MiniLM on ten question pairs (tests/erp_agent/test_response_cache.py):
# rewordings of one question scored 0.902–0.932, other questions 0.671–0.745 — except "this
# month" against "last month" (0.971): embeddings barely see periods and numbers, so a semantic
# match also needs the same numbers and period words (``pinned``).
DEFAULT_THRESHOLD = 0.90
_PERIOD_WORDS = (
    r"\d+(?:[.,]\d+)*|today|yesterday|tomorrow|this|last|next|previous|current|ytd|mtd|qtd|"
    r"day|days|week|weeks|month|months|quarter|quarters|year|years|q[1-4]|h[12]|jan\w*|feb\w*|"
    r"mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*|not|no|without"
)
UNCACHEABLE = ("proposal", "choices")


def fingerprint(session: Session) -> str:
    """Organisation + what the user may do: equal fingerprints see the same data."""
    scope = {
        "org": session.org,
        "roles": sorted(session.roles),
        "tools": sorted(session.allowed_tools),
        "read_only": session.read_only,
    }
    return hashlib.sha256(json.dumps(scope, sort_keys=True).encode()).hexdigest()[:32]


def normalise(question: str) -> str:
    text = re.sub(r"\s+", " ", question.strip().lower())
    return text.rstrip(" ?!.")


def pinned(question: str) -> list[str]:
    """The words a figure depends on that embeddings blur: numbers, periods, negations."""
    return sorted(re.findall(rf"\b(?:{_PERIOD_WORDS})\b", normalise(question)))


def cacheable(response: dict[str, Any]) -> bool:
    blocks = response.get("blocks", [])
    return response.get("outcome") == "answered" and not any(
        b.get("type") in UNCACHEABLE for b in blocks
    )


@dataclass
class Hit:
    kind: str  # exact | semantic
    response: dict[str, Any]
    question: str


class ResponseCache:
    def __init__(
        self,
        link: RedisLink | None,
        *,
        ttl: float = DEFAULT_TTL,
        embed: Embed | None = None,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.link = link
        self.ttl = ttl
        self.embed = embed
        self.threshold = threshold
        # In-process: key → (expires, entry); scope → {key}; (org, entity) → {key}.
        self._entries: dict[str, tuple[float, dict[str, Any]]] = {}
        self._scopes: dict[str, set[str]] = {}
        self._tags: dict[tuple[str, str], set[str]] = {}

    def _key(self, scope: str, question: str) -> str:
        digest = hashlib.sha256(normalise(question).encode()).hexdigest()[:32]
        return f"{scope}:{digest}"

    async def _vector(self, question: str) -> list[float] | None:
        if self.embed is None:
            return None
        # The embedding model runs on the CPU: off the event loop.
        vector = await asyncio.to_thread(self.embed, normalise(question))
        return [float(x) for x in vector]

    # ------------------------------------------------------------ look-up

    async def get(self, session: Session, question: str) -> Hit | None:
        scope = fingerprint(session)
        key = self._key(scope, question)
        entry = await self._read(key)
        if entry is not None:
            return Hit("exact", entry["response"], entry["question"])
        vector = await self._vector(question)
        if vector is None:
            return None
        best, best_score = None, self.threshold
        words = pinned(question)
        for candidate in await self._scope_entries(scope):
            if not candidate.get("vector") or pinned(candidate["question"]) != words:
                continue
            score = float(np.dot(vector, candidate["vector"]))
            if score >= best_score:
                best, best_score = candidate, score
        return Hit("semantic", best["response"], best["question"]) if best else None

    async def put(
        self, session: Session, question: str, response: dict[str, Any], entities: Sequence[str]
    ) -> None:
        if not cacheable(response):
            return
        scope = fingerprint(session)
        key = self._key(scope, question)
        tags = sorted(set(entities))
        entry: dict[str, Any] = {
            "question": question,
            "response": response,
            "entities": tags,
            "vector": await self._vector(question),
        }
        if self.link is not None:
            try:
                await self._put_redis(session.org, scope, key, entry)
                return
            except ERRORS as exc:
                self.link.degraded("the response cache", exc)
        expires = time.monotonic() + self.ttl
        self._entries[key] = (expires, entry)
        self._scopes.setdefault(scope, set()).add(key)
        for entity in tags:
            self._tags.setdefault((session.org, entity), set()).add(key)

    async def invalidate(self, org: str, entities: Sequence[str]) -> int:
        """Drop every answer of ``org`` that read one of ``entities``; how many were dropped."""
        dropped = 0
        for entity in entities:
            for key in self._tags.pop((org, entity), set()):
                dropped += self._entries.pop(key, None) is not None
        if self.link is not None:
            try:
                dropped += await self._invalidate_redis(org, entities)
            except ERRORS as exc:
                self.link.degraded("the response cache", exc)
        return dropped

    # ------------------------------------------------------------ storage

    async def _read(self, key: str) -> dict[str, Any] | None:
        if self.link is not None:
            try:
                raw = await self.link.client.get(self.link.key("cache", key))
                return json.loads(as_text(raw)) if raw is not None else None
            except ERRORS as exc:
                self.link.degraded("the response cache", exc)
        found = self._entries.get(key)
        if found is None or found[0] < time.monotonic():
            self._entries.pop(key, None)
            return None
        return found[1]

    async def _scope_entries(self, scope: str) -> list[dict[str, Any]]:
        if self.link is not None:
            try:
                keys = await self.link.client.smembers(self.link.key("cache-scope", scope))
                names = [self.link.key("cache", as_text(k)) for k in keys]
                values = await self.link.client.mget(names) if names else []
                return [json.loads(as_text(v)) for v in values if v is not None]
            except ERRORS as exc:
                self.link.degraded("the response cache", exc)
        now = time.monotonic()
        return [
            entry
            for key in self._scopes.get(scope, set())
            if (found := self._entries.get(key)) is not None
            for expires, entry in [found]
            if expires >= now
        ]

    async def _put_redis(self, org: str, scope: str, key: str, entry: dict[str, Any]) -> None:
        assert self.link is not None
        ttl = int(self.ttl)
        async with self.link.client.pipeline(transaction=True) as pipe:
            pipe.set(self.link.key("cache", key), json.dumps(entry, default=str), ex=ttl)
            pipe.sadd(self.link.key("cache-scope", scope), key)
            pipe.expire(self.link.key("cache-scope", scope), ttl)
            for entity in entry["entities"]:
                tag = self.link.key("cache-tag", org, entity)
                pipe.sadd(tag, key)
                pipe.expire(tag, ttl)
            await pipe.execute()

    async def _invalidate_redis(self, org: str, entities: Sequence[str]) -> int:
        assert self.link is not None
        client, dropped = self.link.client, 0
        for entity in entities:
            tag = self.link.key("cache-tag", org, entity)
            keys = [as_text(k) for k in await client.smembers(tag)]
            if keys:
                dropped += int(await client.delete(*(self.link.key("cache", k) for k in keys)))
            await client.delete(tag)
        return dropped
