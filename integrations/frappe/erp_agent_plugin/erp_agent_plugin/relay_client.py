"""The HTTP side of the plugin: POST to the erp-agent relay with the organisation key (stdlib
only, so nothing is added to the bench's environment).

Every request that names a user carries the plugin's signed assertion of that user: HMAC-SHA256
over ``["erp-agent relay assertion v1", org, user, ts, nonce]`` (compact JSON), keyed with the
SHA-256 digest of the organisation key — the digest the relay keeps. The relay refuses a request
that is unsigned, signed for another organisation or user, more than five minutes old, or whose
nonce it has seen (see erp-agent's ``relay/assertions.py``)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

VERSION = "erp-agent relay assertion v1"


class RelayError(Exception):
    """The relay refused a request; its message says why."""


def assertion(
    org_key: str, org: str, user: str, *, now: float | None = None, nonce: str | None = None
) -> dict[str, Any]:
    """The signed claim that ``user`` of ``org`` asks, now, once."""
    ts = int(time.time() if now is None else now)
    nonce = nonce or secrets.token_urlsafe(18)
    key = hashlib.sha256(org_key.strip().encode()).digest()
    signed = json.dumps([VERSION, org, user, ts, nonce], separators=(",", ":")).encode()
    sig = hmac.new(key, signed, hashlib.sha256).hexdigest()
    return {"org": org, "user": user, "ts": ts, "nonce": nonce, "sig": sig}


class HttpRelay:
    def __init__(
        self, base_url: str, org_key: str, org: str = "default", timeout: float = 120.0
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.org_key = org_key
        self.org = org  # the organisation the key was issued for
        self.timeout = timeout

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        payload = dict(body)
        if isinstance(payload.get("user"), str):
            payload["assertion"] = assertion(self.org_key, self.org, payload["user"])
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(payload, default=str).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.org_key}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return dict(json.loads(response.read()))
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("detail")
            except ValueError:
                detail = None
            raise RelayError(str(detail or f"the relay answered HTTP {exc.code}")) from exc
