"""Scanning through the gateway against the demo ERP over real HTTP: a generated supplier
invoice (or customer purchase order) becomes a draft proposal, as the signed-in user, with
every doubt flagged; nothing is written until the user confirms."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from scan_fixtures import COMPANY, documents
from server_doubles import make_runtime

from conftest import DemoERP, raw
from erp_agent.documents.draft import scan_to_draft
from erp_agent.documents.samples import (
    SampleLine,
    blank_pdf,
    draft_reading,
    field_scores,
    render_pdf,
    render_png,
)
from erp_agent.runtime import Runtime
from erp_agent.store.records import Decision

pytestmark = pytest.mark.anyio


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    rt = await make_runtime(demo_erp.url, tmp_path)
    yield rt
    await rt.aclose()


def invoices(demo: DemoERP) -> int:
    return int(raw(demo, 'SELECT COUNT(*) FROM "tabPurchase Invoice"')[0][0])


def orders(demo: DemoERP) -> int:
    return int(raw(demo, 'SELECT COUNT(*) FROM "tabSales Order"')[0][0])


async def test_a_pdf_invoice_becomes_a_draft_and_only_confirm_writes_it(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    doc = documents(demo_erp, 1, seed=41, kind="purchase_invoice")[0]
    session = await runtime.sign_in("accounts@demo.local", "demo")
    before = invoices(demo_erp)

    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")

    assert result.ok, result.message
    assert result.proposal is not None
    assert result.proposal["tool"] == "purchase_invoice.create"
    assert invoices(demo_erp) == before  # prepared, not written
    scores = field_scores(doc, draft_reading(result.as_dict()), erp_items=True)
    assert all(scores.values()), [k for k, ok in scores.items() if not ok]

    done = await runtime.gateway.confirm(
        session, result.proposal["id"], result.proposal["payload_hash"]
    )
    assert done.ok, done.message
    assert invoices(demo_erp) == before + 1
    # The ERP's own record, read from its database: the supplier, bill number and lines.
    name = str(done.data["id"])
    row = raw(
        demo_erp,
        'SELECT supplier, bill_no, bill_date, company, docstatus FROM "tabPurchase Invoice" '
        "WHERE name = ?",
        name,
    )[0]
    assert tuple(row) == (doc.party, doc.number, doc.date.isoformat(), COMPANY, 0)
    lines = raw(
        demo_erp,
        'SELECT item_code, qty, rate FROM "tabPurchase Invoice Item" WHERE parent = ? ORDER BY idx',
        name,
    )
    assert [(r[0], float(r[1]), float(r[2])) for r in lines] == [
        (line.item_code, line.qty, line.rate) for line in doc.lines
    ]


async def test_every_step_is_a_gateway_call_as_the_user(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    doc = documents(demo_erp, 1, seed=42, kind="purchase_invoice")[0]
    session = await runtime.sign_in("accounts@demo.local", "demo")
    seen: list[tuple[str, str, Decision]] = []
    runtime.gateway.listeners.append(lambda e: seen.append((e.user, e.tool, e.decision)))
    await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")
    tools = [tool for _, tool, _ in seen]
    assert tools[0] == "documents.scan"
    assert "supplier.list" in tools
    assert "item.list" in tools
    assert tools[-1] == "purchase_invoice.create"
    assert {user for user, _, _ in seen} == {"accounts@demo.local"}
    assert seen[-1][2] is Decision.PROPOSED


async def test_a_customer_purchase_order_becomes_a_draft_sales_order(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    doc = documents(demo_erp, 1, seed=43, kind="sales_order")[0]
    session = await runtime.sign_in("admin@demo.local", "demo")
    before = orders(demo_erp)
    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "po.pdf")
    assert result.ok, result.message
    assert result.proposal is not None
    assert result.proposal["tool"] == "sales_order.create"
    scores = field_scores(doc, draft_reading(result.as_dict()), erp_items=True)
    assert all(scores.values()), [k for k, ok in scores.items() if not ok]
    assert result.values["company"] == COMPANY
    assert orders(demo_erp) == before


async def test_unknown_items_are_left_out_and_flagged(runtime: Runtime, demo_erp: DemoERP) -> None:
    doc = documents(demo_erp, 1, seed=44, kind="purchase_invoice")[0]
    stranger = SampleLine("Quantum Flux Capacitor", 2, 999.0, "QFC-0001")
    doc = dataclasses.replace(doc, lines=(*doc.lines, stranger))
    session = await runtime.sign_in("accounts@demo.local", "demo")
    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")
    assert result.ok, result.message
    assert len(result.values["items"]) == len(doc.lines) - 1
    flagged = [f for f in result.flags if f.level == "unmatched"]
    assert any("Quantum Flux Capacitor" in f.message for f in flagged)


async def test_an_unknown_supplier_prepares_nothing(runtime: Runtime, demo_erp: DemoERP) -> None:
    doc = documents(demo_erp, 1, seed=45, kind="purchase_invoice")[0]
    doc = dataclasses.replace(doc, party="Zanzibar Quantum Holdings")
    session = await runtime.sign_in("accounts@demo.local", "demo")
    before = invoices(demo_erp)
    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")
    assert not result.ok
    assert result.proposal is None
    assert "Supplier" in result.message
    assert any(f.field == "Supplier" and f.level == "unmatched" for f in result.flags)
    assert invoices(demo_erp) == before


async def test_a_user_who_may_not_create_invoices_gets_no_draft(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    doc = documents(demo_erp, 1, seed=46, kind="purchase_invoice")[0]
    session = await runtime.sign_in("stock@demo.local", "demo")
    before = invoices(demo_erp)
    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")
    assert not result.ok
    assert result.proposal is None
    assert invoices(demo_erp) == before


async def test_a_bad_file_is_a_clear_message_and_nothing_is_written(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    session = await runtime.sign_in("accounts@demo.local", "demo")
    before = invoices(demo_erp)
    for data, expected in (
        (b"hello, this is a text file", "not a PDF or an image"),
        (blank_pdf(200), "200 pages"),
    ):
        result = await scan_to_draft(runtime.gateway, session, data, "x")
        assert not result.ok
        assert expected in result.message
    assert invoices(demo_erp) == before


@pytest.mark.slow
async def test_scanned_photos_become_drafts_with_at_least_95_percent_of_fields_right(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    session = await runtime.sign_in("accounts@demo.local", "demo")
    right = total = 0
    wrong: list[str] = []
    for i, doc in enumerate(documents(demo_erp, 4, seed=47, kind="purchase_invoice")):
        png = render_png(doc, rotate=(2.0, -3.0, 0.5, -1.0)[i], noise=0.005, blur=0.5, seed=i)
        result = await scan_to_draft(runtime.gateway, session, png, "photo.png")
        scores = field_scores(doc, draft_reading(result.as_dict()), erp_items=True)
        right += sum(scores.values())
        total += len(scores)
        wrong += [f"{i}:{k}" for k, ok in scores.items() if not ok]
    assert right / total >= 0.95, wrong


async def test_a_name_several_suppliers_fit_is_a_choice_and_the_choice_fills_the_draft(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    """“Wire & Cable Ltd” fits two of the ERP's suppliers: the draft starts from one, flagged,
    and offers both; choosing the other re-fills the draft through the ERP, and confirm writes
    the supplier chosen."""
    fits = [
        r[0] for r in raw(demo_erp, "SELECT name FROM tabSupplier WHERE name LIKE '%Wire & Cable%'")
    ]
    assert len(fits) >= 2
    doc = documents(demo_erp, 1, seed=46, kind="purchase_invoice")[0]
    doc = dataclasses.replace(doc, party="Wire & Cable Ltd")
    session = await runtime.sign_in("accounts@demo.local", "demo")
    before = invoices(demo_erp)

    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")

    assert result.ok, result.message
    assert result.proposal is not None
    assert result.choices is not None
    assert result.choices["type"] == "choices"
    offered = [o["value"] for o in result.choices["options"]]
    assert set(fits) <= set(offered)
    assert any(f.field == "Supplier" and f.level == "uncertain" for f in result.flags)
    drafted = result.values["supplier"]
    other = next(v for v in offered if v != drafted)
    edit = next(o["edit"] for o in result.choices["options"] if o["value"] == other)
    assert edit["proposal"] == result.proposal["id"]

    edited = await runtime.gateway.revise(session, edit["proposal"], {"party": edit["party"]})
    assert edited.proposal is not None, edited.message
    assert edited.proposal["id"] != result.proposal["id"]
    assert edited.proposal["payload_hash"] != result.proposal["payload_hash"]
    old = await runtime.gateway.confirm(
        session, result.proposal["id"], result.proposal["payload_hash"]
    )
    assert not old.ok  # superseded: only what is shown now can be written
    assert invoices(demo_erp) == before

    done = await runtime.gateway.confirm(
        session, edited.proposal["id"], edited.proposal["payload_hash"]
    )
    assert done.ok, done.message
    row = raw(
        demo_erp, 'SELECT supplier FROM "tabPurchase Invoice" WHERE name = ?', done.data["id"]
    )
    assert row[0][0] == other
    assert invoices(demo_erp) == before + 1


async def test_a_clear_supplier_name_offers_no_choice(runtime: Runtime, demo_erp: DemoERP) -> None:
    doc = documents(demo_erp, 1, seed=47, kind="purchase_invoice")[0]
    session = await runtime.sign_in("accounts@demo.local", "demo")
    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")
    assert result.ok, result.message
    assert result.choices is None
    assert result.values["supplier"] == doc.party


async def test_a_party_edit_that_is_not_an_id_is_refused(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    doc = documents(demo_erp, 1, seed=48, kind="purchase_invoice")[0]
    session = await runtime.sign_in("accounts@demo.local", "demo")
    result = await scan_to_draft(runtime.gateway, session, render_pdf(doc), "bill.pdf")
    assert result.proposal is not None
    before = invoices(demo_erp)
    edited = await runtime.gateway.revise(
        session, result.proposal["id"], {"party": "No Such Supplier Anywhere"}
    )
    assert edited.proposal is None
    assert "No Such Supplier Anywhere" in edited.message  # the ERP's link validation, verbatim
    assert invoices(demo_erp) == before
