"""Secrets and the proxy in front: the session key is required in production mode, rotates with
several keys (sessions and the stored model key re-sealed, nothing silently dropped), session
lifetime is a setting; forwarded headers count only from trusted proxies; the admin console
says whether the model is set by the environment or set there, and goes back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from server_doubles import client_for, sign_in

from conftest import DemoERP
from erp_agent.config import ModelSettings, ServerSettings, Settings
from erp_agent.errors import ConfigError
from erp_agent.models.fake_server import FakeOpenAIServer
from erp_agent.runtime import Runtime
from erp_agent.server import create_app
from erp_agent.server.model_switch import ModelSwitch
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()
MODEL_KEY = "sk-stored-here"


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """A real OpenAI-compatible endpoint on loopback that accepts MODEL_KEY (its base URL)."""
    server = FakeOpenAIServer(api_key=MODEL_KEY, model="gpt-test")
    with server.running() as url:
        yield url


STORES: dict[Path, MemoryStore] = {}


async def runtime_for(demo: DemoERP, tmp_path: Path, **changes: Any) -> Runtime:
    """A runtime over this test's one store: a second one sees the first's sessions and
    settings, as a restarted server does (the model registry is new each time)."""
    settings = Settings(erp_url=demo.url, data_dir=str(tmp_path), **changes)
    store = STORES.setdefault(tmp_path, MemoryStore())
    return await Runtime.create(settings, store=store)


def app_for(runtime: Runtime, tmp_path: Path, key: str | None) -> Any:
    switch = ModelSwitch(lambda: runtime.default_model(), registry=runtime.models)
    return create_app(runtime, switch, session_key=key)


async def test_production_mode_refuses_to_start_without_a_session_key(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    runtime = await runtime_for(demo_erp, tmp_path, server=ServerSettings(mode="production"))
    with pytest.raises(ConfigError, match="ERP_AGENT_MODE=production needs ERP_AGENT_SESSION_KEY"):
        app_for(runtime, tmp_path, None)
    await runtime.aclose()


async def test_no_key_outside_production_is_a_loud_warning(
    demo_erp: DemoERP, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = await runtime_for(demo_erp, tmp_path)
    app_for(runtime, tmp_path, None)
    assert "ERP_AGENT_SESSION_KEY is not set" in caplog.text
    await runtime.aclose()


async def test_rotation_keeps_sessions_and_the_stored_model_key(
    demo_erp: DemoERP, tmp_path: Path, caplog: pytest.LogCaptureFixture, provider: str
) -> None:
    # A new runtime per start: the model registry lives in the process, as in a restart.
    runtime = await runtime_for(demo_erp, tmp_path)
    async with client_for(app_for(runtime, tmp_path, OLD)) as client:
        await sign_in(client, "admin@demo.local")
        stored = await client.put(
            "/api/admin/model",
            json={"provider": "openai", "model": "gpt-test", "base_url": provider,
                  "api_key": MODEL_KEY},
        )  # fmt: skip
        assert stored.status_code == 200, stored.text
        cookies = dict(client.cookies)
        csrf = client.headers["X-CSRF-Token"]

    # A new key alone: the stored model key cannot be opened; it is reported, not dropped.
    await runtime.aclose()
    runtime = await runtime_for(demo_erp, tmp_path)
    async with client_for(app_for(runtime, tmp_path, NEW)) as client:
        client.cookies.update(cookies)
        assert (await client.get("/api/auth/me")).status_code == 401  # sealed with OLD
        await sign_in(client, "admin@demo.local")
        model = (await client.get("/api/admin/model")).json()
        assert model["provider"] == "offline"
        assert model["source"] == "environment"
        assert any("cannot be opened" in p for p in model["problems"])
    assert "cannot be opened with ERP_AGENT_SESSION_KEY" in caplog.text

    # NEW,OLD: the old session and the stored key open again, and are re-sealed with NEW.
    await runtime.aclose()
    runtime = await runtime_for(demo_erp, tmp_path)
    async with client_for(app_for(runtime, tmp_path, f"{NEW},{OLD}")) as client:
        client.cookies.update(cookies)
        client.headers["X-CSRF-Token"] = csrf
        assert (await client.get("/api/auth/me")).json()["user"] == "admin@demo.local"
        model = (await client.get("/api/admin/model")).json()
        assert (model["provider"], model["model"], model["key_set"]) == ("openai", "gpt-test", True)
        assert model["source"] == "admin console"
    # NEW alone again: everything was re-sealed, so the old key can go.
    await runtime.aclose()
    runtime = await runtime_for(demo_erp, tmp_path)
    async with client_for(app_for(runtime, tmp_path, NEW)) as client:
        client.cookies.update(cookies)
        client.headers["X-CSRF-Token"] = csrf
        assert (await client.get("/api/auth/me")).json()["user"] == "admin@demo.local"
        model = (await client.get("/api/admin/model")).json()
        assert model["model"] == "gpt-test"
        assert model["problems"] == []
        # And back to the environment's choice (none here: the offline planner).
        back = await client.delete("/api/admin/model")
        assert back.status_code == 200
        assert (back.json()["source"], back.json()["provider"]) == ("environment", "offline")
    await runtime.aclose()


async def test_the_environment_model_is_shown_as_set_by_environment(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    runtime = await runtime_for(
        demo_erp, tmp_path,
        reasoning_model=ModelSettings(model="env-model", base_url="http://127.0.0.1:9/v1"),
    )  # fmt: skip
    async with client_for(app_for(runtime, tmp_path, NEW)) as client:
        await sign_in(client, "admin@demo.local")
        model = (await client.get("/api/admin/model")).json()
        assert (model["model"], model["source"]) == ("env-model", "environment")
        await client.put("/api/admin/model", json={"provider": "offline"})
        assert (await client.get("/api/admin/model")).json()["source"] == "admin console"
        back = (await client.delete("/api/admin/model")).json()
        assert (back["model"], back["source"]) == ("env-model", "environment")
    await runtime.aclose()


async def test_session_lifetime_is_a_setting(demo_erp: DemoERP, tmp_path: Path) -> None:
    runtime = await runtime_for(demo_erp, tmp_path, server=ServerSettings(session_hours=0.5))
    async with client_for(app_for(runtime, tmp_path, NEW)) as client:
        csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
        reply = await client.post(
            "/api/auth/sign-in",
            json={"user": "sales@demo.local", "password": "demo"},
            headers={"X-CSRF-Token": csrf},
        )
        assert "Max-Age=1800" in reply.headers["set-cookie"]
    await runtime.aclose()


async def _signed_cookie_header(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> httpx.Response:
    csrf = (await client.get("/api/auth/csrf", headers=headers)).json()["csrf"]
    return await client.post(
        "/api/auth/sign-in",
        json={"user": "sales@demo.local", "password": "demo"},
        # Sent by hand: a Secure cookie is not sent back over the test client's plain http.
        headers={"X-CSRF-Token": csrf, "Cookie": f"erp_agent_csrf={csrf}", **headers},
    )


async def test_forwarded_https_counts_only_from_a_trusted_proxy(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    # The test client connects from 127.0.0.1, trusted by default.
    runtime = await runtime_for(demo_erp, tmp_path)
    async with client_for(app_for(runtime, tmp_path, NEW)) as client:
        reply = await _signed_cookie_header(client, forwarded)
        assert reply.status_code == 200
        cookies = reply.headers.get_list("set-cookie")
        assert all("Secure" in c for c in cookies), cookies
        assert reply.headers["strict-transport-security"].startswith("max-age=31536000")
    await runtime.aclose()
    untrusted = await runtime_for(
        demo_erp, tmp_path, server=ServerSettings(trusted_proxies=["10.0.0.0/8"])
    )
    async with client_for(app_for(untrusted, tmp_path, NEW)) as client:
        reply = await _signed_cookie_header(client, forwarded)
        assert reply.status_code == 200
        assert not any("Secure" in c for c in reply.headers.get_list("set-cookie"))
        assert "strict-transport-security" not in reply.headers
    await untrusted.aclose()


def test_a_trusted_proxy_entry_that_is_not_an_address_is_a_clear_error() -> None:
    from erp_agent.server.proxy import parse_networks

    with pytest.raises(ConfigError, match=r"'proxy\.local', which is not an address"):
        parse_networks(["127.0.0.1", "proxy.local"])
    assert dt.timedelta(hours=ServerSettings().session_hours) == dt.timedelta(hours=12)


async def test_policy_and_read_only_say_where_they_come_from_and_go_back(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    runtime = await runtime_for(demo_erp, tmp_path)
    async with client_for(app_for(runtime, tmp_path, NEW)) as client:
        await sign_in(client, "admin@demo.local")
        policy = (await client.get("/api/admin/policy")).json()
        assert policy["source"] == "packaged file"
        changed = await client.put("/api/admin/policy", json={"yaml": policy["yaml"]})
        assert changed.json()["source"] == "admin console"
        back = (await client.delete("/api/admin/policy")).json()
        assert back["source"] == "packaged file"
        assert back["policy"] == policy["policy"]
        assert (await client.get("/api/admin/tenant")).json()["source"] == "environment"
        switched = (await client.put("/api/admin/tenant", json={"read_only": True})).json()
        assert switched == {"read_only": True, "source": "admin console"}
    await runtime.aclose()
    locked = await runtime_for(demo_erp, tmp_path, read_only=True)
    async with client_for(app_for(locked, tmp_path, NEW)) as client:
        await sign_in(client, "admin@demo.local")
        tenant = (await client.put("/api/admin/tenant", json={"read_only": False})).json()
        assert tenant == {"read_only": True, "source": "environment"}  # cannot be lifted here
    await locked.aclose()
