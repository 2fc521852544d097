"""What every route reads: the runtime, the model provider, the server tables, metrics."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from erp_agent.channels.keys import KeyRing
from erp_agent.coordination.response_cache import CacheScopes, ResponseCache
from erp_agent.coordination.turn_events import TurnEvents
from erp_agent.relay.hub import RelayHub
from erp_agent.runtime import Runtime
from erp_agent.server.model_switch import ModelProvider
from erp_agent.server.prometheus import Metrics
from erp_agent.server.security import Vault
from erp_agent.server.throttle import SignInThrottle
from erp_agent.store.base import Store

T = TypeVar("T")

if TYPE_CHECKING:
    from erp_agent.queue.submit import TurnQueue


class KnowledgeAdmin(Protocol):
    """The retrieval side's knowledge indexer, as the admin console uses it."""

    async def upload(self, name: str, text: str) -> dict[str, Any]: ...

    async def reindex(self) -> dict[str, Any]: ...


@dataclass
class ServerState:
    runtime: Runtime
    models: ModelProvider
    vault: Vault
    metrics: Metrics
    erp_ping: Callable[[], Awaitable[None]]
    throttle: SignInThrottle
    keys: KeyRing
    relay: RelayHub
    knowledge: KnowledgeAdmin | None = None
    configured_read_only: bool = False  # ERP_AGENT_READ_ONLY: no admin can switch it off
    read_only: bool = False  # the tenant switch; applies to every session at once
    # Admin settings as last applied here, and when they were last read (settings_store.sync).
    applied: dict[str, Any] = field(default_factory=dict)
    settings_read_at: float = float("-inf")
    # Every turn's SSE messages, readable from any worker (Redis streams; local fallback).
    turn_events: TurnEvents = field(default_factory=lambda: TurnEvents(None))
    queue: TurnQueue | None = None  # background turns on the queue (None: in this process)
    cache: ResponseCache | None = None  # answers served again (ERP_AGENT_RESPONSE_CACHE_SECONDS)
    cache_scopes: CacheScopes | None = None  # whose answers may be served to whom
    # Turns keep running when a client disconnects; holding the task keeps it alive.
    running: set[asyncio.Task[Any]] = field(default_factory=set)

    def keep(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` to its end even when the request that started it is gone (held in
        ``running``, which shutdown waits for)."""
        task = asyncio.ensure_future(work)
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return task

    @property
    def store(self) -> Store:
        """The one persistence layer: conversations, turns, web sessions, settings, the log."""
        return self.runtime.store

    # Configuration problems found at start, shown in the admin console and by `doctor`.
    problems: list[str] = field(default_factory=list)
