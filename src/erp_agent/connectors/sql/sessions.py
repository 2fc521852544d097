"""Sign-in sessions of the sql connector: signed tokens, not server state, so any worker that
shares the key accepts a session another one issued (workers stay stateless)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time

from erp_agent.connectors.credentials import Credential

SESSION_SECONDS = 12 * 3600  # how long a sign-in lasts


class SessionTokens:
    def __init__(self, key: str | None) -> None:
        self._key = (key or secrets.token_hex(32)).encode()

    def _mac(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()

    def issue(self, user: str) -> str:
        body = f"{user}|{int(time.time()) + SESSION_SECONDS}"
        return f"{base64.urlsafe_b64encode(body.encode()).decode()}.{self._mac(body)}"

    def user_of(self, cred: Credential) -> str | None:
        """The user a credential's token was issued to, if it is genuine, theirs and current."""
        encoded, _, mac = (cred.sid or "").partition(".")
        try:
            body = base64.urlsafe_b64decode(encoded.encode()).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        user, _, expires = body.rpartition("|")
        if not hmac.compare_digest(mac, self._mac(body)) or user != cred.user:
            return None
        return user if expires.isdigit() and int(expires) > time.time() else None
