"""Token usage per organisation for a process without a store (a test, an embedded model): the
monthly budget is checked against it. A served process counts usage in the store instead
(``erp_agent.store.budgets.Budgets``, the one check), and keeps no ledger of its own.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from typing import Protocol

from erp_agent.errors import TokenBudgetExceeded
from erp_agent.models.base import Usage


class BudgetCheck(Protocol):
    """The monthly budget, asked before each model call (``erp_agent.store.budgets.Budgets``
    in a server: one limit per organisation, counted in the store)."""

    async def check(self, org: str) -> None:
        """Raise TokenBudgetExceeded once ``org`` has spent its budget."""


class UsageLedger(ABC):
    @abstractmethod
    async def record(self, org: str, model: str, usage: Usage) -> None: ...

    @abstractmethod
    async def month_total(self, org: str) -> int:
        """Tokens (prompt + completion) the organisation used this calendar month (UTC)."""


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class InMemoryUsageLedger(UsageLedger):
    """Totals, not records: tokens per organisation and month, calls per model, so a long-lived
    process holds a few counters rather than one entry per call."""

    def __init__(self, *, now: Callable[[], dt.datetime] = _utc_now) -> None:
        self._now = now
        self.tokens: Counter[tuple[str, int, int]] = Counter()
        self.calls: Counter[str] = Counter()

    async def record(self, org: str, model: str, usage: Usage) -> None:
        at = self._now()
        self.tokens[(org, at.year, at.month)] += usage.total
        self.calls[model] += 1

    async def month_total(self, org: str) -> int:
        now = self._now()
        return self.tokens[(org, now.year, now.month)]


class LedgerBudget:
    """One limit for every organisation, counted in a ledger (a process of its own, e.g. a
    command-line session)."""

    def __init__(self, ledger: UsageLedger, limit: int) -> None:
        self.ledger = ledger
        self.limit = limit

    async def check(self, org: str) -> None:
        used = await self.ledger.month_total(org)
        if used >= self.limit:
            raise TokenBudgetExceeded(org, used, self.limit)
