"""Single sign-on with the ERP's OAuth2 / OpenID Connect provider (Frappe's
``frappe.integrations.oauth2``): authorization code with PKCE (S256).

``start`` makes the state, the PKCE verifier and a nonce, seals them into a short-lived cookie
(nothing is stored server-side) and gives the ERP's authorize URL. ``finish`` checks the state
against that cookie, exchanges the code (once: the ERP refuses a replayed one) and returns a
bearer credential. ``refresh`` renews it before it expires; ``revoke`` ends it at sign-out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

import httpx

from erp_agent.config import Settings
from erp_agent.connectors.credentials import Credential
from erp_agent.errors import ErpUnavailable, SignInRefused
from erp_agent.server.security import Vault

METHOD = "/api/method/frappe.integrations.oauth2."
PENDING_COOKIE = "erp_agent_sso"
PENDING_SECONDS = 600  # the ERP's sign-in page and the way back must fit in this


@dataclass(frozen=True)
class Pending:
    state: str
    verifier: str
    nonce: str
    redirect_uri: str
    created: float


def enabled(settings: Settings) -> bool:
    return bool(settings.oauth.client_id)


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _public_erp(settings: Settings) -> str:
    return (settings.oauth.erp_public_url or settings.erp_url).rstrip("/")


def start(settings: Settings, vault: Vault, redirect_uri: str) -> tuple[str, str]:
    """(the ERP's authorize URL, the sealed cookie value that remembers this attempt)."""
    pending = Pending(
        state=secrets.token_urlsafe(24),
        verifier=secrets.token_urlsafe(48),
        nonce=secrets.token_urlsafe(16),
        redirect_uri=settings.oauth.redirect_url or redirect_uri,
        created=time.time(),
    )
    query = {
        "client_id": settings.oauth.client_id or "",
        "response_type": "code",
        "redirect_uri": pending.redirect_uri,
        "scope": settings.oauth.scopes,
        "state": pending.state,
        "nonce": pending.nonce,
        "code_challenge": _challenge(pending.verifier),
        "code_challenge_method": "S256",
    }
    url = f"{_public_erp(settings)}{METHOD}authorize?" + urllib.parse.urlencode(
        query, quote_via=urllib.parse.quote
    )
    return url, vault.seal_text(json.dumps(pending.__dict__))


def _pending(vault: Vault, sealed: str | None) -> Pending:
    raw = vault.open_text(sealed) if sealed else None
    if raw is None:
        raise SignInRefused(
            "This sign-in was not started here or has expired: start it again from the "
            "agent's sign-in page (cookies must be allowed)."
        )
    pending = Pending(**json.loads(raw))
    if time.time() - pending.created > PENDING_SECONDS:
        raise SignInRefused("This sign-in took longer than 10 minutes; start it again.")
    return pending


def _client_args(settings: Settings) -> dict[str, str]:
    args = {"client_id": settings.oauth.client_id or ""}
    if settings.oauth.client_secret is not None:
        args["client_secret"] = settings.oauth.client_secret.get_secret_value()
    return args


async def _post(settings: Settings, name: str, form: dict[str, str]) -> httpx.Response:
    url = f"{settings.erp_url.rstrip('/')}{METHOD}{name}"
    try:
        async with httpx.AsyncClient(timeout=settings.erp_timeout) as http:
            return await http.post(url, data=form)
    except httpx.HTTPError as exc:
        raise ErpUnavailable(
            f"Cannot reach the ERP's sign-in service at {url} ({type(exc).__name__})"
        ) from exc


def _tokens(response: httpx.Response, what: str) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ErpUnavailable(
            f"The ERP answered the {what} with HTTP {response.status_code}, not JSON"
        )
    if response.status_code != 200 or "access_token" not in body:
        reason = body.get("error_description") or body.get("description") or body.get("error")
        raise SignInRefused(
            f"The ERP refused the {what} ({reason or response.status_code}). "
            "Sign in again from the agent's sign-in page.",
            401,
        )
    return body


def _credential(user: str, body: dict[str, Any]) -> Credential:
    expires_in = float(body.get("expires_in") or 3600)
    return Credential.bearer(
        user, str(body["access_token"]), body.get("refresh_token"), time.time() + expires_in
    )


async def finish(
    settings: Settings, vault: Vault, sealed: str | None, query: dict[str, str]
) -> Credential:
    """The bearer credential for the callback's ``code``; its user is still unknown ("")."""
    pending = _pending(vault, sealed)
    if query.get("error"):
        raise SignInRefused(
            f"The ERP did not grant access ({query['error']}); nothing was signed in.", 403
        )
    if not hmac.compare_digest(query.get("state", ""), pending.state):
        raise SignInRefused(
            "The sign-in answer does not belong to this browser's sign-in (wrong state); "
            "nothing was signed in. Start again from the agent's sign-in page."
        )
    code = query.get("code")
    if not code:
        raise SignInRefused("The ERP sent no authorization code; start the sign-in again.")
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": pending.redirect_uri,
        "code_verifier": pending.verifier,
        **_client_args(settings),
    }
    return _credential("", _tokens(await _post(settings, "get_token", form), "sign-in code"))


def needs_refresh(settings: Settings, cred: Credential) -> bool:
    if cred.kind != "bearer" or cred.expires_at is None:
        return False
    return cred.expires_at - time.time() < settings.oauth.refresh_margin_seconds


async def refresh(settings: Settings, cred: Credential) -> Credential:
    """A new access token (and refresh token) for ``cred``; SignInRefused when the ERP says
    the refresh token was revoked or has expired."""
    if not cred.refresh_token:
        raise SignInRefused("Your single sign-on has expired; sign in again.", 401)
    form = {"grant_type": "refresh_token", "refresh_token": cred.refresh_token}
    body = _tokens(await _post(settings, "get_token", form | _client_args(settings)), "renewal")
    return _credential(cred.user, body)


async def revoke(settings: Settings, cred: Credential) -> None:
    """End the tokens at the ERP (sign-out); Frappe answers 200 whatever the token was."""
    for token, hint in ((cred.refresh_token, "refresh_token"), (cred.access_token, "access_token")):
        if token:
            await _post(settings, "revoke_token", {"token": token, "token_type_hint": hint})
