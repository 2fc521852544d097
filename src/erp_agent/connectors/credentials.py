"""How a connector proves who the user is to the ERP. Secrets never appear in repr or logs."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Credential:
    """A signed-in user's ERP credential: a session id, or an API key pair.

    ``user`` is the ERP user id. Exactly one of ``sid`` or ``api_key``/``api_secret`` is set.
    """

    user: str
    sid: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    api_secret: str | None = field(default=None, repr=False)

    @classmethod
    def session(cls, user: str, sid: str) -> Credential:
        return cls(user=user, sid=sid)

    @classmethod
    def token(cls, user: str, api_key: str, api_secret: str) -> Credential:
        return cls(user=user, api_key=api_key, api_secret=api_secret)

    @property
    def kind(self) -> str:
        return "session" if self.sid else "token"
