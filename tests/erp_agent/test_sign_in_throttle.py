"""Sign-in throttling: failed sign-ins limited per account and per client address, counted in the
store so every worker sees them; the demo ERP locks accounts the way Frappe does; /metrics is
for administrators (or a configured token) only."""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from server_doubles import build_app, client_for, make_runtime, sign_in

from conftest import TEST_TODAY, DemoERP
from demo_erp.context import Settings as ErpSettings
from demo_erp.server import start_in_thread
from erp_agent.config import Settings, SignInLimits
from erp_agent.errors import SignInThrottled
from erp_agent.runtime import Runtime
from erp_agent.server.throttle import SignInThrottle
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio


def nobody() -> str:
    """An account no other test uses, so counts never leak between tests."""
    return f"guess-{secrets.token_hex(4)}@demo.local"


async def attempt(client: httpx.AsyncClient, user: str, password: str) -> httpx.Response:
    csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
    return await client.post(
        "/api/auth/sign-in",
        json={"user": user, "password": password},
        headers={"X-CSRF-Token": csrf},
    )


@pytest.fixture
async def client(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    async with client_for(build_app(runtime, tmp_path).app) as client:
        yield client
    await runtime.aclose()


async def test_sixth_failure_in_a_minute_is_429_with_retry_after(
    client: httpx.AsyncClient,
) -> None:
    user = nobody()
    statuses = [(await attempt(client, user, "guess")).status_code for _ in range(5)]
    assert statuses == [401] * 5
    throttled = await attempt(client, user, "guess")
    assert throttled.status_code == 429
    assert 1 <= int(throttled.headers["retry-after"]) <= 60
    assert f"Too many failed sign-ins for the account {user}" in throttled.json()["detail"]
    # Other accounts from the same address are not held up by one account's limit.
    assert (await attempt(client, nobody(), "guess")).status_code == 401


async def test_an_address_trying_many_accounts_is_throttled(client: httpx.AsyncClient) -> None:
    for _ in range(20):
        assert (await attempt(client, nobody(), "guess")).status_code == 401
    throttled = await attempt(client, nobody(), "guess")
    assert throttled.status_code == 429
    assert "this address" in throttled.json()["detail"]
    # Even the right password waits: the throttle answers before the ERP is asked.
    assert (await attempt(client, "sales@demo.local", "demo")).status_code == 429


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
async def shared_store(tmp_path: Path) -> AsyncIterator[object]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    await store.migrate()
    yield store
    await store.close()


async def test_lockout_after_20_failures_in_15_minutes(shared_store: object) -> None:
    clock = Clock()
    throttle = SignInThrottle(shared_store, SignInLimits(), clock)  # type: ignore[arg-type]
    user = nobody()
    # 5 a minute is allowed: 20 failures take four minutes.
    for _minute in range(4):
        for _ in range(5):
            await throttle.check(user, None)
            await throttle.failed(user, None)
        clock.now += dt.timedelta(seconds=61)
    with pytest.raises(SignInThrottled, match="locked for the account") as locked:
        await throttle.check(user, None)
    # Locked until the first of the 20 failures is 15 minutes old: 15 min − 4 min 4 s.
    assert locked.value.retry_after == 15 * 60 - 4 * 61
    clock.now += dt.timedelta(seconds=locked.value.retry_after - 1)
    with pytest.raises(SignInThrottled):
        await throttle.check(user, None)
    clock.now += dt.timedelta(seconds=1)
    await throttle.check(user, None)  # free again
    await throttle.succeeded(user)
    assert (
        await shared_store.sign_in_failures(
            throttle.keys(user, None)[0], clock.now - dt.timedelta(days=1)
        )
        == []
    )  # type: ignore[attr-defined]


async def test_every_worker_sees_the_same_counts(demo_erp: DemoERP, tmp_path: Path) -> None:
    """Two server processes' worth of app (each its own runtime) over one store database."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.sqlite'}"
    settings = Settings(erp_url=demo_erp.url, data_dir=str(tmp_path))
    runtimes = [await Runtime.create(settings, store=open_store(url)) for _ in range(2)]
    user = nobody()
    try:
        apps = [build_app(r, tmp_path / f"w{i}").app for i, r in enumerate(runtimes)]
        for i in range(2):
            (tmp_path / f"w{i}").mkdir()
        async with client_for(apps[0]) as first, client_for(apps[1]) as second:
            for i in range(5):
                worker = first if i % 2 == 0 else second
                assert (await attempt(worker, user, "guess")).status_code == 401
            assert (await attempt(first, user, "guess")).status_code == 429
            assert (await attempt(second, user, "guess")).status_code == 429
    finally:
        for runtime in runtimes:
            await runtime.aclose()


# ------------------------------------------------------------------ the demo ERP, like Frappe


@pytest.fixture
def strict_erp(demo_erp: DemoERP) -> Iterator[str]:
    """A demo ERP of its own (its lockouts must not reach the shared one), 3 attempts."""
    settings = ErpSettings(
        db_path=str(demo_erp.path), today=TEST_TODAY, allow_consecutive_login_attempts=3
    )
    server = start_in_thread(settings)
    yield server.url
    server.stop()


def test_demo_erp_locks_an_account_like_frappe(strict_erp: str) -> None:
    with httpx.Client(base_url=strict_erp) as erp:
        for _ in range(3):
            failed = erp.post("/api/method/login", json={"usr": "stock@demo.local", "pwd": "x"})
            assert failed.status_code == 401
            assert failed.json()["message"] == "Invalid login credentials"
        locked = erp.post("/api/method/login", json={"usr": "stock@demo.local", "pwd": "demo"})
        assert locked.status_code == 500
        assert locked.json()["exc_type"] == "SecurityException"
        assert "Your account has been locked and will resume after 60 seconds" in locked.text
        # Another user is unaffected; Administrator is never locked.
        other = erp.post("/api/method/login", json={"usr": "hr@demo.local", "pwd": "demo"})
        assert other.status_code == 200


async def test_the_erps_lockout_reaches_the_user_as_429_in_its_words(
    strict_erp: str, tmp_path: Path
) -> None:
    runtime = await make_runtime(strict_erp, tmp_path)
    try:
        async with client_for(build_app(runtime, tmp_path).app) as client:
            for _ in range(3):
                assert (await attempt(client, "purchase@demo.local", "x")).status_code == 401
            locked = await attempt(client, "purchase@demo.local", "demo")
    finally:
        await runtime.aclose()
    assert locked.status_code == 429
    assert (
        "Your account has been locked and will resume after 60 seconds" in locked.json()["detail"]
    )


# ------------------------------------------------------------------ /metrics


async def test_metrics_need_an_administrator_or_the_token(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    settings = Settings(erp_url=demo_erp.url, data_dir=str(tmp_path), metrics_token="scrape-me")
    from erp_agent.store.memory import MemoryStore

    runtime = await Runtime.create(settings, store=MemoryStore())
    try:
        async with client_for(build_app(runtime, tmp_path).app) as client:
            assert (await client.get("/metrics")).status_code == 401
            wrong = await client.get("/metrics", headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
            scraped = await client.get("/metrics", headers={"Authorization": "Bearer scrape-me"})
            assert scraped.status_code == 200
            assert "erp_agent_http_requests_total" in scraped.text
            await sign_in(client, "sales@demo.local")
            assert (await client.get("/metrics")).status_code == 403
            client.cookies.clear()
            await sign_in(client, "admin@demo.local")
            assert (await client.get("/metrics")).status_code == 200
    finally:
        await runtime.aclose()
