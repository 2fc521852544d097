"""The web app in a real Chromium (Debian's, at /usr/bin/chromium): sign-in, a streamed table
and chart, confirming a proposal, an administrator switching the model provider.

Screenshots go to test-artifacts/ (git-ignored)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from erp_edits import someone_else
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright
from server_doubles import (
    CREATE_LEAD,
    HOSTILE,
    RENAME_LEAD,
    SALES_BY_CUSTOMER,
    TOP_CUSTOMERS,
    UNREQUESTED,
    LiveServer,
    serve_in_thread,
)

from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        message = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI installs it: a missing browser is a broken install step
        pytest.skip(message)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def live(demo_erp: Any, tmp_path: Path) -> Iterator[LiveServer]:
    server = serve_in_thread(demo_erp.url, tmp_path, delay=0.3)
    yield server
    server.stop()


@pytest.fixture
def page(browser: Browser, live: LiveServer) -> Iterator[Page]:
    context = browser.new_context(base_url=live.url, viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    # CSP violations and script errors show up here; the app must have none.
    opened.on("console", lambda m: problems.append(m.text) if _is_error(m) else None)
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == []


def _is_error(message: ConsoleMessage) -> bool:
    # A refused request (401 before sign-in; 422 for a file that is no document, whose words
    # the page shows) is expected; anything else is a defect.
    expected = ("status of 401", "status of 422")
    return message.type == "error" and not any(e in message.text for e in expected)


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sign_in(page: Page, user: str) -> None:
    page.goto("/")
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", "demo")
    page.click("#sign-in button[type=submit]")
    expect(page.locator("#workspace")).to_be_visible()
    expect(page.locator("#who")).to_contain_text(user)


def ask(page: Page, question: str) -> None:
    page.fill("#composer textarea", question)
    page.keyboard.press("Enter")


def test_a_question_streams_a_table_and_a_chart(page: Page) -> None:
    sign_in(page, "admin@demo.local")
    shot(page, "chat-signed-in")
    ask(page, SALES_BY_CUSTOMER)
    progress = page.locator(".msg.agent .progress")
    expect(progress).to_contain_text("Thinking…")  # live progress while the model works
    table = page.locator(".table-block table")
    expect(table).to_be_visible()
    assert table.locator("tbody tr").count() > 1
    canvas = page.locator(".chart-block canvas")
    expect(canvas).to_be_visible()
    page.wait_for_function(
        "() => window.Chart && Chart.getChart(document.querySelector('.chart-block canvas'))"
    )
    expect(page.locator(".text-block strong")).to_have_text("sales by customer")
    shot(page, "chat-table-and-chart")
    pager = page.locator(".table-block .pager")
    if "of" in pager.inner_text():  # more rows than one page: page through the stored result
        first = table.locator("tbody tr").first.inner_text()
        pager.get_by_role("button", name="Next ›").click()
        expect(table.locator("tbody tr").first).not_to_have_text(first)
        expect(pager).to_contain_text("21–")

    page.set_viewport_size({"width": 390, "height": 844})
    expect(table).to_be_visible()
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, "the page scrolls sideways at phone width"
    shot(page, "chat-phone")

    page.click(".feedback button[aria-label=Helpful]")
    expect(page.locator(".feedback .thanks")).to_contain_text("Thanks")


def test_a_top_five_chart_has_five_bars_labels_and_how_it_was_computed(page: Page) -> None:
    sign_in(page, "admin@demo.local")
    ask(page, TOP_CUSTOMERS)
    table = page.locator(".table-block table")
    expect(table).to_be_visible(timeout=30_000)  # five scripted model steps on a busy machine
    headers = table.locator("thead th").all_inner_texts()
    # Labels from the catalog, never field names.
    assert headers[0] == "Customer"
    billed = next(h for h in headers if h.startswith("Billed"))
    assert billed.endswith("(KES)")
    assert not {"billed", "customer", "records", "sum_total"} & set(headers)
    assert table.locator("tbody tr").count() == 5
    page.wait_for_function(
        "() => window.Chart && Chart.getChart(document.querySelector('.chart-block canvas'))"
    )
    bars = page.evaluate(
        "() => { const c = Chart.getChart(document.querySelector('.chart-block canvas'));"
        " return [c.config.type, c.data.labels.length, c.data.datasets.map(d => d.data.length),"
        " c.data.datasets[0].label]; }"
    )
    assert bars == ["bar", 5, [5], billed]
    # The chart's values are the table's values, in the same order.
    chart_values = page.evaluate(
        "() => Chart.getChart(document.querySelector('.chart-block canvas')).data.datasets[0].data"
    )
    billed_at = headers.index(billed)
    table_values = [
        float(row[billed_at].replace(",", ""))
        for row in (r.locator("td").all_inner_texts() for r in table.locator("tbody tr").all())
    ]
    assert chart_values == table_values
    how = page.locator(".table-block details.definition")
    expect(how.locator("summary")).to_have_text("How this was computed")
    expect(how.locator("p").first).not_to_be_visible()  # folded until asked for
    how.locator("summary").click()
    expect(how.locator("p").first).to_be_visible()
    expect(how).to_contain_text("Billed")
    expect(page.locator(".chart-block details.definition summary")).to_have_count(1)
    shot(page, "chat-top-five-chart")


def test_confirming_a_proposal_shows_the_exact_values(page: Page) -> None:
    sign_in(page, "admin@demo.local")
    ask(page, CREATE_LEAD)
    block = page.locator(".proposal-block")
    expect(block).to_contain_text("Jane Roe")
    block.get_by_role("button", name="Review and confirm…").click()
    dialog = page.locator("#proposal-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".details")).to_contain_text("Acme Ltd")
    shot(page, "proposal-dialog")
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog.locator(".result")).to_contain_text("Done")
    expect(block.locator(".status")).to_have_text("executed")
    shot(page, "proposal-confirmed")


def test_a_stale_proposal_is_refused_and_the_fresh_one_confirmed(page: Page, demo_erp: Any) -> None:
    """Someone edits the record between the proposal and the confirm: the ERP's refusal is shown
    verbatim, nothing is written, and the same change against the new values takes its place."""
    with someone_else(demo_erp) as other:
        created = other.post("/api/resource/Lead", json={"lead_name": "Browser Stale Prospect"})
        assert created.status_code == 200, created.text
        lead = created.json()["data"]["name"]
    sign_in(page, "admin@demo.local")
    ask(page, f"{RENAME_LEAD} {lead} to Mine Ltd")
    first = page.locator(".proposal-block").first
    expect(first).to_contain_text(lead)
    with someone_else(demo_erp) as other:
        edited = other.put(f"/api/resource/Lead/{lead}", json={"company_name": "Theirs Ltd"})
        assert edited.status_code == 200, edited.text
    first.get_by_role("button", name="Review and confirm…").click()
    dialog = page.locator("#proposal-dialog")
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog.locator(".result")).to_contain_text(
        "Document has been modified after you have opened it"
    )
    expect(first.locator(".status")).to_have_text("stale")
    fresh = page.locator(".proposal-block").nth(1)
    expect(fresh.locator(".diff .before")).to_have_text("Theirs Ltd")  # the diff is recomputed
    expect(dialog.locator(".details .diff .before")).to_have_text("Theirs Ltd")
    shot(page, "proposal-stale")
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog.locator(".result")).to_contain_text("Done")
    expect(fresh.locator(".status")).to_have_text("executed")
    with someone_else(demo_erp) as other:
        stored = other.get(f"/api/resource/Lead/{lead}").json()["data"]
    assert stored["company_name"] == "Mine Ltd"


def test_an_unrequested_write_needs_the_warning_acknowledged(page: Page) -> None:
    sign_in(page, "admin@demo.local")
    ask(page, UNREQUESTED)
    block = page.locator(".proposal-block")
    expect(block.locator(".unrequested")).to_contain_text("not by your request")
    block.get_by_role("button", name="Review and confirm…").click()
    dialog = page.locator("#proposal-dialog")
    expect(dialog.locator(".result")).to_contain_text("not by your request")
    confirm = dialog.get_by_role("button", name="Yes, make this change")
    expect(confirm).to_be_disabled()  # nothing can be written without the acknowledgement
    dialog.get_by_label("I know this change was not in my request").check()
    expect(block.locator(".status")).to_have_text("pending")
    confirm.click()
    expect(dialog.locator(".result")).to_contain_text("Done")
    expect(block.locator(".status")).to_have_text("executed")
    shot(page, "unrequested-confirmed")


def test_an_admin_switches_the_model_provider(page: Page, live: LiveServer) -> None:
    fake = FakeOpenAIServer(api_key="test-key", model="fake-model")
    with fake.running() as base_url:
        sign_in(page, "admin@demo.local")
        page.click("#admin-link")
        expect(page.locator("#model-current")).to_contain_text("offline")
        form = page.locator("#model-form")
        form.locator("select[name=provider]").select_option("openai")
        form.locator("input[name=model]").fill("fake-model")
        form.locator("input[name=base_url]").fill(base_url)
        form.locator("input[name=api_key]").fill("test-key")
        form.get_by_role("button", name="Apply").click()
        # The first switch imports the provider SDKs (seconds on a busy machine).
        expect(page.locator("#model-status")).to_have_text(
            "Applied from the next question on.", timeout=30_000
        )
        expect(page.locator("#model-current")).to_contain_text("openai · fake-model · key set")
        expect(form.locator("input[name=api_key]")).to_have_value("")
        assert "test-key" not in page.content()
        shot(page, "admin-model-switched")

        fake.enqueue(FakeReply(content="Hello from the switched provider."))
        page.click("text=Chat")
        ask(page, "Say hello")
        expect(page.locator(".msg.agent .text-block")).to_contain_text(
            "Hello from the switched provider."
        )
        assert fake.requests, "the new provider was not called"
        shot(page, "chat-after-switch")


def test_the_admin_page_refuses_other_users(page: Page) -> None:
    sign_in(page, "sales@demo.local")
    expect(page.locator("#admin-link")).to_be_hidden()
    page.goto("/admin")
    expect(page.locator("#denied")).to_contain_text("System Manager")
    expect(page.locator("#admin")).to_be_hidden()


def test_an_admin_finds_feedback_and_the_turn_it_belongs_to(page: Page) -> None:
    """A user rates an answer with a comment; the admin console's feedback view lists it with
    the question and outcome, filters it, and opens the turn it belongs to."""
    sign_in(page, "admin@demo.local")
    ask(page, CREATE_LEAD)
    expect(page.locator(".proposal-block")).to_contain_text("Jane Roe")
    bar = page.locator(".msg.agent .feedback").last
    bar.get_by_label("Feedback comment").fill("Wrong lead source")
    bar.get_by_role("button", name="Not helpful").click()
    expect(bar.locator(".thanks")).to_contain_text("Thanks, noted")

    page.click("#admin-link")
    panel = page.locator("#feedback-panel")
    expect(panel.locator("#feedback-summary")).to_have_text("1 rated: 0 helpful, 1 not helpful")
    row = panel.locator("#feedback tr.clickable")
    expect(row).to_have_count(1)
    for text in ("Wrong lead source", CREATE_LEAD, "not helpful", "proposal"):
        expect(row).to_contain_text(text)
    form = panel.locator("#feedback-form")
    form.locator("select[name=rating]").select_option("up")
    form.get_by_role("button", name="Filter").click()
    expect(panel.locator("#feedback-summary")).to_have_text("No feedback matches these filters.")
    form.locator("select[name=rating]").select_option("down")
    form.locator("select[name=outcome]").select_option("proposal")
    form.locator("input[name=user]").fill("admin@demo.local")
    form.get_by_role("button", name="Filter").click()
    expect(row).to_have_count(1)
    shot(page, "admin-feedback")

    row.click()
    turn = page.locator("#turn-panel")
    expect(turn).to_be_visible()
    expect(turn.locator("#turn-question")).to_have_text(CREATE_LEAD)
    expect(turn.locator("#turn-facts")).to_contain_text("not helpful — “Wrong lead source”")
    expect(turn.locator("#turn-facts")).to_contain_text("proposal")
    expect(turn.locator("#turn-answer")).to_contain_text("please confirm")
    expect(turn.locator("#turn-events")).to_contain_text("lead.create")
    shot(page, "admin-turn")

    # The log's own outcome filter finds the same proposal.
    log = page.locator("#log-form")
    log.locator("select[name=outcome]").select_option("proposal")
    log.get_by_role("button", name="Filter").click()
    expect(page.locator("#log tr.clickable")).to_have_count(1)
    expect(page.locator("#log tr.clickable")).to_contain_text("not helpful")


def test_markup_in_an_answer_is_shown_as_text(page: Page) -> None:
    sign_in(page, "admin@demo.local")
    ask(page, HOSTILE)
    answer = page.locator(".msg.agent .text-block")
    expect(answer).to_contain_text("<img src=x")
    assert answer.locator("img, script").count() == 0
    assert page.evaluate("() => window.__xss") is None
    links = answer.locator("a")
    assert links.count() == 1
    assert links.first.get_attribute("href") == "https://erp.example/app"
    assert links.first.get_attribute("rel") == "noopener noreferrer"


def test_scanning_a_pdf_invoice_shows_the_draft_and_confirm_writes_it(
    page: Page, demo_erp: Any
) -> None:
    from scan_fixtures import documents

    from conftest import raw
    from erp_agent.documents.samples import render_pdf

    doc = documents(demo_erp, 1, seed=71, kind="purchase_invoice")[0]
    sign_in(page, "accounts@demo.local")
    page.set_input_files(
        "#scan-file",
        files=[{"name": "bill.pdf", "mimeType": "application/pdf", "buffer": render_pdf(doc)}],
    )
    expect(page.locator(".msg.user").last).to_contain_text("Scan bill.pdf")
    block = page.locator(".proposal-block")
    expect(block).to_be_visible(timeout=60_000)
    expect(block).to_contain_text("Purchase Invoice")
    expect(block).to_contain_text(doc.party)
    expect(block.locator(".scan-source")).to_contain_text("text layer")
    shot(page, "scan-draft")
    count = 'SELECT COUNT(*) FROM "tabPurchase Invoice" WHERE bill_no = ?'
    assert raw(demo_erp, count, doc.number)[0][0] == 0  # a draft, not written
    block.get_by_role("button", name="Review and confirm…").click()
    dialog = page.locator("#proposal-dialog")
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog.locator(".result")).to_contain_text("Done")
    assert raw(demo_erp, count, doc.number)[0][0] == 1
    shot(page, "scan-confirmed")


def test_a_scanned_supplier_several_records_fit_is_chosen_with_a_click(
    page: Page, demo_erp: Any
) -> None:
    import dataclasses

    from scan_fixtures import documents

    from conftest import raw
    from erp_agent.documents.samples import render_pdf

    doc = documents(demo_erp, 1, seed=72, kind="purchase_invoice")[0]
    doc = dataclasses.replace(doc, party="Wire & Cable Ltd")
    sign_in(page, "accounts@demo.local")
    page.set_input_files(
        "#scan-file",
        files=[{"name": "bill.pdf", "mimeType": "application/pdf", "buffer": render_pdf(doc)}],
    )
    choices = page.locator(".choices-block")
    expect(choices).to_be_visible(timeout=60_000)
    expect(choices).to_contain_text("Which supplier")
    first = page.locator(".proposal-block").first
    drafted = next(
        s
        for s in ("Kenya Wire & Cable Ltd", "Machakos Wire & Cable Ltd")
        if s in first.inner_text()
    )
    other = "Machakos Wire & Cable Ltd" if drafted.startswith("Kenya") else "Kenya Wire & Cable Ltd"
    choices.locator(f"button[data-value='{other}']").click()
    dialog = page.locator("#proposal-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".details")).to_contain_text(other)
    expect(first.locator(".status")).to_have_text("superseded")
    shot(page, "scan-party-chosen")
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog.locator(".result")).to_contain_text("Done")
    written = raw(
        demo_erp, 'SELECT supplier FROM "tabPurchase Invoice" WHERE bill_no = ?', doc.number
    )
    assert [r[0] for r in written] == [other]


def test_scanning_a_file_that_is_not_a_document_says_why(page: Page) -> None:
    sign_in(page, "accounts@demo.local")
    page.set_input_files(
        "#scan-file", files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello"}]
    )
    expect(page.locator(".msg.agent .error").last).to_contain_text("not a PDF or an image")
