"""Web sessions: an opaque HttpOnly cookie, the ERP credential encrypted at rest (Fernet), and
double-submit CSRF tokens bound to the session."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import secrets

from cryptography.fernet import Fernet, InvalidToken

from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ConfigError
from erp_agent.gateway.session import Session
from erp_agent.store.models import WebSession

SESSION_COOKIE = "erp_agent_session"
CSRF_COOKIE = "erp_agent_csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_TTL = dt.timedelta(hours=12)
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Vault:
    """Encrypts ERP credentials for the session table; the key comes from settings."""

    def __init__(self, key: str | None) -> None:
        if key is None:
            # Without a configured key, sessions last as long as this process: safe, not durable.
            key = Fernet.generate_key().decode()
        try:
            self._fernet = Fernet(key.encode())
        except ValueError as exc:
            raise ConfigError(
                "ERP_AGENT_SESSION_KEY is not a Fernet key. Generate one with "
                '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`.'
            ) from exc

    def seal(self, credential: Credential) -> bytes:
        raw = {
            "user": credential.user,
            "sid": credential.sid,
            "api_key": credential.api_key,
            "api_secret": credential.api_secret,
        }
        return self._fernet.encrypt(json.dumps(raw).encode())

    def open(self, sealed: bytes) -> Credential | None:
        try:
            raw = json.loads(self._fernet.decrypt(sealed))
        except (InvalidToken, ValueError):
            return None  # a rotated key ends old sessions instead of failing requests
        return Credential(raw["user"], raw.get("sid"), raw.get("api_key"), raw.get("api_secret"))

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
    session: Session, token: str, csrf: str, vault: Vault, now: dt.datetime
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
        expires_at=now + SESSION_TTL,
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
