"""A new user's five-turn conversation in the web app, in a real Chromium, with the offline
planner (no model key): a question, a follow-up, a breakdown, a chart and an export. Every
figure on the page and in the downloaded workbook is checked against the ERP's own REST API
(evals.truth: Sales Invoices, net_total, docstatus 1, per currency or branch), never through the
agent's code."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from playwright.sync_api import Browser, Locator, Page, expect
from server_doubles import LiveServer, serve_in_thread
from test_server_browser import ask, browser, shot, sign_in

from erp_agent.evals.score import figure_present
from erp_agent.evals.spec import Query
from erp_agent.evals.truth import ErpTruth
from erp_agent.planner import OfflinePlanner

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # the Chromium fixture, shared with the other browser tests
ADMIN = "admin@demo.local"


@pytest.fixture
def offline_live(demo_erp: Any, tmp_path: Path) -> Iterator[LiveServer]:
    server = serve_in_thread(
        demo_erp.url, tmp_path, model=lambda rt: OfflinePlanner(rt.catalog, rt.connector.name)
    )
    yield server
    server.stop()


@pytest.fixture
def offline_page(browser: Browser, offline_live: LiveServer) -> Iterator[Page]:
    context = browser.new_context(
        base_url=offline_live.url, viewport={"width": 1200, "height": 900}, accept_downloads=True
    )
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []


def _revenue(erp_url: str, year: int, by: str) -> list[Any]:
    """Net sales of submitted Sales Invoices in ``year``, one figure per ``by`` value."""
    query = Query.model_validate({
        "op": "sum", "doctype": "Sales Invoice", "field": "net_total", "docstatus": 1,
        "group_by": [by], "filters": [["posting_date", "between", [f"{year}-01-01", f"{year}-12-31"]]],
    })  # fmt: skip

    async def compute() -> list[Any]:
        truth = ErpTruth(erp_url, "demo", dt.date.today())
        try:
            return await truth.figures(ADMIN, query, None)
        finally:
            await truth.aclose()

    # Playwright's sync API keeps an event loop on this thread: the truth runs on its own.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, compute()).result()


def _answer(page: Page, turn: int) -> Locator:
    """The agent's reply to the ``turn``-th message, once it has arrived."""
    reply = page.locator(".msg.agent").nth(turn - 1)
    expect(reply.locator(".block").first).to_be_visible(timeout=30_000)
    return reply


def _states_all(reply: Locator, figures: list[Any]) -> None:
    text = reply.inner_text()
    missing = [f for f in figures if not figure_present(text, f)]
    assert figures
    assert not missing, (missing, text[:500])


def test_a_new_user_holds_a_five_turn_conversation(offline_page: Page, demo_erp: Any) -> None:
    page = offline_page
    year = dt.date.today().year
    sign_in(page, ADMIN)

    ask(page, "What was our revenue this year?")
    _states_all(_answer(page, 1), _revenue(demo_erp.url, year, "currency"))

    ask(page, "and last year?")
    _states_all(_answer(page, 2), _revenue(demo_erp.url, year - 1, "currency"))

    ask(page, "break that down by branch")
    by_branch = _revenue(demo_erp.url, year - 1, "branch")
    breakdown = _answer(page, 3)
    expect(breakdown.locator(".table-block table")).to_be_visible()
    _states_all(breakdown, by_branch)

    ask(page, "as a chart")
    charts = _answer(page, 4).locator(".chart-block canvas")
    expect(charts.first).to_be_visible()
    # One chart per currency (KES and USD branches never share an axis), each named by it.
    labels = [charts.nth(i).get_attribute("aria-label") or "" for i in range(charts.count())]
    assert len(set(labels)) == len(labels), labels
    assert all(label.endswith(("(KES)", "(USD)")) for label in labels), labels
    plotted = page.evaluate(
        "() => { const reply = document.querySelectorAll('.msg.agent')[3];"
        " return [...reply.querySelectorAll('.chart-block canvas')].flatMap((cv) =>"
        " Chart.getChart(cv).data.datasets.flatMap((d) => d.data)).map(Number); }"
    )
    assert all(any(abs(p - float(v)) < 0.01 for p in plotted) for v in by_branch), plotted
    shot(page, "conversation-chart")

    ask(page, "export that as Excel")
    link = _answer(page, 5).locator(".file-block a")
    expect(link).to_be_visible()
    with page.expect_download() as download:
        link.click()
    workbook = load_workbook(io.BytesIO(Path(download.value.path()).read_bytes()))
    cells = [c for row in workbook.active.iter_rows(values_only=True) for c in row]  # type: ignore[union-attr]
    numbers = [float(c) for c in cells if isinstance(c, int | float)]
    assert all(any(abs(n - float(v)) < 0.01 for n in numbers) for v in by_branch), numbers
    shot(page, "conversation-export")
