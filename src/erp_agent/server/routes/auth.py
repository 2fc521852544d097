"""Sign in with the ERP user: the password goes to the ERP's login, never into our tables."""

from __future__ import annotations

import contextlib
import datetime as dt
import html
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import BaseModel, Field

from erp_agent.calls.session import Session
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import (
    ErpAgentError,
    ErpAuthenticationError,
    ErpBadResponse,
    ErpRefusal,
    ErpTimeout,
    ErpUnavailable,
    SignInRefused,
    SignInThrottled,
)
from erp_agent.gateway.signin import session_for
from erp_agent.server import oauth
from erp_agent.server.proxy import DIRECT_HOST
from erp_agent.server.recovery import settle_proposals
from erp_agent.server.routes._deps import ADMIN_ROLE, State, User, refuse_unless_allowed
from erp_agent.server.security import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    new_token,
    token_hash,
    web_session_row,
)
from erp_agent.server.state import ServerState

router = APIRouter(prefix="/api/auth", tags=["auth"])
CALLBACK_PATH = "/api/auth/sso/callback"


class SignIn(BaseModel):
    user: str = Field(min_length=1, max_length=200, description="ERP user: email or username.")
    password: str = Field(min_length=1, max_length=500)


class KeySignIn(BaseModel):
    # ERP keys are printable ASCII (they travel in an HTTP header as "token key:secret").
    api_key: str = Field(min_length=1, max_length=200, pattern=r"^[!-9;-~]+$")
    api_secret: str = Field(min_length=1, max_length=500, pattern=r"^[!-~]+$")


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"  # behind a trusted proxy, its X-Forwarded-Proto


def cookie_path(request: Request) -> str:
    return str(request.scope.get("root_path") or "") or "/"


def set_csrf_cookie(response: Response, request: Request, token: str) -> None:
    # Readable by our page script (double submit), never sent cross-site for unsafe methods.
    response.set_cookie(
        CSRF_COOKIE,
        token,
        samesite="lax",
        secure=_secure(request),
        httponly=False,
        path=cookie_path(request),
    )


def _me(user: str, roles: list[str], read_only: bool, csrf: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "user": user,
        "roles": roles,
        "is_admin": ADMIN_ROLE in roles,
        "read_only": read_only,
    }
    if csrf:
        out["csrf"] = csrf
    return out


@router.get("/csrf", summary="Issue a CSRF token (cookie and body) before signing in")
async def csrf(request: Request, response: Response) -> dict[str, str]:
    token = request.cookies.get(CSRF_COOKIE) or new_token()
    set_csrf_cookie(response, request, token)
    return {"csrf": token}


@router.get("/options", summary="How this server lets users sign in")
async def options(state: State) -> dict[str, Any]:
    server = state.runtime.settings.server
    return {
        "password": server.password_sign_in,
        "api_key": server.api_key_sign_in,
        "sso": oauth.enabled(state.runtime.settings),
    }


async def _establish(
    state: ServerState, request: Request, response: Response, session: Session
) -> dict[str, Any]:
    """The web session for a session the ERP accepted: who may use the agent is checked here,
    the credential is sealed, the cookies are set."""
    refuse_unless_allowed(state, session.roles)
    session.read_only = state.read_only
    token, csrf_token = new_token(), new_token()
    now = dt.datetime.now(dt.UTC)
    ttl = dt.timedelta(hours=state.runtime.settings.server.session_hours)
    await state.store.purge_web_sessions(now)
    await state.store.save_web_session(
        web_session_row(session, token, csrf_token, state.vault, now, ttl)
    )
    # Confirms of this user that a crash interrupted, whose own session has ended since.
    with contextlib.suppress(ErpAgentError):  # never a reason to refuse the sign-in
        await settle_proposals(state, session)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(ttl.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=_secure(request),
        path=cookie_path(request),
    )
    set_csrf_cookie(response, request, csrf_token)  # a new token per session (no fixation)
    return _me(session.user, sorted(session.roles), session.read_only, csrf_token)


async def _session_of(state: ServerState, cred: Credential) -> Session:
    runtime = state.runtime
    user = await runtime.connector.whoami(cred)
    if not user or user == "Guest":
        raise SignInRefused("The ERP did not say who this credential belongs to.", 401)
    cred = Credential(user, cred.sid, cred.api_key, cred.api_secret, cred.access_token,
                      cred.refresh_token, cred.expires_at)  # fmt: skip
    return await session_for(
        runtime.connector, runtime.registry, runtime.policy, cred, read_only=state.read_only,
        grants=runtime.grants,
    )  # fmt: skip


@router.post("/sign-in", summary="Sign in with your ERP user (email or username) and password")
async def sign_in(
    body: SignIn, request: Request, response: Response, state: State
) -> dict[str, Any]:
    if not state.runtime.settings.server.password_sign_in:
        raise HTTPException(403, "Password sign-in is turned off here; use single sign-on.")
    address = request.client.host if request.client else None
    # Counted per person: the typed name and the ERP user it names (asked before the password).
    accounts = await state.throttle.accounts(body.user, state.runtime.connector)
    try:
        await state.throttle.check(accounts, address)  # before the password reaches the ERP
    except SignInThrottled as exc:
        raise HTTPException(429, str(exc), {"Retry-After": str(exc.retry_after)}) from exc
    try:
        session = await state.runtime.sign_in(body.user, body.password)
    except ErpAuthenticationError as exc:
        await state.throttle.failed(accounts, address)
        raise HTTPException(401, str(exc)) from exc
    except ErpRefusal as exc:
        await state.throttle.failed(accounts, address)
        # The ERP's own lockout (Frappe's SecurityException) is "slow down", not "wrong password".
        status = 429 if exc.refusal.exc_type == "SecurityException" else 401
        raise HTTPException(status, f"The ERP refused the sign-in: {exc.refusal.message}") from exc
    except ErpBadResponse as exc:
        raise HTTPException(502, str(exc)) from exc
    except ErpTimeout as exc:
        raise HTTPException(504, str(exc)) from exc
    except ErpUnavailable as exc:  # down or failing: never reported as a password
        raise HTTPException(503, str(exc)) from exc
    await state.throttle.succeeded((*accounts, session.user))
    state.throttle.learn(body.user, session.user)
    return await _establish(state, request, response, session)


@router.post("/sign-in-key", summary="Sign in with your ERP API key and secret")
async def sign_in_key(
    body: KeySignIn, request: Request, response: Response, state: State
) -> dict[str, Any]:
    if not state.runtime.settings.server.api_key_sign_in:
        raise HTTPException(403, "API-key sign-in is turned off here.")
    address = request.client.host if request.client else None
    account = f"key:{body.api_key}"
    try:
        await state.throttle.check(account, address)
    except SignInThrottled as exc:
        raise HTTPException(429, str(exc), {"Retry-After": str(exc.retry_after)}) from exc
    cred = Credential.token("", body.api_key, body.api_secret)
    try:
        session = await _session_of(state, cred)
    except (ErpAuthenticationError, ErpRefusal) as exc:
        await state.throttle.failed(account, address)
        raise HTTPException(401, "The ERP refused this API key and secret.") from exc
    except SignInRefused as exc:
        raise HTTPException(exc.status, str(exc)) from exc
    except ErpBadResponse as exc:
        raise HTTPException(502, str(exc)) from exc
    except ErpTimeout as exc:
        raise HTTPException(504, str(exc)) from exc
    except ErpUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc
    await state.throttle.succeeded(account)
    return await _establish(state, request, response, session)


def _callback_url(request: Request, state: ServerState) -> str:
    """The redirect URI the ERP sends the browser back to: the configured one, else the one
    under ERP_AGENT_PUBLIC_URL (production requires it), else — in development — this route on
    the host the request was sent to, never one a forwarded header names."""
    settings = state.runtime.settings
    if settings.oauth.redirect_url:
        return settings.oauth.redirect_url
    if settings.public_url:
        return settings.public_url.rstrip("/") + CALLBACK_PATH
    url = request.url_for("sso_callback")
    direct = request.scope.get(DIRECT_HOST)
    return str(url.replace(netloc=direct) if direct else url)


@router.get("/sso/start", summary="Sign in through the ERP (OAuth2 / OpenID Connect)")
async def sso_start(request: Request, state: State) -> RedirectResponse:
    settings = state.runtime.settings
    if not oauth.enabled(settings):
        raise HTTPException(404, "Single sign-on is not configured (ERP_AGENT_OAUTH_CLIENT_ID).")
    url, pending = oauth.start(settings, state.vault, _callback_url(request, state))
    response = RedirectResponse(url, status_code=302)
    response.set_cookie(
        oauth.PENDING_COOKIE,
        pending,
        max_age=oauth.PENDING_SECONDS,
        httponly=True,
        samesite="lax",  # sent on the ERP's top-level redirect back to us
        secure=_secure(request),
        path=cookie_path(request),
    )
    return response


def _refused_page(message: str, status: int, home: str) -> HTMLResponse:
    text = html.escape(message)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>Sign-in refused</title>"
        f"</head><body><h1>Sign-in refused</h1><p id='sign-in-error'>{text}</p>"
        f"<p><a href='{html.escape(home)}'>Back to the sign-in page</a></p></body></html>"
    )
    return HTMLResponse(page, status_code=status)


@router.get("/sso/callback", name="sso_callback", include_in_schema=False)
async def sso_callback(request: Request, state: State) -> Response:
    home = cookie_path(request).rstrip("/") + "/"
    sealed = request.cookies.get(oauth.PENDING_COOKIE)
    redirect = RedirectResponse(home, status_code=302)
    redirect.delete_cookie(oauth.PENDING_COOKIE, path=cookie_path(request))
    try:
        cred = await oauth.finish(
            state.runtime.settings, state.vault, sealed, dict(request.query_params)
        )
        session = await _session_of(state, cred)
        await _establish(state, request, redirect, session)
    except SignInRefused as exc:
        page = _refused_page(str(exc), exc.status, home)
        page.delete_cookie(oauth.PENDING_COOKIE, path=cookie_path(request))
        return page
    except HTTPException as exc:
        return _refused_page(str(exc.detail), exc.status_code, home)
    except (ErpAuthenticationError, ErpRefusal) as exc:
        return _refused_page(f"The ERP refused the sign-in: {exc}", 401, home)
    except ErpUnavailable as exc:
        return _refused_page(str(exc), 503, home)
    return redirect


@router.post("/sign-out", summary="End this session")
async def sign_out(
    request: Request, response: Response, state: State, user: User
) -> dict[str, bool]:
    await state.store.delete_web_session(user.row.token_hash)
    state.runtime.gateway.lookups.forget(user.session)
    if state.runtime.grants is not None:
        # Signing in again asks the ERP afresh (a user who just had a right changed signs out).
        await state.runtime.grants.forget(user.session.user)
    if user.session.credential.kind == "bearer":
        with contextlib.suppress(ErpAgentError):  # the session here has ended either way
            await oauth.revoke(state.runtime.settings, user.session.credential)
    response.delete_cookie(SESSION_COOKIE, path=cookie_path(request))
    return {"signed_out": True}


@router.get("/me", summary="Who is signed in")
async def me(user: User) -> dict[str, Any]:
    return _me(user.session.user, sorted(user.session.roles), user.session.read_only)


__all__ = ["router", "set_csrf_cookie", "token_hash"]
