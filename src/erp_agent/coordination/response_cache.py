"""The response cache: a standalone question asked again within a scope gets the stored answer.

An answer is served again only to someone who would have got the same answer from the ERP:
the same organisation, roles, granted tools, read-only switch AND the same data scope — every
User Permission, shared document and restriction the ERP applies, read from the ERP as that
user (``Connector.data_scope``). Each entry is kept under one of two keys:

- *shared*: everyone whose complete scope is equal — only when the ERP told the scope
  completely, the question does not speak of the asker ("my net pay"), and no entity the
  answer read is one this user sees only their own records of;
- *personal*: this user alone — everything else.

Two look-ups, in order: *exact* (the same normalised question) and *semantic* (the question's
embedding within ``threshold`` cosine similarity of a cached one's), each in the personal key
first, then the shared one. Every entry carries the entities its answer read (``*`` when it
read something no entity names, such as a report); it expires after ``ttl`` seconds, or sooner
when ``invalidate`` is told those entities changed (the delta sync does, and every write
confirmed through the gateway). Only answers without proposals or questions back are cached,
and only for a new conversation (a follow-up depends on what came before).

Kept in Redis when configured (shared by every worker), else in this process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from erp_agent.calls.session import Session
from erp_agent.connectors.base import Connector
from erp_agent.connectors.scope import DataScope
from erp_agent.coordination.redis_link import ERRORS, RedisLink, as_text

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
# Words by which a question speaks of the asker: its answer is theirs alone.
_ASKER_WORDS = r"i|i'm|im|i've|i'd|i'll|me|my|mine|myself"
UNCACHEABLE = ("proposal", "choices")
ANY_ENTITY = "*"  # the tag of an answer that read something no entity names (a report, a search)
SCOPE_TTL = 60.0  # seconds a user's data scope read from the ERP is reused


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class CacheScope:
    """Where one user's answers are looked up and kept: ``personal`` is theirs alone;
    ``shared`` is everyone's with the same complete scope, None when the ERP did not tell it."""

    personal: str
    shared: str | None


def fingerprint(session: Session, scope: DataScope | None) -> CacheScope:
    """Organisation + what the user may do + every restriction on what they see: equal
    shared fingerprints see the same data."""
    base = {
        "org": session.org,
        "roles": sorted(session.roles),
        "tools": sorted(session.allowed_tools),
        "read_only": session.read_only,
    }
    shared = _digest({**base, "scope": scope.restrictions}) if scope is not None else None
    return CacheScope(personal=_digest({**base, "user": session.user}), shared=shared)


def normalise(question: str) -> str:
    text = re.sub(r"\s+", " ", question.strip().lower())
    return text.rstrip(" ?!.")


def about_the_asker(question: str) -> bool:
    """Whether the question speaks of whoever asks it ("what was my net pay")."""
    return re.search(rf"\b(?:{_ASKER_WORDS})\b", normalise(question)) is not None


def pinned(question: str) -> list[str]:
    """The words a figure depends on that embeddings blur: numbers, periods, negations, and
    whether it speaks of the asker."""
    text = normalise(question)
    return sorted(re.findall(rf"\b(?:{_PERIOD_WORDS}|{_ASKER_WORDS})\b", text))


def cacheable(response: Mapping[str, Any]) -> bool:
    blocks = response.get("blocks", [])
    return response.get("outcome") == "answered" and not any(
        b.get("type") in UNCACHEABLE for b in blocks
    )


class CacheScopes:
    """Each user's cache scope, from the restrictions the ERP reports for them (read as the
    user, reused for ``ttl`` seconds so a cache hit costs no ERP call)."""

    def __init__(self, connector: Connector, ttl: float = SCOPE_TTL) -> None:
        self.connector = connector
        self.ttl = ttl
        self._scopes: dict[tuple[str, str], tuple[float, DataScope | None]] = {}

    async def _data_scope(self, session: Session) -> DataScope | None:
        key = (session.org, session.user)
        found = self._scopes.get(key)
        if found is not None and found[0] > time.monotonic():
            return found[1]
        try:
            scope = await self.connector.data_scope(session.credential)
        except Exception:
            scope = None  # unknown: this user's answers stay theirs
        self._scopes[key] = (time.monotonic() + self.ttl, scope)
        return scope

    async def of(self, session: Session) -> CacheScope:
        return fingerprint(session, await self._data_scope(session))

    async def shareable(self, session: Session, question: str, entities: Iterable[str]) -> bool:
        """Whether this user's answer may be served to others with the same scope: the ERP
        told the scope, the question is not about the asker, and no entity it read is one the
        user sees only their own records of."""
        if about_the_asker(question) or await self._data_scope(session) is None:
            return False
        named = sorted({e for e in entities if e != ANY_ENTITY})
        try:
            own = await self.connector.owner_only(session.credential, session.roles, named)
        except Exception:
            own = None
        return own is not None and not own


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

    async def get(self, scope: CacheScope, question: str) -> Hit | None:
        """The answer kept for this question in this scope: the user's own first, then the
        shared one (never the shared one for a question about the asker)."""
        scopes = [scope.personal]
        if scope.shared is not None and not about_the_asker(question):
            scopes.append(scope.shared)
        for name in scopes:
            entry = await self._read(self._key(name, question))
            if entry is not None:
                return Hit("exact", entry["response"], entry["question"])
        vector = await self._vector(question)
        if vector is None:
            return None
        best, best_score = None, self.threshold
        words = pinned(question)
        for name in scopes:
            for candidate in await self._scope_entries(name):
                if not candidate.get("vector") or pinned(candidate["question"]) != words:
                    continue
                score = float(np.dot(vector, candidate["vector"]))
                if score >= best_score:
                    best, best_score = candidate, score
        return Hit("semantic", best["response"], best["question"]) if best else None

    async def put(
        self,
        scope: CacheScope,
        question: str,
        response: Mapping[str, Any],
        entities: Sequence[str],
        *,
        org: str,
        shared: bool = False,
    ) -> None:
        """Keep an answer: for everyone with this scope when ``shared`` (and the scope is
        known), else for this user alone."""
        if not cacheable(response):
            return
        name = scope.shared if shared and scope.shared is not None else scope.personal
        key = self._key(name, question)
        tags = sorted(set(entities)) or [ANY_ENTITY]
        entry: dict[str, Any] = {
            "question": question,
            "response": response,
            "entities": tags,
            "vector": await self._vector(question),
        }
        if self.link is not None:
            try:
                await self._put_redis(org, name, key, entry)
                return
            except ERRORS as exc:
                self.link.degraded("the response cache", exc)
        expires = time.monotonic() + self.ttl
        self._entries[key] = (expires, entry)
        self._scopes.setdefault(name, set()).add(key)
        for entity in tags:
            self._tags.setdefault((org, entity), set()).add(key)

    async def invalidate(self, org: str, entities: Sequence[str]) -> int:
        """Drop every answer of ``org`` that read one of ``entities`` (and every answer that
        read something no entity names); how many were dropped."""
        entities = sorted({*entities, ANY_ENTITY})
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
