"""Who signs in and how: usernames as well as emails, the user's ERP API key and secret, single
sign-on through the demo ERP's OAuth2 provider (Frappe's endpoints, over real HTTP), the
allowed-roles setting, and refusals for a wrong state, a replayed code and a revoked token."""

from __future__ import annotations

import base64
import hashlib
import re
import sqlite3
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import build_app, client_for, sign_in

from conftest import DemoERP
from demo_erp import oauth as erp_oauth
from erp_agent.config import OAuthSettings, ServerSettings, Settings
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
CALLBACK = "http://testserver/api/auth/sso/callback"


def erp_conn(demo: DemoERP) -> sqlite3.Connection:
    conn = sqlite3.connect(demo.path)
    conn.row_factory = sqlite3.Row
    return conn


def key_pair(demo: DemoERP, user: str) -> tuple[str, str]:
    conn = erp_conn(demo)
    try:
        key = conn.execute('select api_key from "tabUser" where name = ?', (user,)).fetchone()
        secret = conn.execute(
            "select api_secret from __ApiSecrets where user = ?", (user,)
        ).fetchone()
        return str(key[0]), str(secret[0])
    finally:
        conn.close()


def register(demo: DemoERP, **kwargs: Any) -> erp_oauth.Client:
    conn = erp_conn(demo)
    try:
        return erp_oauth.register_client(conn, [CALLBACK], **kwargs)
    finally:
        conn.close()


STORES: dict[Path, MemoryStore] = {}


async def runtime_with(demo: DemoERP, tmp_path: Path, **changes: Any) -> Runtime:
    """A runtime over this test's one store: a second one sees the first's sessions and
    settings, as a restarted server does (the model registry is new each time)."""
    settings = Settings(erp_url=demo.url, data_dir=str(tmp_path), **changes)
    store = STORES.setdefault(tmp_path, MemoryStore())
    return await Runtime.create(settings, store=store)


@pytest.fixture
async def plain(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    runtime = await runtime_with(demo_erp, tmp_path)
    async with client_for(build_app(runtime, tmp_path).app) as client:
        yield client
    await runtime.aclose()


async def test_a_username_or_administrator_signs_in_as_the_erp_user_id(
    plain: httpx.AsyncClient,
) -> None:
    await sign_in(plain, "purchase")
    me = (await plain.get("/api/auth/me")).json()
    assert me["user"] == "purchase@demo.local"
    assert "Purchase User" in me["roles"]
    await plain.post("/api/auth/sign-out")
    await sign_in(plain, "Administrator")
    assert (await plain.get("/api/auth/me")).json()["user"] == "Administrator"


async def test_the_web_form_takes_usernames(plain: httpx.AsyncClient) -> None:
    page = (await plain.get("/")).text
    field = re.search(r'<input name="user"[^>]*>', page)
    assert field is not None
    assert 'type="text"' in field.group(0)


async def test_api_key_sign_in_is_the_keys_user_and_a_wrong_secret_is_refused(
    plain: httpx.AsyncClient, demo_erp: DemoERP
) -> None:
    key, secret = key_pair(demo_erp, "accounts@demo.local")
    csrf = (await plain.get("/api/auth/csrf")).json()["csrf"]
    wrong = await plain.post(
        "/api/auth/sign-in-key",
        json={"api_key": key, "api_secret": "not-it"},
        headers={"X-CSRF-Token": csrf},
    )
    assert wrong.status_code == 401
    assert "refused this API key" in wrong.json()["detail"]
    # A key that cannot travel in a header is a clear 422, not a failure inside the server.
    odd = await plain.post(
        "/api/auth/sign-in-key",
        json={"api_key": "kéy", "api_secret": "sécret"},
        headers={"X-CSRF-Token": csrf},
    )
    assert odd.status_code == 422
    assert (await plain.get("/api/auth/me")).status_code == 401
    ok = await plain.post(
        "/api/auth/sign-in-key",
        json={"api_key": key, "api_secret": secret},
        headers={"X-CSRF-Token": csrf},
    )
    assert ok.status_code == 200, ok.text
    assert ok.json()["user"] == "accounts@demo.local"
    # The session's ERP calls run as that user: the tools the ERP grants accounts@.
    assert (await plain.get("/api/auth/me")).json()["user"] == "accounts@demo.local"


async def test_allowed_roles_refuse_at_sign_in_and_on_every_request(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    open_runtime = await runtime_with(demo_erp, tmp_path)
    async with client_for(build_app(open_runtime, tmp_path).app) as client:
        await sign_in(client, "purchase@demo.local")
        cookies = dict(client.cookies)
    await open_runtime.aclose()
    narrowed = await runtime_with(
        demo_erp, tmp_path, server=ServerSettings(allowed_roles=["Accounts User"])
    )
    async with client_for(build_app(narrowed, tmp_path).app) as client:
        client.cookies.update(cookies)  # the session opened before the setting changed
        refused = await client.get("/api/conversations")
        assert refused.status_code == 403
        assert "none of your ERP roles is allowed here (Accounts User)" in refused.json()["detail"]
        client.cookies.clear()
        csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
        again = await client.post(
            "/api/auth/sign-in",
            json={"user": "purchase@demo.local", "password": "demo"},
            headers={"X-CSRF-Token": csrf},
        )
        assert again.status_code == 403
        await sign_in(client, "accounts@demo.local")
        assert (await client.get("/api/conversations")).status_code == 200
    await narrowed.aclose()


async def _erp_session(erp: httpx.AsyncClient, user: str) -> None:
    reply = await erp.post("/api/method/login", json={"usr": user, "pwd": "demo"})
    assert reply.status_code == 200, reply.text


async def _authorize(agent: httpx.AsyncClient, erp: httpx.AsyncClient) -> str:
    """Start SSO at the agent and approve it at the ERP; the callback URL the ERP sends."""
    start = await agent.get("/api/auth/sso/start")
    assert start.status_code == 302
    authorize = start.headers["location"]
    assert authorize.startswith(f"{erp.base_url}/api/method/frappe.integrations.oauth2.authorize?")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(authorize).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["response_type"] == ["code"]
    page = await erp.get(authorize)
    assert page.status_code == 200
    assert "Confirm Access" in page.text
    action = re.search(r'<form method="post" action="([^"]+)"', page.text)
    assert action is not None
    approved = await erp.post(action.group(1).replace("&amp;", "&"))
    assert approved.status_code == 302, approved.text
    callback = approved.headers["location"]
    assert callback.startswith(CALLBACK + "?code=")
    return callback


@pytest.fixture
async def sso(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    client = register(demo_erp)
    runtime = await runtime_with(
        demo_erp,
        tmp_path,
        # Renew on every request (tokens last an hour): refresh is exercised each time.
        oauth=OAuthSettings(client_id=client.client_id, refresh_margin_seconds=4000),
    )
    async with client_for(build_app(runtime, tmp_path).app) as agent:
        yield agent, demo_erp.url
    await runtime.aclose()


async def test_sso_signs_in_as_the_erp_user_with_a_bearer_token_and_refreshes_it(
    sso: tuple[httpx.AsyncClient, str],
) -> None:
    agent, erp_url = sso
    async with httpx.AsyncClient(base_url=erp_url) as erp:
        guest = await erp.get(
            "/api/method/frappe.integrations.oauth2.authorize",
            params={"client_id": "x", "response_type": "code"},
        )
        assert guest.status_code == 302
        assert guest.headers["location"].startswith("/login?")
        await _erp_session(erp, "sales@demo.local")
        callback = await _authorize(agent, erp)
    done = await agent.get(callback.removeprefix("http://testserver"))
    assert done.status_code == 302, done.text
    me = (await agent.get("/api/auth/me")).json()
    assert me["user"] == "sales@demo.local"
    assert "Sales User" in me["roles"]
    # Every request renews the token (refresh margin above its life); the session keeps going.
    for _ in range(3):
        assert (await agent.get("/api/conversations")).status_code == 200
    options = (await agent.get("/api/auth/options")).json()
    assert options["sso"] is True


async def test_sso_refuses_a_wrong_state_a_replayed_code_and_a_revoked_token(
    sso: tuple[httpx.AsyncClient, str], demo_erp: DemoERP
) -> None:
    agent, erp_url = sso
    async with httpx.AsyncClient(base_url=erp_url) as erp:
        await _erp_session(erp, "sales@demo.local")
        callback = await _authorize(agent, erp)
    forged = re.sub(r"state=[^&]+", "state=forged", callback).removeprefix("http://testserver")
    wrong = await agent.get(forged)
    assert wrong.status_code == 400
    assert "wrong state" in wrong.text
    assert (await agent.get("/api/auth/me")).status_code == 401
    # The pending cookie was spent by the refusal: the real answer cannot be used either.
    late = await agent.get(callback.removeprefix("http://testserver"))
    assert late.status_code == 400
    assert "not started here" in late.text
    # A fresh attempt succeeds; replaying its code afterwards is refused by the ERP.
    async with httpx.AsyncClient(base_url=erp_url) as erp:
        await _erp_session(erp, "sales@demo.local")
        callback = await _authorize(agent, erp)
    pending = agent.cookies.get("erp_agent_sso")
    assert (await agent.get(callback.removeprefix("http://testserver"))).status_code == 302
    agent.cookies.set("erp_agent_sso", pending or "")
    replay = await agent.get(callback.removeprefix("http://testserver"))
    assert replay.status_code == 401
    assert "refused the sign-in code" in replay.text
    # Revoke every token of the user at the ERP: the next request ends the session cleanly.
    conn = erp_conn(demo_erp)
    conn.execute("update __OAuthToken set status = 'Revoked' where user = 'sales@demo.local'")
    conn.commit()
    conn.close()
    ended = await agent.get("/api/conversations")
    assert ended.status_code == 401
    assert ended.json()["detail"] == "Sign in first."


async def test_the_erp_answers_bearer_calls_as_the_token_user_and_401_once_revoked(
    demo_erp: DemoERP,
) -> None:
    """The demo ERP's side alone, as a client library would see it."""
    client = register(demo_erp, skip_authorization=True)
    async with httpx.AsyncClient(base_url=demo_erp.url) as erp:
        await _erp_session(erp, "hr@demo.local")
        verifier = "v" * 50
        challenge = (
            base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
            .decode()
            .rstrip("=")
        )
        auth = await erp.get(
            "/api/method/frappe.integrations.oauth2.authorize",
            params={
                "client_id": client.client_id, "response_type": "code", "scope": "all openid",
                "redirect_uri": CALLBACK, "state": "s1", "code_challenge": challenge,
                "code_challenge_method": "S256",
            },
        )  # fmt: skip
        assert auth.status_code == 302
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(auth.headers["location"]).query)
        assert code["state"] == ["s1"]
        form = {
            "grant_type": "authorization_code", "code": code["code"][0],
            "redirect_uri": CALLBACK, "client_id": client.client_id,
        }  # fmt: skip
        no_verifier = await erp.post("/api/method/frappe.integrations.oauth2.get_token", data=form)
        assert no_verifier.status_code == 400  # and the code is spent
        assert no_verifier.json()["error"] == "invalid_grant"
    async with httpx.AsyncClient(base_url=demo_erp.url) as erp:
        await _erp_session(erp, "hr@demo.local")
        auth = await erp.get(
            "/api/method/frappe.integrations.oauth2.authorize",
            params={
                "client_id": client.client_id, "response_type": "code", "scope": "all openid",
                "redirect_uri": CALLBACK, "code_challenge": challenge,
                "code_challenge_method": "S256",
            },
        )  # fmt: skip
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(auth.headers["location"]).query)
    async with httpx.AsyncClient(base_url=demo_erp.url) as api:
        tokens = await api.post(
            "/api/method/frappe.integrations.oauth2.get_token",
            data=form | {"code": code["code"][0], "code_verifier": verifier},
        )
        assert tokens.status_code == 200, tokens.text
        body = tokens.json()
        assert body["token_type"] == "Bearer"
        assert body["expires_in"] == 3600
        assert body["id_token"].count(".") == 2
        bearer = {"Authorization": f"Bearer {body['access_token']}"}
        who = await api.get("/api/method/frappe.auth.get_logged_user", headers=bearer)
        assert who.json()["message"] == "hr@demo.local"
        profile = await api.get(
            "/api/method/frappe.integrations.oauth2.openid_profile", headers=bearer
        )
        assert profile.json()["email"] == "hr@demo.local"
        assert "HR User" in profile.json()["roles"]
        revoked = await api.post(
            "/api/method/frappe.integrations.oauth2.revoke_token",
            data={"token": body["access_token"], "token_type_hint": "access_token"},
        )
        assert revoked.status_code == 200
        after = await api.get("/api/method/frappe.auth.get_logged_user", headers=bearer)
        assert after.status_code == 401
        assert after.json()["exc_type"] == "AuthenticationError"
