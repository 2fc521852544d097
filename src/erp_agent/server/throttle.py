"""Sign-in throttling: failed sign-ins counted per account and per client address, in the store
(so every worker sees the same counts), checked before the password ever reaches the ERP.

Two limits per key: a rate (``per_minute`` failures in 60 s → HTTP 429 with Retry-After) and a
temporary lockout (``lockout_failures`` in ``lockout_minutes`` → refused until the oldest of
them leaves the window). A successful sign-in clears the account's failures, not the address's.

An account is a person, not a spelling: the ERP signs ``stock``, ``stock@demo.local`` and
``STOCK@demo.local`` in as the same user, so ``accounts`` asks the ERP who a typed name is
(the connector's ``canonical_user``, with the service credential) — or remembers it from an
earlier successful sign-in of that spelling — and failures count on the typed name and on the
user it names, so switching spellings never starts the count afresh.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from erp_agent.config import SignInLimits
from erp_agent.errors import ErpAgentError, SignInThrottled


class FailureCounts(Protocol):
    """Where failures are counted: the store, or Redis in front of it (shared.sign_ins)."""

    async def add_sign_in_failure(self, keys: Sequence[str], at: dt.datetime) -> None: ...

    async def sign_in_failures(self, key: str, since: dt.datetime) -> list[dt.datetime]: ...

    async def clear_sign_in_failures(self, key: str) -> None: ...


Clock = Callable[[], dt.datetime]


@dataclass(frozen=True)
class _Rule:
    limit: int
    window: dt.timedelta
    locked: bool  # a lockout (says so) rather than a rate


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Identify(Protocol):
    """Who the ERP signs in for a typed name (``Connector.canonical_user``)."""

    async def canonical_user(self, name: str) -> str | None: ...


ALIASES_KEPT = 10_000  # typed names remembered per process after a successful sign-in


class SignInThrottle:
    def __init__(self, store: FailureCounts, limits: SignInLimits, clock: Clock = _utcnow) -> None:
        self.store = store
        self.limits = limits
        self.clock = clock
        self._aliases: OrderedDict[str, str] = OrderedDict()  # typed (lowered) -> ERP user

    @staticmethod
    def _account(user: str) -> str:
        return f"account:{user.strip().lower()}"

    @classmethod
    def keys(cls, user: str, address: str | None) -> tuple[str, str | None]:
        return cls._account(user), f"address:{address}" if address else None

    async def accounts(self, typed: str, erp: Identify) -> tuple[str, ...]:
        """The typed name and the ERP user it names (when the ERP, or an earlier sign-in,
        can say), to count failures on both. The typed name alone when nobody can say."""
        canonical = None
        with contextlib.suppress(ErpAgentError):
            canonical = await erp.canonical_user(typed.strip())
        canonical = canonical or self._aliases.get(typed.strip().lower())
        names = [typed] + ([canonical] if canonical else [])
        return tuple(dict.fromkeys(names))

    def learn(self, typed: str, user: str) -> None:
        """Remember that ``typed`` signed in as ``user`` (for ERPs we cannot ask)."""
        key = typed.strip().lower()
        if key != user.strip().lower():
            self._aliases[key] = user
            self._aliases.move_to_end(key)
            while len(self._aliases) > ALIASES_KEPT:
                self._aliases.popitem(last=False)

    def _keys(self, users: str | Sequence[str], address: str | None) -> list[str]:
        names = [users] if isinstance(users, str) else list(users)
        keys = dict.fromkeys(self._account(n) for n in names)
        return [*keys, *([f"address:{address}"] if address else [])]

    def _rules(self, kind: str) -> list[_Rule]:
        per_minute = (
            self.limits.per_minute_account if kind == "account" else self.limits.per_minute_address
        )
        lockout = dt.timedelta(minutes=self.limits.lockout_minutes)
        # The lockout first: when both apply, its (longer) wait is the one to report.
        return [
            _Rule(self.limits.lockout_failures, lockout, True),
            _Rule(per_minute, dt.timedelta(minutes=1), False),
        ]

    async def check(self, users: str | Sequence[str], address: str | None) -> None:
        """Raise SignInThrottled if this account (any of its names) or address has failed
        too often lately."""
        now = self.clock()
        user = users if isinstance(users, str) else users[0]
        for key in self._keys(users, address):
            kind = key.split(":", 1)[0]
            rules = self._rules(kind)
            since = now - max(rule.window for rule in rules)
            failures = await self.store.sign_in_failures(key, since)
            for rule in rules:
                recent = [at for at in failures if at > now - rule.window]
                if len(recent) < rule.limit:
                    continue
                # Allowed again once enough of these failures have left the window.
                free_at = recent[len(recent) - rule.limit] + rule.window
                wait = max(1, math.ceil((free_at - now).total_seconds()))
                raise SignInThrottled(_message(kind, user, rule, wait), wait)

    async def failed(self, users: str | Sequence[str], address: str | None) -> None:
        await self.store.add_sign_in_failure(self._keys(users, address), self.clock())

    async def succeeded(self, users: str | Sequence[str]) -> None:
        for key in self._keys(users, None):
            await self.store.clear_sign_in_failures(key)


def _message(kind: str, user: str, rule: _Rule, wait: int) -> str:
    who = f"the account {user}" if kind == "account" else "this address"
    minutes = rule.window.total_seconds() / 60
    if rule.locked:
        return (
            f"Sign-in is locked for {who} after {rule.limit} failed attempts in "
            f"{minutes:g} minutes. Try again in {_duration(wait)}, or ask an administrator."
        )
    return (
        f"Too many failed sign-ins for {who} ({rule.limit} in a minute). "
        f"Try again in {_duration(wait)}."
    )


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} second{'s' * (seconds != 1)}"
    return f"{math.ceil(seconds / 60)} minutes"
