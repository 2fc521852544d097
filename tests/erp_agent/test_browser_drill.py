"""Drill-down in a real Chromium (Debian's, at /usr/bin/chromium): a click on a bar of a top-5
chart lists the invoices behind it, as the signed-in user; their count and sum are the bar's,
checked against the ERP's REST API. A cell of the table opens its row the same way, and a link
MCP or the OpenAI-compatible API gives (/?drill=REF) opens for its owner only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from rest_truth import RestERP, cents
from server_doubles import TOP_CUSTOMERS, LiveServer, serve_in_thread
from test_server_browser import browser

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # the Chromium fixture, shared with the other browser tests
COMPANY = "Savanna Trading Ltd"
PERIOD = ["2026-01-01", "2026-11-30"]
CANVAS = ".chart-block canvas"


@pytest.fixture
def live(demo_erp: Any, tmp_path: Path) -> Iterator[LiveServer]:
    server = serve_in_thread(demo_erp.url, tmp_path)
    yield server
    server.stop()


@pytest.fixture
def page(browser: Browser, live: LiveServer) -> Iterator[Page]:
    context = browser.new_context(base_url=live.url, viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    # A refused request (401 before sign-in, 404 for another user's figure) is expected.
    expected = ("status of 401", "status of 404")
    opened.on(
        "console",
        lambda m: (
            problems.append(m.text)
            if m.type == "error" and not any(e in m.text for e in expected)
            else None
        ),
    )
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []


def sign_in(page: Page, user: str, path: str = "/") -> None:
    page.goto(path)
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", "demo")
    page.click("#sign-in button[type=submit]")
    expect(page.locator("#workspace")).to_be_visible()


def truth(demo_erp: Any, customer: str) -> tuple[int, Decimal]:
    """The customer's submitted invoices of the company in the period, from the REST API."""
    rest = RestERP(demo_erp.url, "admin@demo.local")
    try:
        rows = rest.rows(
            "Sales Invoice",
            ["base_grand_total"],
            [["docstatus", "=", 1], ["customer", "=", customer], ["company", "=", COMPANY],
             ["posting_date", "between", PERIOD]],
        )  # fmt: skip
    finally:
        rest.close()
    return len(rows), sum((Decimal(str(r["base_grand_total"])) for r in rows), Decimal(0))


def summary_figures(text: str) -> tuple[int, Decimal]:
    found = re.match(r"([\d,]+) records · ([\d,.]+) KES — the figure, exactly", text)
    assert found, text
    return int(found[1].replace(",", "")), Decimal(found[2].replace(",", ""))


def test_clicking_a_bar_lists_the_invoices_behind_it(page: Page, demo_erp: Any) -> None:
    sign_in(page, "admin@demo.local")
    page.fill("#composer textarea", TOP_CUSTOMERS)
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => window.Chart && Chart.getChart(document.querySelector('{CANVAS}'))",
        timeout=30_000,
    )
    bar = page.evaluate(
        f"""() => {{
          const chart = Chart.getChart(document.querySelector('{CANVAS}'));
          const at = chart.getDatasetMeta(0).data[1].getCenterPoint();
          return {{x: at.x, y: at.y, label: chart.data.labels[1],
                   value: chart.data.datasets[0].data[1]}};
        }}"""
    )
    box = page.locator(CANVAS).bounding_box()
    assert box is not None
    with page.expect_response(lambda r: "/api/drill/" in r.url) as answer:
        page.mouse.click(box["x"] + bar["x"], box["y"] + bar["y"])
    assert answer.value.status == 200
    panel = page.locator(".chart-block + .drill-block")
    expect(panel.locator(".drill-summary")).to_be_visible()
    expect(panel.locator("h3")).to_contain_text(f"Customer {bar['label']}")
    count, total = summary_figures(panel.locator(".drill-summary").inner_text())
    expected_count, expected_total = truth(demo_erp, bar["label"])
    assert count == expected_count
    assert cents(total) == cents(expected_total) == cents(bar["value"])
    # The invoices themselves, each linked to its page in the ERP.
    table = panel.locator(".table-block table")
    shown = table.locator("tbody tr").count()
    assert shown == min(count, 20)
    assert table.locator("tbody tr a[href*='/app/sales-invoice/']").count() == shown
    pager = panel.locator(".pager")
    if count > 20:
        expect(pager).to_contain_text(f"of {count}")

    # A cell of the table opens its row's invoices the same way.
    cell = page.locator(".table-block button.drill").first
    with page.expect_response(lambda r: "/api/drill/" in r.url):
        cell.click()
    first = page.locator(".table-block").first.locator("+ .drill-block .drill-summary")
    expect(first).to_contain_text("the figure, exactly")


def test_a_figure_link_opens_for_its_owner_only(
    page: Page, browser: Browser, live: LiveServer
) -> None:
    sign_in(page, "admin@demo.local")
    page.fill("#composer textarea", TOP_CUSTOMERS)
    page.keyboard.press("Enter")
    bars = page.locator(".chart-block details.chart-drills button.drill")
    expect(bars).to_have_count(5, timeout=30_000)
    ref = bars.first.get_attribute("data-ref")
    assert ref is not None
    assert re.fullmatch(r"res_[\w-]+\.r\d+", ref)
    # The link MCP or the OpenAI-compatible API gives, opened by its owner.
    page.goto(f"/?drill={ref}")
    expect(page.locator(".msg.agent .drill-summary")).to_contain_text("the figure, exactly")
    # Someone else signed in is refused, plainly.
    context = browser.new_context(base_url=live.url)
    other = context.new_page()
    sign_in(other, "sales@demo.local", f"/?drill={ref}")
    expect(other.locator(".msg.agent .error")).to_contain_text(
        f"There is no result {ref.split('.')[0]} of yours"
    )
    context.close()


def test_a_submit_proposal_shows_what_the_erp_will_post(
    browser: Browser, demo_erp: Any, tmp_path: Path
) -> None:
    """The web app's proposal block and its review dialog show the ERP's projection; nothing is
    confirmed here (the shared demo ERP is left as it was)."""
    from conftest import raw
    from erp_agent.models.testing import ScriptedModel

    draft = raw(
        demo_erp,
        "select name from `tabSales Invoice` where docstatus = 0 order by name limit 1",
    )[0]["name"]
    question = f"Submit sales invoice {draft}"

    def model(runtime: Any) -> ScriptedModel:
        return ScriptedModel(
            ScriptedModel.call("sales_invoice.submit", {"id": draft}),
            ScriptedModel.reply("Please confirm the submit."),
        )

    server = serve_in_thread(demo_erp.url, tmp_path, model=model)
    context = browser.new_context(base_url=server.url)
    try:
        page = context.new_page()
        sign_in(page, "admin@demo.local")
        page.fill("#composer textarea", question)
        page.keyboard.press("Enter")
        block = page.locator(".proposal-block .projection")
        expect(block).to_be_visible(timeout=30_000)
        expect(block.locator("h4")).to_have_text(
            "Projected by the ERP: nothing is posted until you confirm"
        )
        expect(block).to_contain_text("the record as of")
        accounts = block.locator("table.projection-lines").first.locator("tbody tr")
        assert accounts.count() >= 2  # the receivable and the income, at least
        expect(block).to_contain_text("Payment schedule")
        page.get_by_role("button", name="Review and confirm…").click()
        expect(page.locator("dialog .projection, .review .projection").first).to_be_visible()
    finally:
        context.close()
        server.stop()
