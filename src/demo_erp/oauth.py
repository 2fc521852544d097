"""Frappe's OAuth2 / OpenID Connect provider (frappe.integrations.oauth2), in small.

Endpoints under ``/api/method/frappe.integrations.oauth2.``: ``authorize`` (a guest is sent to
``/login``; a signed-in user sees the Confirm Access page unless the client skips it),
``approve`` (POST from that page), ``get_token`` (authorization_code with PKCE S256/plain,
refresh_token), ``revoke_token`` (always 200) and ``openid_profile`` (userinfo for a bearer
token). Codes are single use; tokens last ``expires_in`` (3600 s, oauthlib's default) and are
stored hashed, as Frappe v15+ does. API requests with ``Authorization: Bearer`` run as the
token's user; an unknown, expired or revoked token is Frappe's 401 ``AuthenticationError``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import secrets
import sqlite3
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from starlette.responses import HTMLResponse, RedirectResponse, Response

from demo_erp.api.responses import FrappeJSON

PREFIX = "frappe.integrations.oauth2."
ENDPOINTS = ("authorize", "approve", "get_token", "revoke_token", "openid_profile")
TOKEN_SECONDS = 3600
CODE_SECONDS = 600

_SCHEMA = """
create table if not exists __OAuthClient (
  client_id text primary key, client_secret text not null, app_name text not null,
  redirect_uris text not null, default_redirect_uri text not null, scopes text not null,
  skip_authorization integer not null default 0);
create table if not exists __OAuthCode (
  code text primary key, client text not null, user text not null, scopes text not null,
  redirect_uri text not null, code_challenge text, code_challenge_method text, nonce text,
  validity text not null, expires real not null);
create table if not exists __OAuthToken (
  access_hash text primary key, refresh_hash text, client text not null, user text not null,
  scopes text not null, status text not null, expires real not null);
"""


def _ensure(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Client:
    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    skip_authorization: bool
    app_name: str


def register_client(
    conn: sqlite3.Connection,
    redirect_uris: list[str],
    *,
    app_name: str = "erp-agent",
    scopes: str = "all openid",
    skip_authorization: bool = False,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> Client:
    """An OAuth Client document (the desk form's fields); an existing client_id is replaced."""
    _ensure(conn)
    cid = client_id or secrets.token_hex(5)
    secret = client_secret or secrets.token_hex(5)
    conn.execute(
        "insert or replace into __OAuthClient values (?, ?, ?, ?, ?, ?, ?)",
        (cid, secret, app_name, " ".join(redirect_uris), redirect_uris[0], scopes,
         int(skip_authorization)),
    )  # fmt: skip
    conn.commit()
    found = get_client(conn, cid)
    assert found is not None
    return found


def get_client(conn: sqlite3.Connection, client_id: str) -> Client | None:
    _ensure(conn)
    row = conn.execute("select * from __OAuthClient where client_id = ?", (client_id,)).fetchone()
    if row is None:
        return None
    return Client(
        row["client_id"],
        row["client_secret"],
        tuple(str(row["redirect_uris"]).split()),
        tuple(str(row["scopes"]).split()),
        bool(row["skip_authorization"]),
        row["app_name"],
    )


def bearer_user(conn: sqlite3.Connection, token: str) -> str | None:
    """The user of an active, unexpired access token (Frappe's validate_oauth)."""
    _ensure(conn)
    row = conn.execute(
        "select user, status, expires from __OAuthToken where access_hash = ?", (_hash(token),)
    ).fetchone()
    if row is None or row["status"] != "Active" or float(row["expires"]) < time.time():
        return None
    return str(row["user"])


def _error(error: str, description: str, status: int = 400) -> Response:
    """oauthlib's error as Frappe's generate_json_error_response renders it."""
    body = {"description": description, "status_code": status, "error": error}
    return FrappeJSON(body, status_code=status)


def _token_error(error: str, description: str) -> Response:
    return FrappeJSON({"error": error, "error_description": description}, status_code=400)


def _validate_request(
    conn: sqlite3.Connection, args: dict[str, Any]
) -> tuple[Client, list[str]] | Response:
    """oauthlib's validate_authorization_request: client, redirect URI, response type, scopes."""
    client = get_client(conn, str(args.get("client_id") or ""))
    if client is None:
        return _error("invalid_client_id", "Invalid client_id parameter value.")
    redirect_uri = str(args.get("redirect_uri") or client.redirect_uris[0])
    if redirect_uri not in client.redirect_uris:
        return _error("mismatching_redirect_uri", "Mismatching redirect URI.")
    if args.get("response_type") != "code":
        return _error("unsupported_response_type", "Only response_type=code is supported here.")
    scopes = str(args.get("scope") or " ".join(client.scopes)).split()
    if not all(scope in client.scopes for scope in scopes):
        return _error("invalid_scope", "The client may not ask for these scopes.")
    method = str(args.get("code_challenge_method") or "plain").lower()
    if args.get("code_challenge") and method not in ("s256", "plain"):
        return _error("invalid_request", "Transform algorithm not supported.")
    return client, scopes


def _issue_code(
    conn: sqlite3.Connection, client: Client, user: str, scopes: list[str], args: dict[str, Any]
) -> Response:
    code = secrets.token_urlsafe(22)
    redirect_uri = str(args.get("redirect_uri") or client.redirect_uris[0])
    challenge = args.get("code_challenge")
    conn.execute(
        "insert into __OAuthCode values (?, ?, ?, ?, ?, ?, ?, ?, 'Valid', ?)",
        (code, client.client_id, user, " ".join(scopes), redirect_uri, challenge,
         str(args.get("code_challenge_method") or "plain").lower() if challenge else None,
         args.get("nonce"), time.time() + CODE_SECONDS),
    )  # fmt: skip
    conn.commit()
    query = {"code": code}
    if args.get("state"):
        query["state"] = str(args["state"])
    separator = "&" if "?" in redirect_uri else "?"
    return RedirectResponse(
        redirect_uri + separator + urllib.parse.urlencode(query), status_code=302
    )


def _confirm_page(client: Client, scopes: list[str], args: dict[str, Any]) -> Response:
    shown = [s for s in scopes if s != "openid"]
    if "openid" in scopes:
        shown += ["Full Name", "Email", "User Image", "Roles"]
    success = "/api/method/frappe.integrations.oauth2.approve?" + urllib.parse.urlencode(
        {k: v for k, v in args.items() if k not in ("data", "cmd")}, quote_via=urllib.parse.quote
    )
    failure = str(args.get("redirect_uri") or client.redirect_uris[0]) + "?error=access_denied"
    items = "".join(f"<li>{html.escape(s)}</li>" for s in shown)
    page = f"""<!doctype html><html><head><title>Confirm Access</title></head><body>
<h1>Confirm Access</h1>
<p><b>{html.escape(client.app_name)}</b> wants to access the following details from your
account</p><ul>{items}</ul>
<form method="post" action="{html.escape(success)}">
<button type="submit" id="allow">Allow</button>
<a href="{html.escape(failure)}" id="deny">Deny</a></form></body></html>"""
    return HTMLResponse(page)


def _verify_pkce(row: sqlite3.Row, verifier: str | None) -> bool:
    challenge = row["code_challenge"]
    if not challenge:
        return True
    if not verifier:
        return False
    if row["code_challenge_method"] == "s256":
        digest = hashlib.sha256(verifier.encode()).digest()
        computed = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        return hmac.compare_digest(computed, str(challenge))
    return hmac.compare_digest(str(challenge), verifier)


def _client_auth(conn: sqlite3.Connection, args: dict[str, Any]) -> Client | None:
    """client_secret_post, or a public client naming its client_id (PKCE then proves it). An
    Authorization header never reaches here: Frappe reads it as API-key auth first."""
    client = get_client(conn, str(args.get("client_id") or ""))
    if client is None:
        return None
    secret = args.get("client_secret")
    if secret is not None and not hmac.compare_digest(client.client_secret, str(secret)):
        return None
    return client


def _tokens(
    conn: sqlite3.Connection, client: Client, user: str, scopes: str, nonce: str | None
) -> dict[str, Any]:
    access, refresh = secrets.token_urlsafe(22), secrets.token_urlsafe(22)
    conn.execute(
        "insert into __OAuthToken values (?, ?, ?, ?, ?, 'Active', ?)",
        (_hash(access), _hash(refresh), client.client_id, user, scopes,
         time.time() + TOKEN_SECONDS),
    )  # fmt: skip
    conn.commit()
    body: dict[str, Any] = {
        "access_token": access,
        "expires_in": TOKEN_SECONDS,
        "token_type": "Bearer",
        "scope": scopes,
        "refresh_token": refresh,
    }
    if "openid" in scopes.split():
        body["id_token"] = _id_token(client, user, access, nonce)
    return body


def _id_token(client: Client, user: str, access: str, nonce: str | None) -> str:
    """An HS256 JWT signed with the client secret, as Frappe's finalize_id_token makes it."""

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    now = int(time.time())
    at_hash = b64(hashlib.sha256(access.encode()).digest()[:16])
    claims: dict[str, Any] = {
        "aud": client.client_id, "iat": now, "exp": now + TOKEN_SECONDS, "at_hash": at_hash,
        "sub": user, "email": user,
    }  # fmt: skip
    if nonce:
        claims["nonce"] = nonce
    head = b64(json.dumps({"typ": "jwt", "alg": "HS256"}).encode())
    body = b64(json.dumps(claims).encode())
    sig = hmac.new(client.client_secret.encode(), f"{head}.{body}".encode(), hashlib.sha256)
    return f"{head}.{body}.{b64(sig.digest())}"


def get_token(conn: sqlite3.Connection, args: dict[str, Any]) -> Response:
    _ensure(conn)
    client = _client_auth(conn, args)
    if client is None:
        return _token_error("invalid_client", "Client authentication failed.")
    grant = args.get("grant_type")
    if grant == "authorization_code":
        row = conn.execute(
            "select * from __OAuthCode where code = ? and client = ?",
            (str(args.get("code") or ""), client.client_id),
        ).fetchone()
        if row is None or row["validity"] != "Valid" or float(row["expires"]) < time.time():
            return _token_error("invalid_grant", "The authorization code is not valid.")
        if str(args.get("redirect_uri") or row["redirect_uri"]) != row["redirect_uri"]:
            return _token_error("invalid_grant", "Mismatching redirect URI.")
        # Single use, whatever happens next (oauthlib's invalidate_authorization_code).
        conn.execute("update __OAuthCode set validity = 'Invalid' where code = ?", (row["code"],))
        conn.commit()
        if not _verify_pkce(row, args.get("code_verifier")):
            return _token_error("invalid_grant", "The code verifier does not match.")
        return FrappeJSON(_tokens(conn, client, row["user"], row["scopes"], row["nonce"]))
    if grant == "refresh_token":
        refresh = str(args.get("refresh_token") or "")
        row = conn.execute(
            "select * from __OAuthToken where refresh_hash = ? and client = ? and status = 'Active'",
            (_hash(refresh), client.client_id),
        ).fetchone()
        if row is None:
            return _token_error("invalid_grant", "The refresh token is not valid.")
        # oauthlib rotates refresh tokens: the old one is spent.
        conn.execute("update __OAuthToken set refresh_hash = null where refresh_hash = ?",
                     (_hash(refresh),))  # fmt: skip
        return FrappeJSON(_tokens(conn, client, row["user"], row["scopes"], None))
    return _token_error("unsupported_grant_type", f"Grant type {grant!r} is not supported.")


def revoke_token(conn: sqlite3.Connection, args: dict[str, Any]) -> Response:
    _ensure(conn)
    token = _hash(str(args.get("token") or ""))
    hint = args.get("token_type_hint")
    if hint == "refresh_token":
        conn.execute("update __OAuthToken set status = 'Revoked' where refresh_hash = ?", (token,))
    else:
        conn.execute(
            "update __OAuthToken set status = 'Revoked' where access_hash = ? or refresh_hash = ?",
            (token, token),
        )
    conn.commit()
    return FrappeJSON({})  # Frappe answers 200 whether or not the token existed


def openid_profile(conn: sqlite3.Connection, user: str, server_url: str) -> Response:
    row = conn.execute(
        'select name, email, first_name, last_name from "tabUser" where name = ?', (user,)
    ).fetchone()
    roles = [
        r["role"] for r in conn.execute('select role from "tabHas Role" where parent = ?', (user,))
    ]
    first = row["first_name"] if row else user
    last = row["last_name"] if row else None
    return FrappeJSON(
        {
            "sub": None,  # Frappe's sub is the User Social Login id, unset for local users
            "name": " ".join(p for p in (first, last) if p),
            "given_name": first,
            "family_name": last,
            "email": row["email"] if row else None,
            "picture": None,
            "roles": roles,
            "iss": server_url,
        }
    )


def endpoint(
    conn: sqlite3.Connection,
    name: str,
    *,
    method: str,
    user: str,
    args: dict[str, Any],
    url: str,
    server_url: str,
) -> Response:
    """One of ENDPOINTS for ``user`` (Guest when not signed in)."""
    _ensure(conn)
    if name == "authorize":
        if user == "Guest":
            target = urllib.parse.urlsplit(url)
            path = target.path + (f"?{target.query}" if target.query else "")
            return RedirectResponse(
                "/login?" + urllib.parse.urlencode({"redirect-to": path}), status_code=302
            )
        checked = _validate_request(conn, args)
        if isinstance(checked, Response):
            return checked
        client, scopes = checked
        if client.skip_authorization:
            return _issue_code(conn, client, user, scopes, args)
        return _confirm_page(client, scopes, args)
    if name == "approve":
        if method != "POST" or user == "Guest":
            return _error("access_denied", "Sign in and approve with POST.", 403)
        checked = _validate_request(conn, args)
        if isinstance(checked, Response):
            return checked
        return _issue_code(conn, checked[0], user, checked[1], args)
    if name == "get_token":
        return get_token(conn, args)
    if name == "revoke_token":
        return revoke_token(conn, args)
    if user == "Guest":  # openid_profile is not allow_guest
        return FrappeJSON({"exc_type": "PermissionError"}, status_code=403)
    return openid_profile(conn, user, server_url)
