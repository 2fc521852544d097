"""The plugin's signed assertion of who asks: every relay request names its user, and the plugin
signs that claim with its organisation key, so the relay acts only on claims made just now, once,
by the holder of the key.

    "assertion": {"org": "acme", "user": "kisumu.manager@acme.example", "ts": 1764540000,
                  "nonce": "<16+ random characters>", "sig": "<hex HMAC-SHA256>"}

``sig`` is HMAC-SHA256 over the JSON array ``["erp-agent relay assertion v1", org, user, ts,
nonce]`` (compact separators, ASCII), keyed with the SHA-256 digest of the organisation key —
the digest the server keeps instead of the key (``channels.keys.key_hash``). The relay refuses a
request whose assertion is missing, names another organisation or another user than the body,
is more than ``WINDOW_SECONDS`` from the server's clock, does not verify, or reuses a nonce
(remembered for twice the window: in Redis when configured, so any worker refuses a replay).
The plugin's copy of ``sign`` is ``erp_agent_plugin.relay_client.assertion`` (stdlib only).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from erp_agent.coordination.redis_link import RedisLink
from erp_agent.errors import ChannelError
from erp_agent.store.records import ApiKey

VERSION = "erp-agent relay assertion v1"
WINDOW_SECONDS = 300  # how far a signing time may be from the server's clock, either way
NONCES_KEPT = 100_000  # per process, when there is no Redis


class AssertionRefused(ChannelError):
    """A relay request without a valid, fresh, first-use assertion of its user."""


def signing_key(org_key: str) -> bytes:
    return hashlib.sha256(org_key.strip().encode()).digest()


def message(org: str, user: str, ts: int, nonce: str) -> bytes:
    return json.dumps([VERSION, org, user, ts, nonce], separators=(",", ":")).encode()


def sign(key: bytes, org: str, user: str, ts: int, nonce: str) -> str:
    return hmac.new(key, message(org, user, ts, nonce), hashlib.sha256).hexdigest()


def _refused(why: str) -> AssertionRefused:
    return AssertionRefused(
        f"{why} Nothing was run. The ERP plugin signs each request with the organisation key "
        "(see docs/channels.md, 'Protocol safety'); update it if it is older."
    )


class Assertions:
    def __init__(self, redis: RedisLink | None = None, clock: Callable[[], float] = time.time):
        self.redis = redis
        self.clock = clock
        self._seen: dict[str, float] = {}

    async def verify(self, key: ApiKey, body: Mapping[str, Any]) -> str:
        """The user the request may act for; AssertionRefused saying why not."""
        raw = body.get("assertion")
        if not isinstance(raw, Mapping):
            raise _refused("This relay request carries no signed assertion of its user.")
        org, user, ts, nonce, sig = (raw.get(k) for k in ("org", "user", "ts", "nonce", "sig"))
        if not (
            isinstance(org, str)
            and isinstance(user, str)
            and isinstance(ts, int)
            and isinstance(nonce, str)
            and 16 <= len(nonce) <= 128
            and isinstance(sig, str)
        ):
            raise _refused("The assertion needs org, user, ts (whole seconds), nonce and sig.")
        if org != key.org:
            raise _refused(f"The assertion is for the organisation {org!r}, not this key's.")
        if user != body.get("user"):
            raise _refused("The assertion names another user than the request.")
        skew = self.clock() - ts
        if abs(skew) > WINDOW_SECONDS:
            raise _refused(
                f"The assertion was signed {abs(skew):.0f} s {'ago' if skew > 0 else 'ahead'}; "
                f"more than {WINDOW_SECONDS} s from this server's clock (check the ERP's clock)."
            )
        expected = sign(bytes.fromhex(key.key_hash), org, user, ts, nonce)
        if not hmac.compare_digest(expected, sig):
            raise _refused("The assertion's signature does not verify with this key.")
        if not await self._first_use(f"{key.id}:{nonce}"):
            raise _refused("This assertion was used before (a replayed request).")
        return user

    async def _first_use(self, token: str) -> bool:
        keep = 2 * WINDOW_SECONDS
        if self.redis is not None:
            try:
                fresh = await self.redis.client.set(
                    self.redis.key("relay-nonce", token), "1", nx=True, ex=keep
                )
                return bool(fresh)
            except Exception as exc:  # Redis away: this process alone remembers, meanwhile
                self.redis.degraded("relay replay protection", exc)
        now = self.clock()
        if len(self._seen) >= NONCES_KEPT:
            self._seen = {t: until for t, until in self._seen.items() if until > now}
        if self._seen.get(token, 0.0) > now:
            return False
        self._seen[token] = now + keep
        return True
