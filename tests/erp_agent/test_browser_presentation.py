"""Results as a reader sees them in a real Chromium (Debian's), at desktop (1200 px) and phone
(390 px) widths: a receivables list shows party, due date, outstanding and age first, visible
without scrolling sideways on a phone, with the other columns one "More columns" away; a line
after a list is its own paragraph; the conversation titles in the sidebar are readable words;
an export is named after what it holds.

Screenshots go to test-artifacts/ (git-ignored)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from server_doubles import LiveServer, ScriptBook, answer, call, last_result_id, serve_in_thread
from test_server_browser import browser

from conftest import TEST_TODAY

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # the Chromium fixture, shared with the other browser tests
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
RECEIVABLES = "Who owes us money and since when"
COMPANY = "Savanna Trading Ltd"
ANSWER = (
    "These customers owe us the most:\n- the list below, oldest first\n- ageing under it\n"
    "Counted: submitted Sales Invoices only."
)
SCRIPTS = {
    RECEIVABLES: [
        call("tools.search", {"query": "accounts receivable report ageing"}),
        call("report.accounts_receivable",
             {"company": COMPANY, "as_of_date": TEST_TODAY.isoformat()}),
        call("display.table", lambda m: {"result_id": last_result_id(m), "title": "Receivables"}),
        answer(ANSWER),
    ],
}  # fmt: skip
FIRST = ["Party", "Due Date", "Outstanding Amount (KES)", "Age (Days)"]


@pytest.fixture
def live(demo_erp: Any, tmp_path: Path) -> Iterator[LiveServer]:
    server = serve_in_thread(demo_erp.url, tmp_path, model=lambda _: ScriptBook(SCRIPTS))
    yield server
    server.stop()


@pytest.fixture
def page(browser: Browser, live: LiveServer) -> Iterator[Page]:
    context = browser.new_context(
        base_url=live.url, viewport={"width": 1200, "height": 900}, accept_downloads=True
    )
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def _visible_without_scrolling(page: Page, header: Any) -> bool:
    box = header.bounding_box()
    width = page.viewport_size["width"] if page.viewport_size else 0
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


def test_a_receivables_list_at_desktop_and_phone_widths(page: Page) -> None:
    page.goto("/")
    page.fill("input[name=user]", "accounts@demo.local")
    page.fill("input[name=password]", "demo")
    page.click("#sign-in button[type=submit]")
    expect(page.locator("#workspace")).to_be_visible()
    page.fill("#composer textarea", RECEIVABLES)
    page.keyboard.press("Enter")
    table = page.locator(".table-block table")
    expect(table).to_be_visible(timeout=30_000)

    headers = table.locator("thead th")
    labels = headers.all_inner_texts()
    assert labels[:4] == FIRST
    assert len(labels) <= 7
    # The ageing: every bucket of the ERP's report under the table, and the weighted age.
    figures = page.locator(".table-block dl.figures dt").all_inner_texts()
    assert figures[:5] == [f"{b} (KES)" for b in
                           ("0-30 days", "31-60 days", "61-90 days", "91-120 days", "121+ days")]  # fmt: skip
    assert "Average age, weighted by amount (days)" in figures
    # A line after a list is a paragraph of its own, not the last bullet's.
    expect(page.locator(".text-block li").last).not_to_contain_text("Counted")
    expect(page.locator(".text-block p", has_text="Counted")).to_have_count(1)
    # The conversation's title in the sidebar reads as words, beside its delete button.
    _readable_title(page)
    table.locator("thead").scroll_into_view_if_needed()
    shot(page, "receivables-desktop")

    more = page.locator(".table-block button.more-columns")
    expect(more).to_contain_text("More columns")
    more.click()
    expect(headers).not_to_have_count(len(labels))
    assert "Voucher Type" in headers.all_inner_texts()
    page.locator(".table-block button.more-columns").click()
    expect(headers).to_have_count(len(labels))

    with page.expect_download() as download:
        page.locator(".table-block .export a", has_text="XLSX").click()
    name = download.value.suggested_filename
    assert name == f"Accounts Receivable – {COMPANY} – {TEST_TODAY.isoformat()}.xlsx", name

    page.set_viewport_size({"width": 390, "height": 844})
    table.scroll_into_view_if_needed()
    for label in FIRST:
        header = headers.filter(has_text=label).first
        assert _visible_without_scrolling(page, header), f"{label} is off screen at 390 px"
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, "the page scrolls sideways at phone width"
    shot(page, "receivables-phone")

    page.click("#toggle-history")
    _readable_title(page)
    shot(page, "conversations-phone")


def _readable_title(page: Page) -> None:
    """The title takes the row (well over a few letters) and stays inside the sidebar, its
    delete button visible beside it."""
    item = page.locator("#conversations li").first
    title, delete = item.locator("button").first, item.locator("button.delete-conversation")
    expect(title).to_have_text(RECEIVABLES)
    expect(delete).to_be_visible()
    panel = page.locator("#history").bounding_box()
    box, cross = title.bounding_box(), delete.bounding_box()
    assert panel is not None
    assert box is not None
    assert cross is not None
    assert box["width"] > 150, box
    assert cross["x"] + cross["width"] <= panel["x"] + panel["width"], (cross, panel)
    assert box["x"] + box["width"] <= cross["x"], (box, cross)
