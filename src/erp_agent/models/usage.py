"""Token usage per organisation: every call is recorded; the monthly budget is checked against it.

``UsageLedger`` is the seam; the store (SQLite/PostgreSQL) will provide a persistent one.
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from erp_agent.models.base import Usage


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
