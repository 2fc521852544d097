"""Monthly token budgets per organisation: the one check, against the interaction log.

The limits are an administrator's (stored in the admin settings, applied on every worker) over
the configured default; the usage is the providers' own token counts per finished turn. The
web server asks before a turn starts (HTTP 429) and each model call asks again, so a long turn
cannot run far past the limit; both ask this object.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

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
        self._now = now

    def limit(self, org: str) -> int | None:
        return self.limits.get(org, self.default)

    async def used(self, org: str) -> int:
        return await self.store.month_tokens(org, self._now())

    async def check(self, org: str) -> None:
        """Raise TokenBudgetExceeded once ``org`` has used its tokens for this month."""
        limit = self.limit(org)
        if limit is None:
            return
        used = await self.used(org)
        if used >= limit:
            raise TokenBudgetExceeded(org, used, limit)
