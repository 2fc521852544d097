"""The web app on the bespoke database, in a real Chromium: a Kisumu user signs in, asks for
revenue by branch and for a Mombasa invoice; the page shows Kisumu's figure (equal to independent
SQL) and no other branch's data."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from server_doubles import LiveServer, build_app
from sql_databases import MAPPING, raw, seeded
from test_server_browser import ask, browser, shot, sign_in

from conftest import TEST_TODAY
from erp_agent.config import Settings
from erp_agent.engine.turn import EngineSettings
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.browser
__all__ = ["browser"]


def _serve(url: str, data_dir: Path) -> LiveServer:
    import uvicorn

    from demo_erp.server import bound_socket

    sock = bound_socket()
    port = int(sock.getsockname()[1])
    ready: dict[str, Any] = {}

    async def main() -> None:
        settings = Settings(
            connector="sql", erp_url=url, sql_mapping=str(MAPPING), data_dir=str(data_dir)
        )
        runtime = await Runtime.create(settings, store=MemoryStore())
        original = runtime.engine
        # The demo data is pinned to the test day: "this year" means the seed's year.
        runtime.engine = lambda model, s=None: original(model, EngineSettings(today=TEST_TODAY))  # type: ignore[method-assign]
        harness = build_app(
            runtime, data_dir, model=lambda rt: OfflinePlanner(rt.catalog, rt.connector.name)
        )
        config = uvicorn.Config(harness.app, host="127.0.0.1", port=port, log_level="warning")
        ready["server"], ready["harness"] = uvicorn.Server(config), harness
        try:
            await ready["server"].serve(sockets=[sock])
        finally:
            await harness.switch.aclose()
            await runtime.aclose()

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while "server" not in ready or not ready["server"].started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the erp-agent server did not start")
        time.sleep(0.02)
    return LiveServer(f"http://127.0.0.1:{port}", ready["server"], thread, ready["harness"])


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[tuple[str, LiveServer]]:
    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=20)
    server = _serve(url, tmp_path / "data")
    yield url, server
    server.stop()


def test_kisumu_user_in_the_web_app(browser: Browser, shop: tuple[str, LiveServer]) -> None:
    url, server = shop
    context = browser.new_context(base_url=server.url, viewport={"width": 1200, "height": 900})
    page: Page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        sign_in(page, "kisumu@savanna.test")
        ask(page, "revenue by branch this year")
        reply = page.locator(".msg.agent").nth(0)
        expect(reply.locator(".block").first).to_be_visible(timeout=30_000)
        truth = raw(url, "select sum(net_amount) from invoices where tenant_id = 'SAVANNA' and branch_id = 'Kisumu' "
                         f"and stage = 'posted' and deleted_at is null and issued_on >= '{TEST_TODAY.year}-01-01'")[0][0]  # fmt: skip
        expect(reply).to_contain_text(f"{round(float(truth)):,}")
        expect(reply).to_contain_text("Kisumu")
        expect(reply).not_to_contain_text("Mombasa")
        shot(page, "sql-revenue-by-branch")
        other = raw(url, "select number from invoices where branch_id = 'Mombasa' limit 1")[0][0]
        ask(page, f"show invoice {other}")
        second = page.locator(".msg.agent").nth(1)
        expect(second).to_contain_text("not found", timeout=30_000)
        shot(page, "sql-out-of-scope-invoice")
    finally:
        context.close()
    assert problems == []
