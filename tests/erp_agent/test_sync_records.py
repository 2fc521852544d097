"""Delta sync of ERP records into the index, against a demo ERP over real HTTP: new figures
after the next sync, deletions and cancellations leave, a crash mid-sync loses nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from retrieval_fixtures import CountingEmbedder, seeded_erp

from erp_agent.catalog import Catalog, load_catalog
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.connectors.query import Filter, Op
from erp_agent.retrieval.documents import Batch
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.sync import RecordSync, start_sync_task, watermark_name

pytestmark = pytest.mark.anyio
ENTITIES = ["sales_invoice", "customer", "lead"]


@pytest.fixture(scope="module")
def erp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from seeded_erp(tmp_path_factory)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
async def erp(erp_url: str) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(erp_url)
    yield connector
    await connector.aclose()


@pytest.fixture
async def admin(erp: ERPNextConnector) -> Credential:
    return await erp.login("admin@demo.local", "demo")


def make_sync(erp: ERPNextConnector, catalog: Catalog, index: SQLiteIndex, cred: Credential,
              **kw: Any) -> RecordSync:  # fmt: skip
    return RecordSync(
        erp, catalog, index, kw.pop("embedder", CountingEmbedder(fast=True)), cred, **kw
    )


def card(index: SQLiteIndex, entity: str, record_id: str) -> str | None:
    found = index.fetch("default", [f"{entity}:{record_id}"])
    return found[0].text if found else None


async def live_ids(erp: ERPNextConnector, cred: Credential, entity: str) -> set[str]:
    page = await erp.list(cred, entity, fields=["id", "status"] if entity != "customer" else ["id"],
                          limit=0)  # fmt: skip
    return {f"{entity}:{r['id']}" for r in page.records if r.get("status") != "Cancelled"}


async def test_sync_indexes_every_live_record_once(
    erp: ERPNextConnector, admin: Credential, catalog: Catalog, tmp_path: Path
) -> None:
    index = SQLiteIndex(tmp_path / "i.sqlite")
    report = await make_sync(erp, catalog, index, admin, batch_size=100).sync(ENTITIES)
    assert report.upserted > 100
    for entity in ENTITIES:
        assert set(index.keys("default", parent=entity)) == await live_ids(erp, admin, entity)
        assert index.state("default", watermark_name(entity))
    invoice = index.fetch("default", [sorted(index.keys("default", parent="sales_invoice"))[0]])[0]
    assert invoice.link
    assert "/app/sales-invoice/" in invoice.link
    assert invoice.branch
    assert invoice.company
    assert invoice.date
    assert f"({invoice.branch})" in invoice.text
    assert "KES" in invoice.text
    assert "still owed" in invoice.text or "Fully paid" in invoice.text
    before = index.keys("default")
    again = await make_sync(erp, catalog, index, admin).sync(ENTITIES)
    assert index.keys("default") == before
    assert again.upserted < 10  # only ties on the last watermark are re-read


async def _unpaid_invoice(erp: ERPNextConnector, cred: Credential) -> dict[str, Any]:
    page = await erp.list(cred, "sales_invoice",
                          filters=[Filter("status", Op.EQ, "Unpaid"), Filter("branch", Op.EQ, "Kisumu")],
                          limit=5)  # fmt: skip
    return page.records[0]


async def pay(
    erp: ERPNextConnector, cred: Credential, invoice: dict[str, Any], amount: float
) -> None:
    payment = await erp.create(cred, "payment_entry", {
        "payment_type": "Receive", "date": "2026-11-30", "company": invoice["company"],
        "party_type": "customer", "party": invoice["customer"],
        "paid_from": invoice["receivable_account"], "paid_to": "Cash - ST",
        "amount": amount, "received_amount": amount,
        "references": [{"document_type": "sales_invoice", "document": invoice["id"], "allocated": amount}],
    })  # fmt: skip
    await erp.submit(cred, "payment_entry", str(payment["id"]))


async def test_paid_invoice_shows_new_figures_after_next_sync(
    erp: ERPNextConnector, admin: Credential, catalog: Catalog, tmp_path: Path
) -> None:
    index = SQLiteIndex(tmp_path / "i.sqlite")
    sync = make_sync(erp, catalog, index, admin)
    await sync.sync(["sales_invoice"])
    invoice = await _unpaid_invoice(erp, admin)
    old = f"outstanding KES {invoice['outstanding']:,.2f}"
    assert old in (card(index, "sales_invoice", invoice["id"]) or "")
    await pay(erp, admin, invoice, 1000.0)
    assert old in (card(index, "sales_invoice", invoice["id"]) or "")  # not yet synced
    await sync.sync(["sales_invoice"])
    text = card(index, "sales_invoice", invoice["id"]) or ""
    assert f"outstanding KES {invoice['outstanding'] - 1000:,.2f}" in text
    assert "status Partly Paid" in text
    assert "Paid so far KES 1,000.00" in text


async def test_cancelled_and_deleted_records_leave_the_index(
    erp: ERPNextConnector, admin: Credential, catalog: Catalog, tmp_path: Path
) -> None:
    index = SQLiteIndex(tmp_path / "i.sqlite")
    sync = make_sync(erp, catalog, index, admin)
    lead = await erp.create(admin, "lead", {"name": "Tombstone Prospect"})
    await sync.sync(["sales_invoice", "lead"])
    assert card(index, "lead", str(lead["id"]))
    invoice = await _unpaid_invoice(erp, admin)
    assert card(index, "sales_invoice", invoice["id"])
    await erp.cancel(admin, "sales_invoice", invoice["id"])
    await erp.client.delete(admin, "Lead", str(lead["id"]))
    report = await sync.sync(["sales_invoice", "lead"])
    assert report.deleted >= 2
    assert card(index, "sales_invoice", invoice["id"]) is None
    assert card(index, "lead", str(lead["id"])) is None


class CrashingIndex(SQLiteIndex):
    """Fails INSIDE the transaction of the n-th commit, after writing part of the batch."""

    def __init__(self, path: Path, crash_on: int) -> None:
        super().__init__(path)
        self.commits = 0
        self.crash_on = crash_on
        self.lost: list[str] = []

    def _apply(self, batch: Batch) -> None:
        self.commits += 1
        if self.commits == self.crash_on:
            before = set(self.keys(batch.tenant))
            half = Batch(batch.tenant, upserts=batch.upserts[: len(batch.upserts) // 2])
            super()._apply(half)
            self.lost = [d.key for d in half.upserts if d.key not in before]
            raise RuntimeError("injected crash mid-batch")
        super()._apply(batch)


def snapshot(index: SQLiteIndex) -> dict[str, str]:
    keys = index.keys("default")
    return {d.key: d.text for d in index.fetch("default", keys)}


async def test_a_crash_mid_sync_loses_and_duplicates_nothing(
    erp: ERPNextConnector, admin: Credential, catalog: Catalog, tmp_path: Path
) -> None:
    clean = SQLiteIndex(tmp_path / "clean.sqlite")
    await make_sync(erp, catalog, clean, admin, batch_size=40).sync(["sales_invoice"])

    crashing = CrashingIndex(tmp_path / "crash.sqlite", crash_on=3)
    sync = make_sync(erp, catalog, crashing, admin, batch_size=40)
    with pytest.raises(RuntimeError, match="injected crash"):
        await sync.sync(["sales_invoice"])
    # Two whole batches landed and nothing of the third: more than one batch, at most two (the
    # records on the watermark's own timestamp are read by both and kept once).
    assert 40 < len(crashing.keys("default")) <= 80
    assert crashing.lost
    assert not set(crashing.lost) & set(crashing.keys("default"))
    mark = crashing.state("default", watermark_name("sales_invoice"))
    assert mark is not None
    # The embedder dies too, before the commit of the next batch.
    broken = make_sync(erp, catalog, crashing, admin, batch_size=40,
                       embedder=CountingEmbedder(fail_on_call=2, fast=True))  # fmt: skip
    with pytest.raises(RuntimeError, match="injected embedder crash"):
        await broken.sync(["sales_invoice"])
    assert crashing.state("default", watermark_name("sales_invoice")) != mark  # batch 1 landed

    await sync.sync(["sales_invoice"])
    assert snapshot(crashing) == snapshot(clean)
    assert crashing.count("default") == len(snapshot(clean))


async def test_periodic_sync_task_picks_up_changes(
    erp: ERPNextConnector, admin: Credential, catalog: Catalog, tmp_path: Path
) -> None:
    index = SQLiteIndex(tmp_path / "i.sqlite")
    sync = make_sync(erp, catalog, index, admin)
    task, stop = start_sync_task(sync, interval=0.2, entities=["lead"])
    try:
        for _ in range(100):
            if index.state("default", watermark_name("lead")):
                break
            await asyncio.sleep(0.05)
        lead = await erp.create(admin, "lead", {"name": "Periodic Prospect"})
        for _ in range(100):
            if card(index, "lead", str(lead["id"])):
                break
            await asyncio.sleep(0.05)
        assert "Periodic Prospect" in (card(index, "lead", str(lead["id"])) or "")
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


async def test_search_works_before_embeddings_and_unchanged_records_cost_nothing(
    erp: ERPNextConnector, admin: Credential, catalog: Catalog, tmp_path: Path
) -> None:
    from erp_agent.retrieval.backfill import Progress
    from erp_agent.retrieval.documents import Scope

    index = SQLiteIndex(tmp_path / "i.sqlite")
    embedder = CountingEmbedder(fast=True)
    status = Progress()
    sync = make_sync(erp, catalog, index, admin, embedder=embedder, status=status)
    await sync.sync(ENTITIES, embed=False)
    cards = index.count("default")
    assert cards > 100
    assert embedder.texts == 0
    assert index.pending_count("default") == cards
    invoice = sorted(index.keys("default", parent="sales_invoice"))[3].split(":", 1)[1]
    hits = index.search(invoice, None, Scope("default"))
    assert hits[0].doc.record_id == invoice  # keyword-ready: found before any vector exists
    assert status.phases["sync"].done == len(ENTITIES)

    assert await sync.backfill() == cards
    assert embedder.texts == cards
    assert index.pending_count("default") == 0
    assert status.phases["embedding"].done == cards
    # Nothing changed in the ERP: a full re-read embeds nothing and writes nothing.
    await sync.sync(ENTITIES, full=True)
    assert embedder.texts == cards
    assert index.pending_count("default") == 0


async def test_an_unchanged_resync_reads_each_entity_once_and_writes_nothing(
    erp: ERPNextConnector, admin: Credential, catalog: Catalog, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """What makes a sync that finds nothing cost ~nothing: per entity, one changes-since read
    (no per-record reads) and no index transaction at all."""
    index = SQLiteIndex(tmp_path / "i.sqlite")
    sync = make_sync(erp, catalog, index, admin)
    await sync.sync(ENTITIES, embed=False)
    commits: list[object] = []
    reads: list[str] = []
    commit, changes = index.commit, erp.changes_since
    monkeypatch.setattr(index, "commit", lambda batch: commits.append(batch) or commit(batch))

    async def counted(cred: Credential, entity: str, *args: Any, **kwargs: Any) -> Any:
        reads.append(entity)
        return await changes(cred, entity, *args, **kwargs)

    monkeypatch.setattr(erp, "changes_since", counted)
    marks = {e: index.state("default", watermark_name(e)) for e in ENTITIES}
    report = await sync.sync(ENTITIES, embed=False)
    assert sorted(reads) == sorted(ENTITIES)
    assert commits == []
    assert report.upserted == 0
    assert {e: index.state("default", watermark_name(e)) for e in ENTITIES} == marks
