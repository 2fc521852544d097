"""How a connector proves who the user is to the ERP. Secrets never appear in repr or logs."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Credential:
    """A signed-in user's ERP credential: a session id, an API key pair, or an OAuth2 bearer
    token (with its refresh token and expiry, seconds since the epoch).

    ``user`` is the ERP user id. Exactly one of ``sid``, ``api_key``/``api_secret`` or
    ``access_token`` is set.
    """

    user: str
    sid: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    api_secret: str | None = field(default=None, repr=False)
    access_token: str | None = field(default=None, repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None

    @classmethod
    def session(cls, user: str, sid: str) -> Credential:
        return cls(user=user, sid=sid)

    @classmethod
    def token(cls, user: str, api_key: str, api_secret: str) -> Credential:
        return cls(user=user, api_key=api_key, api_secret=api_secret)

    @classmethod
    def bearer(
        cls, user: str, access_token: str, refresh_token: str | None, expires_at: float | None
    ) -> Credential:
        return cls(
            user=user,
            access_token=access_token,
            refresh_token=refresh_token,
            expires_at=expires_at,
        )

    @property
    def kind(self) -> str:
        if self.sid:
            return "session"
        return "bearer" if self.access_token else "token"
