"""The quotation flow in a real Chromium as sales@: the ERP prices the proposal, the user edits
a quantity in the card (the ERP re-validates it: a new proposal), confirms, the created
quotation's link appears in the conversation, and the link opens the document in the ERP.

Screenshots go to test-artifacts/ (git-ignored)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from server_doubles import LiveServer, serve_in_thread
from test_server_browser import browser, shot, sign_in  # noqa: F401 - the shared browser

from erp_agent.planner.offline_model import OfflinePlanner

pytestmark = pytest.mark.browser


@pytest.fixture
def live(demo_erp: Any, tmp_path: Path) -> Iterator[LiveServer]:
    server = serve_in_thread(demo_erp.url, tmp_path, model=lambda rt: OfflinePlanner(rt.catalog))
    yield server
    server.stop()


@pytest.fixture
def page(browser: Browser, live: LiveServer) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(base_url=live.url, viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []


def sql(demo: Any, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(demo.path) as conn:
        return list(conn.execute(query, params))


def test_quotation_priced_by_the_erp_edited_confirmed_and_opened(page: Page, demo_erp: Any) -> None:
    [(customer, item, item_name, rate)] = sql(
        demo_erp,
        "select c.name, ip.item_code, i.item_name, ip.price_list_rate from `tabItem Price` ip "
        "join tabCustomer c on c.default_price_list = ip.price_list join tabItem i on "
        "i.name = ip.item_code where c.territory = 'Nairobi' and i.is_stock_item = 1 "
        "and ip.price_list_rate <> i.standard_rate order by c.name desc, ip.item_code desc limit 1",
    )
    sign_in(page, "sales@demo.local")
    expect(page.locator(".feedback button svg")).to_have_count(0)  # nothing answered yet
    page.fill(
        "#composer textarea",
        f"create a quotation for {customer} for 3 x {item} for Savanna Trading Ltd",
    )
    page.keyboard.press("Enter")
    card = page.locator(".proposal-block").last
    expect(card).to_be_visible(timeout=30000)
    expect(card.locator(".doc-lines")).to_contain_text(item_name)
    expect(card.locator(".doc-lines")).to_contain_text(f"{rate:,.2f}")  # the price list's rate
    expect(card.locator(".doc-head")).to_contain_text(customer)
    expect(page.locator(".feedback button[aria-label=Helpful] svg")).to_be_visible()
    shot(page, "quotation-proposal")

    card.get_by_role("button", name="Review and confirm…").click()
    dialog = page.locator("#proposal-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Quantity of line 1").fill("4")
    expect(dialog.locator(".confirm")).to_be_disabled()  # edited values are not yet the ERP's
    dialog.get_by_role("button", name="Apply edits").click()
    expect(dialog.locator(".result")).to_contain_text("new proposal")
    expect(dialog.locator(".doc-totals")).to_contain_text(f"{4 * rate:,.2f}")
    expect(page.locator(".proposal-block .status").first).to_have_text("superseded")
    shot(page, "quotation-edited")
    dialog.locator(".confirm").click()
    expect(dialog.locator(".close")).to_be_visible()
    dialog.locator(".close").click()
    expect(dialog).to_be_hidden()
    # The dialog's close event moves focus; wait for it rather than race it.
    expect(page.locator("#composer [name=message]")).to_be_focused()

    outcome = page.locator(".msg.outcome a").last
    expect(outcome).to_be_visible()
    quotation = outcome.inner_text()
    [(party, qty, stored_rate)] = sql(
        demo_erp,
        "select q.party_name, i.qty, i.rate from tabQuotation q join `tabQuotation Item` i "
        "on i.parent = q.name where q.name = ?",
        quotation,
    )
    assert (party, qty, stored_rate) == (customer, 4, rate)
    assert outcome.get_attribute("href") == f"{demo_erp.url}/app/quotation/{quotation}"
    shot(page, "quotation-outcome")

    with page.context.expect_page() as opened:
        outcome.click()
    erp = opened.value
    erp.wait_for_load_state()
    expect(erp.locator("#usr")).to_be_visible()  # the ERP asks its own sign-in first
    erp.fill("#usr", "sales@demo.local")
    erp.fill("#pwd", "demo")
    erp.get_by_role("button", name="Sign in").click()
    expect(erp.locator("#doc-name")).to_contain_text(quotation)
    assert erp.url.endswith(f"/app/quotation/{quotation}")
    expect(erp.locator("[data-field=party_name]")).to_have_text(customer)
    expect(erp.locator("table[data-table=items]")).to_contain_text(item)
    shot(erp, "quotation-in-erp")


def test_approval_as_the_manager_and_refused_as_the_buyer(page: Page, demo_erp: Any) -> None:
    pending = [
        name
        for name, owner in sql(
            demo_erp,
            "select name, owner from `tabPurchase Order` where workflow_state = 'Pending Approval' "
            "and docstatus = 0 order by name desc",
        )
        if owner != "purchase.manager@demo.local"
    ]
    order = pending[0]
    sign_in(page, "purchase.manager@demo.local")
    page.fill("#composer textarea", "what is waiting for my approval?")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.agent .text-block").last).to_contain_text(order, timeout=30000)
    page.fill("#composer textarea", f"approve {order}")
    page.keyboard.press("Enter")
    card = page.locator(".proposal-block").last
    expect(card).to_contain_text("Pending Approval")
    expect(card.locator(".diff")).to_contain_text("Approved")
    card.get_by_role("button", name="Review and confirm…").click()
    page.locator("#proposal-dialog .confirm").click()
    page.locator("#proposal-dialog .close").click()
    outcome = page.locator(".msg.outcome").last
    expect(outcome).to_contain_text("Approve done")
    expect(outcome.locator("a")).to_have_attribute(
        "href", f"{demo_erp.url}/app/purchase-order/{order}"
    )
    assert sql(
        demo_erp, "select workflow_state from `tabPurchase Order` where name = ?", order
    ) == [("Approved",)]
    shot(page, "approval-outcome")
    page.click("#sign-out")
    expect(page.locator("#sign-in")).to_be_visible()  # the session has ended before the next
    sign_in(page, "purchase@demo.local")
    other = pending[1]
    page.fill("#composer textarea", f"approve {other}")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.agent .text-block").last).to_contain_text(
        "can't approve", timeout=30000
    )
    expect(page.locator(".proposal-block")).to_have_count(0)
    assert sql(
        demo_erp, "select workflow_state from `tabPurchase Order` where name = ?", other
    ) == [("Pending Approval",)]
