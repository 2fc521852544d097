"""API keys for channels without interactive sign-in (MCP, the OpenAI-compatible API, the relay).

A key is shown once when issued; the store keeps its SHA-256 only (a key is 256 random bits, so
a fast hash is enough: nothing to brute-force). A user key carries the user's own ERP
credential (an API key pair the ERP issued for them), encrypted with the server's session key:
every ERP call made with the key is the user's, under their ERP permissions.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from erp_agent.calls.session import CHANNEL_SESSION_PREFIX, Session
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ApiKeyInvalid, ChannelError, ErpAuthenticationError, ErpSessionExpired
from erp_agent.gateway.policy import resolve_allowed_tools
from erp_agent.runtime import Runtime
from erp_agent.store.records import ApiKey

KEY_PREFIX = "eak_"
ORGANISATIONS = "organisations"  # the admin setting that is the registry of organisations
DEFAULT_ORG = "default"
ORG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}")
SESSION_CACHE_SECONDS = 120.0  # roles and tools are re-read from the ERP this often


class Sealer(Protocol):
    """Encrypts ERP credentials at rest (the server's ``Vault``)."""

    def seal(self, credential: Credential) -> bytes: ...

    def open(self, sealed: bytes) -> Credential | None: ...


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Issued:
    record: ApiKey
    key: str  # the bearer key itself: shown once, never stored


class KeyRing:
    """Issues, revokes and resolves keys; a resolved user key becomes a gateway Session."""

    def __init__(
        self, runtime: Runtime, vault: Sealer, read_only: Callable[[], bool] | None = None
    ) -> None:
        self.runtime = runtime
        self.vault = vault
        # The tenant's read-only switch as it is now (an administrator may flip it).
        self.read_only = read_only or (lambda: runtime.settings.read_only)
        self._sessions: dict[str, tuple[float, Session]] = {}

    async def issue_user_key(
        self, admin: Session, user: str, label: str = "", org: str = "default"
    ) -> Issued:
        """A key that acts as ``user``: the ERP issues the user's API key pair (this needs the
        ERP's System Manager), so that no password is kept anywhere."""
        credential = await self.runtime.connector.api_credential(admin.credential, user)
        if credential is None:
            raise ChannelError(
                "This ERP connector cannot issue API credentials for a user; MCP and the "
                "OpenAI-compatible API need them."
            )
        sealed = self.vault.seal(credential).decode()
        # The ERP ended the user's previous secret: every key of theirs uses the new one.
        await self.runtime.store.set_api_key_credentials(user, sealed)
        key = new_key()
        record = ApiKey(
            id=f"key_{secrets.token_urlsafe(8)}", key_hash=key_hash(key), kind="user",
            user=user, org=org, label=label, credential=sealed, created_by=admin.user,
        )  # fmt: skip
        await self.runtime.store.add_api_key(record)
        self._sessions.clear()
        return Issued(record, key)

    # ------------------------------------------------------------ organisations

    async def organisations(self) -> dict[str, dict[str, Any]]:
        """The organisations registered here (``default``, every web session's, always is)."""
        stored = (await self.runtime.store.admin_settings()).get(ORGANISATIONS)
        found: dict[str, dict[str, Any]] = dict(stored) if isinstance(stored, dict) else {}
        found.setdefault(DEFAULT_ORG, {"label": "This server's own users", "created_by": ""})
        return found

    async def register_org(self, org: str, label: str, created_by: str) -> dict[str, Any]:
        """Register an organisation (the relay keys of hosted mode are issued for one)."""
        if not ORG_NAME.fullmatch(org):
            raise ChannelError(
                "An organisation's name is 1 to 100 letters, digits, spaces, dots, dashes or "
                "underscores, starting with a letter or digit."
            )
        found = await self.organisations()
        if org in found:
            raise ChannelError(f"The organisation {org!r} is registered already.")
        entry = {"label": label, "created_by": created_by,
                 "created_at": dt.datetime.now(dt.UTC).isoformat()}  # fmt: skip
        stored = {k: v for k, v in found.items() if k != DEFAULT_ORG}  # that one is built in
        await self.runtime.store.set_admin_setting(ORGANISATIONS, {**stored, org: entry})
        return {"org": org, **entry}

    async def require_org(self, org: str) -> None:
        if org not in await self.organisations():
            raise ChannelError(
                f"There is no organisation {org!r} registered on this server; an administrator "
                "registers it (admin console, or POST /api/admin/organisations) before issuing "
                "its relay key."
            )

    async def issue_org_key(self, org: str, label: str, created_by: str) -> Issued:
        """A relay key for a registered organisation's ERP plugin: it holds no ERP credential
        at all. An organisation nobody registered gets none (ChannelError)."""
        await self.require_org(org)
        key = new_key()
        record = ApiKey(
            id=f"key_{secrets.token_urlsafe(8)}", key_hash=key_hash(key), kind="org",
            user="", org=org, label=label, created_by=created_by,
        )  # fmt: skip
        await self.runtime.store.add_api_key(record)
        return Issued(record, key)

    async def revoke(self, key_id: str) -> bool:
        self._sessions.pop(key_id, None)
        return await self.runtime.store.revoke_api_key(key_id, dt.datetime.now(dt.UTC))

    async def record(self, key: str, kind: str) -> ApiKey:
        """The active key of this kind, or ApiKeyInvalid saying why not."""
        found = await self.runtime.store.api_key_by_hash(key_hash(key.strip()))
        if found is None or found.revoked_at is not None:
            raise ApiKeyInvalid("This API key is not valid or was revoked; ask an administrator for a new one.")  # fmt: skip
        if found.kind != kind:
            wanted = "a user key" if kind == "user" else "an organisation (relay) key"
            raise ApiKeyInvalid(f"This is not {wanted}; the administrator issues one in the admin console.")  # fmt: skip
        return found

    async def session(self, key: str) -> Session:
        """The gateway session of a user key: the user's roles and tools as the ERP grants
        them now (cached for a short while). A resolution that fails — the ERP down, failing
        or answering something that is not its API — raises and leaves nothing cached, so the
        next request asks the ERP again; a session granted no tool at all is not kept either
        (an ERP that answered oddly must not strip a user of their tools for minutes)."""
        record = await self.record(key, "user")
        cached = self._sessions.get(record.id)
        if cached is not None and time.monotonic() - cached[0] < SESSION_CACHE_SECONDS:
            return cached[1]
        credential = self.vault.open(record.credential.encode()) if record.credential else None
        if credential is None:
            raise ApiKeyInvalid(
                "This API key cannot be used: the server's session key changed since it was "
                "issued. Ask an administrator for a new key."
            )
        session = await self.session_for(credential, record.id, record.org)
        if session.allowed_tools:
            self._sessions[record.id] = (time.monotonic(), session)
        return session

    async def session_for(self, credential: Credential, key_id: str, org: str) -> Session:
        runtime = self.runtime
        try:
            roles = frozenset(await runtime.connector.roles(credential))
            allowed = await resolve_allowed_tools(
                runtime.connector, credential, roles, runtime.registry, runtime.policy,
                read_only=self.read_only(), grants=runtime.grants,
            )  # fmt: skip
        except (ErpAuthenticationError, ErpSessionExpired) as exc:
            raise ApiKeyInvalid(
                f"The ERP no longer accepts the credential of {credential.user} (the user may "
                "have been deleted or disabled, or their ERP keys regenerated). Ask an "
                "administrator for a new key."
            ) from exc
        return Session(
            id=f"{CHANNEL_SESSION_PREFIX}{key_id}", user=credential.user, credential=credential,
            roles=roles, org=org, allowed_tools=allowed, read_only=self.read_only(),
        )  # fmt: skip
