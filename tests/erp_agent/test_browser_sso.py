"""Single sign-on in a real Chromium: "Sign in with the ERP" goes to the demo ERP's sign-in page,
then its Confirm Access page (Frappe's OAuth2 provider), back to the agent signed in as that
user with a bearer token; a question's figure then matches the ERP's own REST API."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from server_doubles import LiveServer, serve_in_thread
from test_browser_conversation import _answer, _revenue, _states_all
from test_server_browser import ask, browser, shot

from demo_erp import oauth as erp_oauth
from erp_agent.planner import OfflinePlanner

pytestmark = pytest.mark.browser
__all__ = ["browser"]
CLIENT_ID = "erp-agent-browser"
USER = "admin@demo.local"


@pytest.fixture
def sso_live(demo_erp: Any, tmp_path: Path) -> Iterator[LiveServer]:
    server = serve_in_thread(
        demo_erp.url,
        tmp_path,
        model=lambda rt: OfflinePlanner(rt.catalog, rt.connector.name),
        settings={"oauth": {"client_id": CLIENT_ID}},
    )
    # Registered as an ERPNext administrator would, once the agent's address is known.
    conn = sqlite3.connect(demo_erp.path)
    conn.row_factory = sqlite3.Row
    try:
        erp_oauth.register_client(
            conn, [f"{server.url}/api/auth/sso/callback"], client_id=CLIENT_ID
        )
    finally:
        conn.close()
    yield server
    server.stop()


@pytest.fixture
def sso_page(browser: Browser, sso_live: LiveServer) -> Iterator[Page]:
    context = browser.new_context(base_url=sso_live.url, viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []


def test_sign_in_through_the_erp_and_ask_a_question(sso_page: Page, demo_erp: Any) -> None:
    page = sso_page
    page.goto("/")
    sso = page.locator("#sso")
    expect(sso).to_be_visible()
    # The username field takes any ERP login, not only emails.
    assert page.get_attribute("input[name=user]", "type") == "text"
    sso.click()
    # The ERP's own sign-in page, then its Confirm Access page.
    page.wait_for_url(f"{demo_erp.url}/login**")
    page.fill("#usr", USER)
    page.fill("#pwd", "demo")
    page.click("#login button[type=submit]")
    expect(page.locator("h1")).to_have_text("Confirm Access")
    shot(page, "sso-confirm-access")
    page.click("#allow")
    expect(page.locator("#workspace")).to_be_visible(timeout=20_000)
    expect(page.locator("#who")).to_contain_text(USER)
    shot(page, "sso-signed-in")

    ask(page, "What was our revenue this year?")
    year = dt.date.today().year
    _states_all(_answer(page, 1), _revenue(demo_erp.url, year, "currency"))

    # Sign-out revokes the tokens at the ERP: signing in again needs the ERP once more.
    page.click("#sign-out")
    expect(page.locator("#sign-in")).to_be_visible()
    conn = sqlite3.connect(demo_erp.path)
    try:
        active = conn.execute(
            "select count(*) from __OAuthToken where client = ? and status = 'Active'",
            (CLIENT_ID,),
        ).fetchone()[0]
    finally:
        conn.close()
    assert active == 0
