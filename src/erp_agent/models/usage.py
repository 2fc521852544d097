"""Token usage per organisation: every call is recorded; the monthly budget is checked against it.

``UsageLedger`` is the seam; the store (SQLite/PostgreSQL) will provide a persistent one.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from erp_agent.errors import TokenBudgetExceeded
from erp_agent.models.base import Usage


class BudgetCheck(Protocol):
    """The monthly budget, asked before each model call (``erp_agent.store.budgets.Budgets``
    in a server: one limit per organisation, counted in the store)."""

    async def check(self, org: str) -> None:
        """Raise TokenBudgetExceeded once ``org`` has spent its budget."""


@dataclass(frozen=True)
class UsageRecord:
    org: str
    model: str
    usage: Usage
    at: dt.datetime


class UsageLedger(ABC):
    @abstractmethod
    async def record(self, org: str, model: str, usage: Usage) -> None: ...

    @abstractmethod
    async def month_total(self, org: str) -> int:
        """Tokens (prompt + completion) the organisation used this calendar month (UTC)."""


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class InMemoryUsageLedger(UsageLedger):
    def __init__(self, *, now: Callable[[], dt.datetime] = _utc_now) -> None:
        self._now = now
        self.records: list[UsageRecord] = []

    async def record(self, org: str, model: str, usage: Usage) -> None:
        self.records.append(UsageRecord(org, model, usage, self._now()))

    async def month_total(self, org: str) -> int:
        now = self._now()
        return sum(
            r.usage.total
            for r in self.records
            if r.org == org and (r.at.year, r.at.month) == (now.year, now.month)
        )


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
