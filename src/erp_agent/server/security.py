"""Web sessions: an opaque HttpOnly cookie, the ERP credential encrypted at rest (Fernet), and
double-submit CSRF tokens bound to the session."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import secrets

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from erp_agent.calls.session import Session
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ConfigError
from erp_agent.store.records import WebSession

SESSION_COOKIE = "erp_agent_session"
CSRF_COOKIE = "erp_agent_csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_TTL = dt.timedelta(hours=12)  # the default of the session_hours setting
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Vault:
    """Encrypts ERP credentials and stored keys; the keys come from settings. Several keys
    rotate: the first seals, every one opens, ``reseal`` moves a value to the first."""

    def __init__(self, key: str | None) -> None:
        self.ephemeral = key is None
        if key is None:
            # Without a configured key, sessions last as long as this process: safe, not durable.
            key = Fernet.generate_key().decode()
        keys = [part.strip() for part in key.split(",") if part.strip()]
        try:
            self._fernet = MultiFernet([Fernet(part.encode()) for part in keys])
        except ValueError as exc:
            raise ConfigError(
                "ERP_AGENT_SESSION_KEY is not a Fernet key (or a comma-separated list of them). "
                "Generate one with "
                '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`.'
            ) from exc
        self.key_count = len(keys)

    def reseal(self, sealed: bytes) -> bytes | None:
        """``sealed`` under the first key; None when no configured key opens it."""
        try:
            return self._fernet.rotate(sealed)
        except InvalidToken:
            return None

    def seal(self, credential: Credential) -> bytes:
        raw = {
            "user": credential.user,
            "sid": credential.sid,
            "api_key": credential.api_key,
            "api_secret": credential.api_secret,
            "access_token": credential.access_token,
            "refresh_token": credential.refresh_token,
            "expires_at": credential.expires_at,
        }
        return self._fernet.encrypt(json.dumps(raw).encode())

    def open(self, sealed: bytes) -> Credential | None:
        try:
            raw = json.loads(self._fernet.decrypt(sealed))
        except (InvalidToken, ValueError):
            return None  # a rotated key ends old sessions instead of failing requests
        return Credential(
            raw["user"],
            raw.get("sid"),
            raw.get("api_key"),
            raw.get("api_secret"),
            raw.get("access_token"),
            raw.get("refresh_token"),
            raw.get("expires_at"),
        )

    def seal_text(self, text: str) -> str:
        return self._fernet.encrypt(text.encode()).decode()

    def open_text(self, sealed: str) -> str | None:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            return None


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_ok(cookie: str | None, header: str | None, bound: str | None) -> bool:
    """The header must repeat the cookie (another site cannot read it) and, once signed in,
    equal the token issued with the session."""
    if not cookie or not header or not hmac.compare_digest(cookie, header):
        return False
    return bound is None or hmac.compare_digest(bound, header)


def web_session_row(
    session: Session,
    token: str,
    csrf: str,
    vault: Vault,
    now: dt.datetime,
    ttl: dt.timedelta = SESSION_TTL,
) -> WebSession:
    return WebSession(
        token_hash=token_hash(token),
        session_id=session.id,
        user=session.user,
        org=session.org,
        roles=sorted(session.roles),
        allowed_tools=sorted(session.allowed_tools),
        csrf=csrf,
        credential=vault.seal(session.credential),
        created_at=now,
        expires_at=now + ttl,
    )


def session_from_row(row: WebSession, credential: Credential, *, read_only: bool) -> Session:
    """The gateway session again; read-only follows the tenant switch as it is now."""
    return Session(
        id=row.session_id,
        user=row.user,
        credential=credential,
        roles=frozenset(row.roles),
        org=row.org,
        allowed_tools=frozenset(row.allowed_tools),
        read_only=read_only,
    )
