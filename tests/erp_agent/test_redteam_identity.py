"""Red team: identity hygiene.

- X-Forwarded-Host from the trusted proxy is ignored unless configured, and never makes a single
  sign-on redirect URI; production mode needs ERP_AGENT_PUBLIC_URL.
- Sign-in limits count per ERP user, not per spelling: failures as ``stock@demo.local`` and as
  ``stock`` (the same user) add up, whichever comes first.
- An AWS secret access key (and every other documented secret form) typed in chat is masked
  before it is stored.
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from channel_fixtures import ADMIN, OwnERP, own_erp
from server_doubles import CREATE_LEAD, build_app, client_for, sign_in

from conftest import DemoERP
from erp_agent.config import OAuthSettings, ServerSettings, Settings, SignInLimits
from erp_agent.errors import ConfigError
from erp_agent.masking import mask_secrets
from erp_agent.models.testing import ScriptedModel
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
__all__ = ["own_erp"]
EVIL = "evil.example"


async def _runtime(erp_url: str, tmp_path: Path, **changes: Any) -> Runtime:
    settings = Settings(erp_url=erp_url, data_dir=str(tmp_path), **changes)
    return await Runtime.create(settings, store=MemoryStore())


# ------------------------------------------------------------------ X-Forwarded-Host


def _redirect_uri(reply: httpx.Response) -> str:
    assert reply.status_code == 302, reply.text
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(reply.headers["location"]).query)
    return query["redirect_uri"][0]


@pytest.mark.parametrize("forwarded_host", [False, True])
async def test_sso_never_redirects_to_a_forwarded_host(
    demo_erp: DemoERP, tmp_path: Path, forwarded_host: bool
) -> None:
    runtime = await _runtime(
        demo_erp.url, tmp_path,
        oauth=OAuthSettings(client_id="agent-client"),
        server=ServerSettings(forwarded_host=forwarded_host),
    )  # fmt: skip
    try:
        async with client_for(build_app(runtime, tmp_path).app) as client:
            # The test client's address is 127.0.0.1: a trusted proxy by default.
            reply = await client.get(
                "/api/auth/sso/start",
                headers={"X-Forwarded-Host": EVIL, "X-Forwarded-Proto": "https"},
            )
    finally:
        await runtime.aclose()
    assert _redirect_uri(reply) == "https://testserver/api/auth/sso/callback"


async def test_sso_redirects_under_the_public_url(demo_erp: DemoERP, tmp_path: Path) -> None:
    runtime = await _runtime(
        demo_erp.url, tmp_path,
        oauth=OAuthSettings(client_id="agent-client"),
        public_url="https://agent.example.com/agent/",
        server=ServerSettings(forwarded_host=True),
    )  # fmt: skip
    try:
        async with client_for(build_app(runtime, tmp_path).app) as client:
            reply = await client.get("/api/auth/sso/start", headers={"X-Forwarded-Host": EVIL})
    finally:
        await runtime.aclose()
    assert _redirect_uri(reply) == "https://agent.example.com/agent/api/auth/sso/callback"


async def test_production_mode_needs_the_public_url(demo_erp: DemoERP, tmp_path: Path) -> None:
    runtime = await _runtime(demo_erp.url, tmp_path, server=ServerSettings(mode="production"))
    try:
        with pytest.raises(
            ConfigError, match="ERP_AGENT_MODE=production needs ERP_AGENT_PUBLIC_URL"
        ):
            build_app(runtime, tmp_path)
    finally:
        await runtime.aclose()
    runtime = await _runtime(
        demo_erp.url, tmp_path, server=ServerSettings(mode="production"),
        public_url="https://agent.example.com",
    )  # fmt: skip
    try:
        build_app(runtime, tmp_path)  # starts
    finally:
        await runtime.aclose()


async def _confirm_link_text(erp: OwnERP, tmp_path: Path, forwarded_host: bool) -> str:
    """A proposal made through the OpenAI-compatible API, asked through the trusted proxy with
    X-Forwarded-Host: evil.example; the answer's text with its confirm link."""
    runtime = await _runtime(
        erp.url, tmp_path, server=ServerSettings(forwarded_host=forwarded_host)
    )
    try:
        async with client_for(build_app(runtime, tmp_path).app) as client:
            await sign_in(client, ADMIN)
            issued = await client.post("/api/admin/api-keys", json={"user": ADMIN})
            assert issued.status_code == 200, issued.text
            reply = await client.post(
                "/v1/chat/completions",
                json={"model": "erp-agent", "messages": [{"role": "user", "content": CREATE_LEAD}]},
                headers={
                    "Authorization": f"Bearer {issued.json()['key']}",
                    "X-Forwarded-Host": EVIL,
                },
            )
    finally:
        await runtime.aclose()
    assert reply.status_code == 200, reply.text
    return str(reply.json()["choices"][0]["message"]["content"])


async def test_confirm_links_ignore_x_forwarded_host_unless_configured(
    own_erp: OwnERP, tmp_path: Path
) -> None:
    text = await _confirm_link_text(own_erp, tmp_path, forwarded_host=False)
    assert "http://testserver/?proposal=prop_" in text, text
    assert EVIL not in text
    # Configured (a proxy that sets the header itself): the proxy's host makes the links.
    text = await _confirm_link_text(own_erp, tmp_path / "on", forwarded_host=True)
    assert f"http://{EVIL}/?proposal=prop_" in text, text


# ------------------------------------------------------------------ sign-in limits per person


def _key_pair(demo: DemoERP, user: str) -> tuple[str, str]:
    conn = sqlite3.connect(demo.path)
    try:
        key = conn.execute('select api_key from "tabUser" where name = ?', (user,)).fetchone()
        secret = conn.execute(
            "select api_secret from __ApiSecrets where user = ?", (user,)
        ).fetchone()
    finally:
        conn.close()
    return str(key[0]), str(secret[0])


async def _attempt(client: httpx.AsyncClient, user: str, password: str) -> httpx.Response:
    csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
    return await client.post(
        "/api/auth/sign-in",
        json={"user": user, "password": password},
        headers={"X-CSRF-Token": csrf},
    )


async def _reset_the_erps_own_count(demo: DemoERP, user: str) -> None:
    """A right password at the ERP itself: its own failure count (Frappe's) starts again."""
    async with httpx.AsyncClient(base_url=demo.url) as erp:
        await erp.post("/api/method/login", json={"usr": user, "pwd": "demo"})


@pytest.fixture
async def with_service_user(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The server with a service credential: it can ask the ERP who a typed name is."""
    key, secret = _key_pair(demo_erp, "admin@demo.local")
    runtime = await _runtime(
        demo_erp.url, tmp_path, service_user="admin@demo.local",
        service_api_key=key, service_api_secret=secret,
        sign_in=SignInLimits(per_minute_address=1000),
    )  # fmt: skip
    async with client_for(build_app(runtime, tmp_path).app) as client:
        yield client
    await runtime.aclose()


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("purchase.manager@demo.local", "purchase.manager"),
        ("purchase.manager", "PURCHASE.MANAGER@demo.local"),
    ],
)
async def test_failures_count_per_erp_user_whatever_the_spelling(
    with_service_user: httpx.AsyncClient, demo_erp: DemoERP, first: str, then: str
) -> None:
    try:
        for _ in range(5):
            assert (await _attempt(with_service_user, first, "wrong")).status_code == 401
        # The same person under another spelling: the sixth failure in the minute, refused
        # before the password reaches the ERP (even the right one).
        other = await _attempt(with_service_user, then, "demo")
        assert other.status_code == 429, other.text
        assert other.headers["Retry-After"]
    finally:
        await _reset_the_erps_own_count(demo_erp, "purchase.manager@demo.local")


async def test_without_a_service_user_a_spelling_seen_at_sign_in_is_remembered(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    runtime = await _runtime(demo_erp.url, tmp_path, sign_in=SignInLimits(per_minute_address=1000))
    user, alias = "mombasa.manager@demo.local", "mombasa.manager"
    try:
        async with client_for(build_app(runtime, tmp_path).app) as client:
            assert (await _attempt(client, alias, "demo")).status_code == 200  # learnt
            for _ in range(5):
                assert (await _attempt(client, user, "wrong")).status_code == 401
            assert (await _attempt(client, alias, "demo")).status_code == 429
            # An unknown spelling the server cannot resolve still counts on its own.
            for _ in range(5):
                assert (await _attempt(client, "nobody.at.all", "x")).status_code == 401
            assert (await _attempt(client, "nobody.at.all", "x")).status_code == 429
    finally:
        await runtime.aclose()
        await _reset_the_erps_own_count(demo_erp, user)


# ------------------------------------------------------------------ secrets typed in chat

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"our aws secret is {AWS_SECRET}, use it", AWS_SECRET),
        (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
        (f"AKIAIOSFODNN7EXAMPLE:{AWS_SECRET}", AWS_SECRET),
        ("temporary ASIAIOSFODNN7EXAMPLE key id", "ASIAIOSFODNN7EXAMPLE"),
        ("aws_session_token=FwoGZXIvYXdzEJr//////////wEaDMexample", "FwoGZXIvYXdzEJr"),
        ("my password is Hunter22!", "Hunter22!"),
        ("api_key=abcd1234efgh", "abcd1234efgh"),
        ("sk-ant-api03-abcdefghijklmnopqrstu", "sk-ant-api03-abcdefghijklmnopqrstu"),
        ("Bearer abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz012345"),
        ("0123456789abcde:fedcba987654321", "0123456789abcde:fedcba987654321"),
        ("eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "SflKxwRJSMeKKF2QT4"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
            "MIIEowIBAAKCAQEA",
        ),
    ],
)
def test_every_documented_secret_form_is_masked(text: str, secret: str) -> None:
    masked = mask_secrets(text)
    assert secret not in masked, masked
    assert "[masked]" in masked


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",  # a hex digest
        "Invoice ACC-SINV-2026-00123 for KES 1,234,567.00",
        "https://erp.example.com/app/sales-invoice/ACC-SINV-2026-00001",
        "the secret access to our key account",
    ],
)
def test_ordinary_text_near_those_shapes_is_left_alone(text: str) -> None:
    assert mask_secrets(text) == text


async def test_an_aws_secret_typed_in_chat_is_stored_masked(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    runtime = await _runtime(demo_erp.url, tmp_path)
    try:
        admin = await runtime.sign_in("accounts@demo.local", "demo")
        model = ScriptedModel(ScriptedModel.reply("Please never paste keys here."))
        message = f"store these: AKIAIOSFODNN7EXAMPLE and {AWS_SECRET}"
        response = await runtime.engine(model).run_turn(admin, message)
        turn = await runtime.store.get_turn(response.turn_id)
        conversation = await runtime.store.get_conversation(response.conversation_id)
    finally:
        await runtime.aclose()
    assert turn is not None
    assert conversation is not None
    for kept in (turn.user_message, repr(turn.state), conversation.title):
        assert AWS_SECRET not in kept
        assert "AKIAIOSFODNN7EXAMPLE" not in kept
