"""POST /api/documents/scan in-process against the demo ERP: the upload becomes a draft
proposal card stored in the conversation; oversized, empty, unreadable and anonymous uploads
are refused with a clear message and nothing is written (hostile files: test_redteam_scan.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from scan_fixtures import documents
from server_doubles import build_app, client_for, make_runtime_settings, sign_in

from conftest import DemoERP, raw
from erp_agent.documents.samples import render_pdf
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
LIMIT = 400_000


@pytest.fixture
async def client(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    base = make_runtime_settings(demo_erp.url, tmp_path)
    settings = base.model_copy(update={"scan": base.scan.model_copy(update={"max_bytes": LIMIT})})
    runtime = await Runtime.create(settings, store=MemoryStore())
    async with client_for(build_app(runtime, tmp_path).app) as c:
        yield c
    await runtime.aclose()


def invoices(demo: DemoERP) -> int:
    return int(raw(demo, 'SELECT COUNT(*) FROM "tabPurchase Invoice"')[0][0])


async def test_an_upload_becomes_a_proposal_card_in_the_conversation(
    client: httpx.AsyncClient, demo_erp: DemoERP
) -> None:
    doc = documents(demo_erp, 1, seed=81, kind="purchase_invoice")[0]
    await sign_in(client, "accounts@demo.local")
    before = invoices(demo_erp)
    response = await client.post(
        "/api/documents/scan",
        params={"filename": "bill.pdf"},
        content=render_pdf(doc),
        headers={"Content-Type": "application/pdf"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    card = next(b for b in body["blocks"] if b["type"] == "proposal")
    assert card["tool"] == "purchase_invoice.create"
    assert card["payload"]["supplier"] == doc.party
    assert card["source"]["method"] == "text-layer"
    assert isinstance(card["flags"], list)
    assert invoices(demo_erp) == before

    conversation = (await client.get(f"/api/conversations/{body['conversation_id']}")).json()
    stored = conversation["turns"][-1]
    assert stored["user_message"] == "Scan bill.pdf"
    assert any(b["type"] == "proposal" for b in stored["response"]["blocks"])

    confirmed = await client.post(
        f"/api/proposals/{card['id']}/confirm", json={"payload_hash": card["payload_hash"]}
    )
    assert confirmed.json()["ok"], confirmed.text
    assert invoices(demo_erp) == before + 1


async def test_bad_uploads_are_refused_clearly(
    client: httpx.AsyncClient, demo_erp: DemoERP
) -> None:
    before = invoices(demo_erp)
    anonymous = await client.post("/api/documents/scan", content=b"%PDF-1.7")
    assert anonymous.status_code in (401, 403)

    await sign_in(client, "accounts@demo.local")
    too_big = await client.post(
        "/api/documents/scan",
        content=b"\xff\xd8\xff" + b"\0" * (LIMIT + 10),
        headers={"Content-Type": "image/jpeg"},
    )
    assert too_big.status_code == 413
    assert "limit for scans" in too_big.json()["detail"]

    empty = await client.post("/api/documents/scan", content=b"")
    assert empty.status_code == 400

    text = await client.post("/api/documents/scan", content=b"just some words, not a document")
    assert text.status_code == 422
    assert "not a PDF or an image" in text.json()["detail"]
    assert invoices(demo_erp) == before


async def test_an_upload_without_the_csrf_token_is_refused(client: httpx.AsyncClient) -> None:
    await sign_in(client, "accounts@demo.local")
    del client.headers["X-CSRF-Token"]
    response = await client.post("/api/documents/scan", content=b"%PDF-1.7")
    assert response.status_code == 403
