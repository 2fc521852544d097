"""Principals: who the signed-in user is to a bespoke database — tenant, branches, roles.

They come from the principal source the mapping names (a users table or a YAML file), never
from the model or the request. A principal without a tenant or without a branch has no scope
and cannot sign in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import yaml

from erp_agent.connectors.sql.mapping import PrincipalSpec
from erp_agent.errors import ConfigError, ErpAuthenticationError

_ITERATIONS = 120_000


@dataclass(frozen=True)
class Principal:
    user: str
    tenant: str
    branches: tuple[str, ...]
    roles: tuple[str, ...]


def hash_password(password: str, *, salt: str | None = None, iterations: int = _ITERATIONS) -> str:
    """``pbkdf2_sha256$<iterations>$<salt>$<hash>``, the form the principal source stores."""
    salt = salt or secrets.token_hex(8)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
    return f"pbkdf2_sha256${iterations}${salt}${base64.b64encode(digest).decode()}"


def check_password(password: str, stored: str) -> bool:
    try:
        scheme, iterations, salt, expected = stored.split("$", 3)
    except ValueError:
        return False
    if scheme != "pbkdf2_sha256":
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), int(iterations))
    return hmac.compare_digest(base64.b64encode(digest).decode(), expected)


def _split(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return tuple(p.strip() for p in str(value).split(",") if p.strip())


def _principal(user: str, row: dict[str, Any], spec: PrincipalSpec) -> Principal:
    tenant = row.get(spec.tenant)
    branches = _split(row.get(spec.branches))
    if not tenant or not branches:
        missing = "tenant" if not tenant else "branches"
        raise ErpAuthenticationError(
            f"{user} has no scope in this database (no {missing} in the principal source); "
            "an administrator must give them a tenant and at least one branch."
        )
    return Principal(user, str(tenant), branches, _split(row.get(spec.roles)))


class PrincipalSource:
    """Looks principals up in the users table or the principals file."""

    def __init__(self, spec: PrincipalSpec, engine: sa.Engine, table: sa.Table | None) -> None:
        self.spec = spec
        self.engine = engine
        self.table = table
        if spec.file is not None and not Path(spec.file).is_file():
            raise ConfigError(f"The principal file {spec.file} does not exist.")

    def _row(self, user: str) -> dict[str, Any] | None:
        spec = self.spec
        if spec.file is not None:
            raw = yaml.safe_load(Path(spec.file).read_text(encoding="utf-8")) or {}
            users = raw.get("users") if isinstance(raw, dict) else None
            found = (users or {}).get(user)
            return dict(found) if isinstance(found, dict) else None
        assert self.table is not None
        stmt = sa.select(self.table).where(self.table.c[spec.id] == sa.bindparam("user", user))
        with self.engine.connect() as conn:
            row = conn.execute(stmt).mappings().first()
        return dict(row) if row is not None else None

    def authenticate(self, user: str, password: str) -> Principal:
        row = self._row(user)
        stored = str(row.get(self.spec.password_hash) or "") if row else ""
        if row is None or not check_password(password, stored):
            raise ErpAuthenticationError(f"Sign-in failed for {user}: invalid login credentials")
        if self.spec.disabled and row.get(self.spec.disabled):
            raise ErpAuthenticationError(f"Sign-in failed for {user}: the user is disabled")
        return _principal(user, row, self.spec)

    def lookup(self, user: str) -> Principal:
        """The principal as the source says now (scope changes apply on the next call)."""
        row = self._row(user)
        if row is None or (self.spec.disabled and row.get(self.spec.disabled)):
            raise ErpAuthenticationError(f"{user} is no longer a user of this database")
        return _principal(user, row, self.spec)
