"""Request dependencies: the server state, the signed-in session, CSRF, the admin role."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from erp_agent.calls.session import Session
from erp_agent.errors import ErpAgentError, SignInRefused
from erp_agent.server import oauth, settings_store
from erp_agent.server.proxy import route_path
from erp_agent.server.security import (
    CSRF_COOKIE,
    CSRF_HEADER,
    SESSION_COOKIE,
    UNSAFE_METHODS,
    csrf_ok,
    session_from_row,
    token_hash,
)
from erp_agent.server.state import ServerState
from erp_agent.store.records import WebSession

ADMIN_ROLE = "System Manager"
# Routes authenticated by an API key in a header only, never by the session cookie: a browser
# cannot send that header across sites, so there is nothing for CSRF to forge. Compared with
# the path below the root path (ERP_AGENT_ROOT_PATH or X-Forwarded-Prefix).
BEARER_ONLY = ("/v1/", "/api/relay/")


def get_state(request: Request) -> ServerState:
    state: ServerState = request.app.state.server
    return state


State = Annotated[ServerState, Depends(get_state)]


@dataclass
class Signed:
    session: Session
    row: WebSession

    @property
    def is_admin(self) -> bool:
        return ADMIN_ROLE in self.session.roles


def refuse_unless_allowed(state: ServerState, roles: frozenset[str] | list[str]) -> None:
    """The allowed_roles setting: at sign-in and on every request (a changed setting applies
    to sessions already open)."""
    allowed = state.runtime.settings.server.allowed_roles
    if allowed and not set(allowed) & set(roles):
        raise HTTPException(
            403,
            "You may not use the agent: none of your ERP roles is allowed here ("
            + ", ".join(sorted(allowed))
            + "). Ask your ERP administrator for one of them.",
        )


async def _fresh(state: ServerState, row: WebSession, signed: Signed) -> Signed | None:
    """A bearer token near its expiry renewed (and re-sealed) before the request uses it;
    a revoked or expired refresh token ends the session."""
    settings = state.runtime.settings
    credential = signed.session.credential
    if not oauth.needs_refresh(settings, credential):
        return signed
    try:
        renewed = await oauth.refresh(settings, credential)
    except (SignInRefused, ErpAgentError):
        await state.store.delete_web_session(row.token_hash)
        return None
    row.credential = state.vault.seal(renewed)
    await state.store.update_web_session_credential(row.token_hash, row.credential)
    return Signed(session_from_row(row, renewed, read_only=state.read_only), row)


async def _load(request: Request, state: ServerState) -> Signed | None:
    if getattr(request.state, "signed_loaded", False):
        found: Signed | None = request.state.signed
        return found
    signed = None
    await settings_store.sync(state)  # an administrator's change on another worker applies here
    token = request.cookies.get(SESSION_COOKIE)
    row = await state.store.web_session(token_hash(token)) if token else None
    if row is not None and row.expires_at > dt.datetime.now(dt.UTC):
        credential = state.vault.open(row.credential)
        if credential is not None:
            session = session_from_row(row, credential, read_only=state.read_only)
            signed = await _fresh(state, row, Signed(session, row))
    request.state.signed, request.state.signed_loaded = signed, True
    return signed


async def csrf_guard(request: Request, state: State) -> None:
    """Unsafe methods must repeat the CSRF cookie in a header (double submit)."""
    if request.method not in UNSAFE_METHODS or route_path(request.scope).startswith(BEARER_ONLY):
        return
    signed = await _load(request, state)
    if not csrf_ok(
        request.cookies.get(CSRF_COOKIE),
        request.headers.get(CSRF_HEADER),
        signed.row.csrf if signed else None,
    ):
        raise HTTPException(
            403,
            "Missing or wrong CSRF token: send the erp_agent_csrf cookie's value as X-CSRF-Token.",
        )


async def signed_in_or_none(request: Request, state: ServerState) -> Signed | None:
    return await _load(request, state)


async def signed_in(request: Request, state: State) -> Signed:
    signed = await _load(request, state)
    if signed is None:
        raise HTTPException(401, "Sign in first.")
    refuse_unless_allowed(state, signed.session.roles)
    return signed


async def admin_only(signed: Annotated[Signed, Depends(signed_in)]) -> Signed:
    if not signed.is_admin:
        raise HTTPException(403, f"Only a {ADMIN_ROLE} may use the admin console.")
    return signed


User = Annotated[Signed, Depends(signed_in)]
Admin = Annotated[Signed, Depends(admin_only)]
