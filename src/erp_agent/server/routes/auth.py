"""Sign in with the ERP user: the password goes to the ERP's login, never into our tables."""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any

from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import BaseModel, Field

from erp_agent.errors import (
    ErpAgentError,
    ErpAuthenticationError,
    ErpBadResponse,
    ErpRefusal,
    ErpUnavailable,
    SignInThrottled,
)
from erp_agent.server.recovery import settle_proposals
from erp_agent.server.routes._deps import ADMIN_ROLE, State, User
from erp_agent.server.security import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    SESSION_TTL,
    new_token,
    token_hash,
    web_session_row,
)

router = APIRouter(prefix="/api/auth", tags=["auth"])


class SignIn(BaseModel):
    user: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=500)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_csrf_cookie(response: Response, request: Request, token: str) -> None:
    # Readable by our page script (double submit), never sent cross-site for unsafe methods.
    response.set_cookie(
        CSRF_COOKIE, token, samesite="lax", secure=_secure(request), httponly=False, path="/"
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


@router.post("/sign-in", summary="Sign in with your ERP user and password")
async def sign_in(
    body: SignIn, request: Request, response: Response, state: State
) -> dict[str, Any]:
    address = request.client.host if request.client else None
    try:
        await state.throttle.check(body.user, address)  # before the password reaches the ERP
    except SignInThrottled as exc:
        raise HTTPException(429, str(exc), {"Retry-After": str(exc.retry_after)}) from exc
    try:
        session = await state.runtime.sign_in(body.user, body.password)
    except ErpAuthenticationError as exc:
        await state.throttle.failed(body.user, address)
        raise HTTPException(401, str(exc)) from exc
    except ErpRefusal as exc:
        await state.throttle.failed(body.user, address)
        # The ERP's own lockout (Frappe's SecurityException) is "slow down", not "wrong password".
        status = 429 if exc.refusal.exc_type == "SecurityException" else 401
        raise HTTPException(status, f"The ERP refused the sign-in: {exc.refusal.message}") from exc
    except ErpBadResponse as exc:
        raise HTTPException(502, str(exc)) from exc
    except ErpUnavailable as exc:  # down, timing out or failing: never reported as a password
        raise HTTPException(503, str(exc)) from exc
    await state.throttle.succeeded(body.user)
    session.read_only = state.read_only
    token, csrf_token = new_token(), new_token()
    now = dt.datetime.now(dt.UTC)
    await state.store.purge_web_sessions(now)
    await state.store.save_web_session(
        web_session_row(session, token, csrf_token, state.vault, now)
    )
    # Confirms of this user that a crash interrupted, whose own session has ended since.
    with contextlib.suppress(ErpAgentError):  # never a reason to refuse the sign-in
        await settle_proposals(state, session)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(SESSION_TTL.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=_secure(request),
        path="/",
    )
    set_csrf_cookie(response, request, csrf_token)  # a new token per session (no fixation)
    return _me(session.user, sorted(session.roles), session.read_only, csrf_token)


@router.post("/sign-out", summary="End this session")
async def sign_out(
    request: Request, response: Response, state: State, user: User
) -> dict[str, bool]:
    await state.store.delete_web_session(user.row.token_hash)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return {"signed_out": True}


@router.get("/me", summary="Who is signed in")
async def me(user: User) -> dict[str, Any]:
    return _me(user.session.user, sorted(user.session.roles), user.session.read_only)


__all__ = ["router", "set_csrf_cookie", "token_hash"]
