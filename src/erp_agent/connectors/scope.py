"""What decides which records a user sees beyond their roles, as the system of record says it.

Two users with the same roles can see different data: ERPNext's User Permissions limit each
to a company, branch, territory or their own employee record; a document shared with one
user is theirs alone; a bespoke database gives each principal a tenant and branches. Anything
that serves one user's answer to another (the response cache) may do so only when both have
the same roles, tools AND the same ``DataScope``, read from the system as each user.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class DataScope:
    """Every restriction the system applies to one user's reads: each restricted dimension
    (``"Branch"``, ``"Company"``, ``"Employee"``, ``"tenant"`` …) with the values the user
    is limited to, canonically ordered so equal scopes compare (and digest) equal."""

    restrictions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, restrictions: Mapping[str, Iterable[object]]) -> DataScope:
        return cls(
            tuple(
                sorted(
                    (str(key), tuple(sorted({str(v) for v in values})))
                    for key, values in restrictions.items()
                )
            )
        )

    @property
    def unrestricted(self) -> bool:
        return not self.restrictions

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.restrictions).encode()).hexdigest()[:32]
