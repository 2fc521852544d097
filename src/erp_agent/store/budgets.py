"""Monthly token budgets per organisation: the one check, against the interaction log.

The limits are an administrator's (stored in the admin settings, applied on every worker) over
the configured default; the usage is the providers' own token counts per finished turn. The
web server asks before a turn starts (HTTP 429) and each model call asks again, so a long turn
cannot run far past the limit; both ask this object.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable

from erp_agent.errors import TokenBudgetExceeded
from erp_agent.store.base import Store


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Budgets:
    def __init__(
        self,
        store: Store,
        default: int | None = None,
        *,
        now: Callable[[], dt.datetime] = _utcnow,
    ) -> None:
        self.store = store
        self.default = default
        self.limits: dict[str, int] = {}  # organisation → tokens per month (admin settings)
        # The organisation's plan's tokens per month (gateway/plans.py), when plans are kept:
        # an administrator's budget for the organisation wins, then the plan, then the default.
        self.plan_limit: Callable[[str], Awaitable[int | None]] | None = None
        self._now = now

    def limit(self, org: str) -> int | None:
        return self.limits.get(org, self.default)

    async def used(self, org: str) -> int:
        return await self.store.month_tokens(org, self._now())

    async def effective_limit(self, org: str) -> int | None:
        if org in self.limits:
            return self.limits[org]
        if self.plan_limit is not None:
            planned = await self.plan_limit(org)
            if planned is not None:
                return planned
        return self.default

    async def check(self, org: str) -> None:
        """Raise TokenBudgetExceeded once ``org`` has used its tokens for this month."""
        limit = await self.effective_limit(org)
        if limit is None:
            return
        used = await self.used(org)
        if used >= limit:
            raise TokenBudgetExceeded(org, used, limit)
