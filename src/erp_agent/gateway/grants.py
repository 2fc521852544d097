"""What the ERP grants a user, asked at sign-in and reused for a short time.

Asking takes one permission question per doctype and right (Frappe has no bulk method), which
is most of what a sign-in costs. The answers are saved in the store under a key hashed from the
ERP, the user and the user's roles, and a sign-in of the same user with the same roles within
``ERP_AGENT_GRANTS_TTL`` reuses them: another user, or the same user after a role change, asks
again. They only choose which tools are offered; every ERP call still runs as the user, so a
right withdrawn inside the TTL is still refused by the ERP itself.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from erp_agent.store.base import Store

Clock = Callable[[], dt.datetime]


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class Grants:
    """Per doctype (catalog entity): right → granted; per report: may run."""

    entities: dict[str, dict[str, bool]] = field(default_factory=dict)
    reports: dict[str, bool] = field(default_factory=dict)

    def covers(self, rights: Iterable[tuple[str, str]], reports: Iterable[str]) -> bool:
        """Whether every (entity, right) and report asked about has an answer here (a newer
        catalog may ask about a doctype or a right these were not asked for)."""
        return all(right in self.entities.get(e, {}) for e, right in rights) and all(
            r in self.reports for r in reports
        )

    def as_dict(self) -> dict[str, Any]:
        return {"entities": self.entities, "reports": self.reports}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Grants:
        entities = raw.get("entities") or {}
        reports = raw.get("reports") or {}
        return cls(
            {str(e): {str(r): bool(v) for r, v in dict(rights).items()}
             for e, rights in dict(entities).items()},
            {str(r): bool(v) for r, v in dict(reports).items()},
        )  # fmt: skip


@dataclass
class GrantsCache:
    """Saved grants of one ERP (``erp`` names it: its address, or the connector's name)."""

    store: Store
    erp: str
    ttl: dt.timedelta
    clock: Clock = _utcnow

    def key(self, user: str, roles: Iterable[str]) -> str:
        # The roles are part of the key: a role given or taken away is a new set of grants.
        text = "\0".join([self.erp, user, *sorted(set(roles))])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    async def get(self, user: str, roles: Iterable[str]) -> Grants | None:
        if self.ttl <= dt.timedelta(0):
            return None
        raw = await self.store.saved_grants(self.key(user, roles), self.clock() - self.ttl)
        return None if raw is None else Grants.from_dict(raw)

    async def put(self, user: str, roles: Iterable[str], grants: Grants) -> None:
        if self.ttl <= dt.timedelta(0):
            return
        await self.store.save_grants(self.key(user, roles), user, grants.as_dict(), self.clock())

    async def forget(self, user: str) -> None:
        """Sign-out: the next sign-in asks the ERP again."""
        await self.store.forget_grants(user)
