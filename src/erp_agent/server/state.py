"""What every route reads: the runtime, the model provider, the server tables, metrics."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from erp_agent.runtime import Runtime
from erp_agent.server.db import ServerDB
from erp_agent.server.metrics import Metrics
from erp_agent.server.models import ModelProvider
from erp_agent.server.security import Vault
from erp_agent.server.throttle import SignInThrottle


class KnowledgeAdmin(Protocol):
    """The retrieval side's knowledge indexer, as the admin console uses it."""

    async def upload(self, name: str, text: str) -> dict[str, Any]: ...

    async def reindex(self) -> dict[str, Any]: ...


@dataclass
class ServerState:
    runtime: Runtime
    models: ModelProvider
    db: ServerDB
    vault: Vault
    metrics: Metrics
    erp_ping: Callable[[], Awaitable[None]]
    throttle: SignInThrottle
    knowledge: KnowledgeAdmin | None = None
    budgets: dict[str, int] = field(default_factory=dict)  # organisation → tokens per month
    read_only: bool = False  # the tenant switch; applies to every session at once
    # Turns keep running when a client disconnects; holding the task keeps it alive.
    running: set[asyncio.Task[Any]] = field(default_factory=set)
