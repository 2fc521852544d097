"""A proposal made in another chat client opens in the web app from its link, in a real
Chromium: nothing was written until its owner, signed in, confirms it there."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest
from channel_fixtures import ADMIN, OwnERP, agent, issue_key, own_erp, rest_names
from playwright.sync_api import Browser, Page, expect
from server_doubles import LiveServer
from test_mcp_elicitation import mcp_client, planted_lead
from test_server_browser import browser, sign_in

pytestmark = pytest.mark.browser
__all__ = ["agent", "browser", "own_erp"]


@pytest.fixture
def page(browser: Browser, agent: LiveServer) -> Iterator[Page]:
    context = browser.new_context(base_url=agent.url, viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []


def test_a_confirm_link_opens_the_proposal_for_its_owner(
    page: Page, agent: LiveServer, own_erp: OwnERP
) -> None:
    name = "Browser Link Prospect"
    client = openai.OpenAI(base_url=f"{agent.url}/v1", api_key=issue_key(agent.url, ADMIN))
    reply = client.chat.completions.create(
        model="erp-agent", messages=[{"role": "user", "content": f"Create a lead called {name}"}]
    )
    client.close()
    link = re.search(
        r"\((http[^)]+\?proposal=prop_[\w-]+)\)", reply.choices[0].message.content or ""
    )
    assert link, reply.choices[0].message.content
    sign_in(page, ADMIN)
    page.goto(link.group(1))
    expect(page.locator("#workspace")).to_be_visible()
    block = page.locator(".proposal-block")
    expect(block).to_contain_text(name)
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", name]]) == []
    block.get_by_role("button", name="Review and confirm…").click()
    dialog = page.locator("#proposal-dialog")
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog.locator(".result")).to_contain_text("Done")
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", name]])


def test_a_flagged_mcp_proposal_needs_the_warning_acknowledged_on_its_page(
    page: Page, agent: LiveServer, own_erp: OwnERP
) -> None:
    lead = planted_lead(own_erp)
    key = issue_key(agent.url, ADMIN)

    async def propose() -> Any:
        async with mcp_client(agent.url, key) as client:  # a client that cannot be asked
            await client.call_tool("lead.get", {"id": lead})
            made = await client.call_tool("lead.create", {"name": "Mallory Kamau"})
        return made.structured_content

    with ThreadPoolExecutor(1) as pool:  # a loop of its own, beside Playwright's
        proposal = pool.submit(asyncio.run, propose()).result()["proposal"]
    sign_in(page, ADMIN)
    page.goto(f"{agent.url}/?proposal={proposal['id']}")
    block = page.locator(".proposal-block")
    expect(block.locator(".unrequested")).to_contain_text(f"content in Lead {lead}")
    block.get_by_role("button", name="Review and confirm…").click()
    dialog = page.locator("#proposal-dialog")
    confirm = dialog.get_by_role("button", name="Yes, make this change")
    expect(confirm).to_be_disabled()
    dialog.get_by_label("I know this change was not in my request").check()
    confirm.click()
    expect(dialog.locator(".result")).to_contain_text("Done")
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", "Mallory Kamau"]])
