"""What a write will do, before the user confirms it: a submit proposal shows the ledger
entries, stock movements and payment schedule the ERP computes its submit will create (the
draft's own ledger previews), labelled a projection and bound to the version proposed; once
confirmed, the GL and stock ledger entries the ERP wrote (read back over its REST API with raw
httpx) are exactly those. A cancel shows what reverses and the linked documents that block it,
in the ERP's words — the words it refuses the confirm with. A connector without the capability
shows none, and every confirm surface (the web app's block, GET /api/proposals/{id}, MCP's
text and question) shows the same one.

Real HTTP to a private copy of the seeded demo ERP."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from agent_helpers import signed_in_context
from drill_fixtures import DrillERP, drill_erp
from erp_edits import someone_else
from rest_truth import RestERP
from server_doubles import build_app, client_for, make_runtime, sign_in

from conftest import TEST_TODAY, DemoERP, raw
from erp_agent.calls.outcome import Outcome, Status, without_hash
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.channels.markdown import proposal_markdown
from erp_agent.connectors.base import Capability, ConnectorProfile
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.projection import LABEL
from erp_agent.store.memory import MemoryStore
from erp_agent.tools.base import ToolRegistry
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
__all__ = ["drill_erp"]
CATALOG = load_catalog()
TOOLS = catalog_tools(CATALOG)
USER = "accounts.manager@demo.local"
_SKIP = {"name", "owner", "creation", "modified", "modified_by", "docstatus", "idx", "status",
         "outstanding_amount", "paid_amount", "amended_from", "per_billed", "per_delivered",
         "per_received", "billed_amount"}  # fmt: skip
_CHILD_SKIP = _SKIP | {"parent", "parenttype", "parentfield", "doctype"}


@pytest.fixture
async def erp(drill_erp: DrillERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(drill_erp.url, catalog=CATALOG)
    yield connector
    await connector.aclose()


@pytest.fixture
def rest(drill_erp: DrillERP) -> Iterator[RestERP]:
    session = RestERP(drill_erp.url, "admin@demo.local")
    yield session
    session.close()


def demo(drill_erp: DrillERP) -> DemoERP:
    return DemoERP(drill_erp.url, drill_erp.url, drill_erp.path)


def draft_copy(erp_copy: DrillERP, doctype: str, **changes: Any) -> str:
    """A new draft copying the latest submitted document of ``doctype``, made in the ERP."""
    table = f"tab{doctype}"
    submitted = raw(
        demo(erp_copy),
        f"select name from `{table}` where docstatus = 1 order by name desc limit 1",
    )[0]["name"]
    with someone_else(demo(erp_copy)) as other:
        doc = other.get(f"/api/resource/{doctype}/{submitted}").json()["data"]
        body = {k: v for k, v in doc.items() if k not in _SKIP and not isinstance(v, list)}
        for key, rows in doc.items():
            if isinstance(rows, list) and key != "payment_schedule":
                body[key] = [{k: v for k, v in r.items() if k not in _CHILD_SKIP} for r in rows]
        body.update(changes)
        created = other.post(f"/api/resource/{doctype}", json=body)
        assert created.status_code == 200, created.text
        return str(created.json()["data"]["name"])


async def signed_in(erp: ERPNextConnector, user: str = USER) -> tuple[Gateway, Session]:
    ctx = await signed_in_context(erp, user, [t.name for t in TOOLS], CATALOG)
    return Gateway(ToolRegistry(TOOLS), MemoryStore(), erp, CATALOG), ctx.session


def proposal_of(outcome: Outcome) -> dict[str, Any]:
    assert outcome.status is Status.PROPOSAL, outcome.for_model()
    assert outcome.proposal is not None
    return outcome.proposal


def entries(rows: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    """Ledger entries as (account, debit, credit, party type, party, cost centre)."""
    return Counter(
        (r["account"], round(float(r["debit"] or 0), 2), round(float(r["credit"] or 0), 2),
         r.get("party_type") or None, r.get("party") or None, r.get("cost_center") or None)
        for r in rows
    )  # fmt: skip


def posted(rest: RestERP, doctype: str, name: str, cancelled: int = 0) -> list[dict[str, Any]]:
    return rest.rows(
        "GL Entry",
        ["account", "debit", "credit", "party_type", "party", "cost_center"],
        [["voucher_type", "=", doctype], ["voucher_no", "=", name],
         ["is_cancelled", "=", cancelled]],
    )  # fmt: skip


async def test_a_submit_shows_the_ledger_entries_the_erp_then_writes(
    erp: ERPNextConnector, drill_erp: DrillERP, rest: RestERP
) -> None:
    invoice = draft_copy(drill_erp, "Sales Invoice", posting_date=TEST_TODAY.isoformat(),
                         due_date="2026-12-30", is_return=0)  # fmt: skip
    gateway, me = await signed_in(erp)
    shown = proposal_of(await gateway.call(me, "sales_invoice.submit", {"id": invoice}))
    projection = shown["projection"]
    assert projection["label"] == LABEL
    assert projection["action"] == "submit"
    assert projection["modified"] == shown["base_modified"]  # bound to the version proposed
    assert projection["currency"] == "KES"
    assert projection["ledger"], "a sales invoice posts to the ledger"
    assert not projection["refusal"]
    assert posted(rest, "Sales Invoice", invoice) == []  # projected, nothing written
    # The payment schedule the draft carries, as the ERP computed it.
    draft = rest.client.get(f"/api/resource/Sales Invoice/{invoice}").json()["data"]
    assert projection["payment_schedule"]
    assert [(p["due_date"], p["amount"]) for p in projection["payment_schedule"]] == [
        (row["due_date"], row["payment_amount"]) for row in draft["payment_schedule"]
    ]
    # Every confirm surface shows it: MCP's text and question (no payload hash there).
    text = proposal_markdown({"type": "proposal", **without_hash(shown)}, None)
    assert LABEL in text
    for entry in projection["ledger"]:
        assert str(entry["account"]) in text
    debtors = next(e for e in projection["ledger"] if e["party"])
    assert debtors["party_type"] == "Customer"
    assert debtors["debit"] == pytest.approx(draft["base_grand_total"])

    done = await gateway.confirm(me, shown["id"], shown["payload_hash"])
    assert done.status is Status.OK, done.for_model()
    written = posted(rest, "Sales Invoice", invoice)
    assert entries(written) == entries(projection["ledger"])

    # A cancel of it: the same entries, reversed, and nothing blocks it.
    cancel = proposal_of(await gateway.call(me, "sales_invoice.cancel", {"id": invoice}))
    reversal = cancel["projection"]
    assert reversal["action"] == "cancel"
    assert reversal["blocked_by"] == []
    assert not reversal["refusal"]
    flipped = [{**e, "debit": e["credit"], "credit": e["debit"]} for e in written]
    assert entries(reversal["ledger"]) == entries(flipped)
    assert (await gateway.confirm(me, cancel["id"], cancel["payload_hash"])).ok
    mirrored = posted(rest, "Sales Invoice", invoice, cancelled=1)
    assert entries(mirrored) == entries(written) + entries(reversal["ledger"])


async def test_a_receipt_shows_the_stock_it_moves(
    erp: ERPNextConnector, drill_erp: DrillERP, rest: RestERP
) -> None:
    receipt = draft_copy(drill_erp, "Purchase Receipt", posting_date=TEST_TODAY.isoformat())
    gateway, me = await signed_in(erp, "admin@demo.local")
    shown = proposal_of(await gateway.call(me, "purchase_receipt.submit", {"id": receipt}))
    stock = shown["projection"]["stock"]
    assert stock
    assert (await gateway.confirm(me, shown["id"], shown["payload_hash"])).ok
    moved = rest.rows(
        "Stock Ledger Entry",
        ["item_code", "warehouse", "actual_qty", "stock_value_difference"],
        [["voucher_type", "=", "Purchase Receipt"], ["voucher_no", "=", receipt],
         ["is_cancelled", "=", 0]],
    )  # fmt: skip
    assert Counter(
        (m["item"], m["warehouse"], m["in_qty"] - m["out_qty"], round(m["value_change"], 2))
        for m in stock
    ) == Counter(
        (r["item_code"], r["warehouse"], r["actual_qty"], round(r["stock_value_difference"], 2))
        for r in moved
    )
    assert entries(posted(rest, "Purchase Receipt", receipt)) == entries(
        shown["projection"]["ledger"]
    )


async def test_a_cancel_says_which_linked_documents_block_it_in_the_erps_words(
    erp: ERPNextConnector, drill_erp: DrillERP, rest: RestERP
) -> None:
    order = raw(
        demo(drill_erp),
        "select distinct so.name from `tabSales Order` so join `tabSales Invoice Item` sii "
        "on sii.sales_order = so.name join `tabSales Invoice` si on si.name = sii.parent "
        "where so.docstatus = 1 and si.docstatus = 1 order by so.name limit 1",
    )[0]["name"]
    gateway, me = await signed_in(erp, "admin@demo.local")
    shown = proposal_of(await gateway.call(me, "sales_order.cancel", {"id": order}))
    projection = shown["projection"]
    assert projection["blocked_by"], "a submitted invoice bills the order"
    assert {b["doctype"] for b in projection["blocked_by"]} >= {"Sales Invoice"}
    words = projection["refusal"]
    assert words.startswith(f"Cannot delete or cancel because Sales Order {order} is linked with")
    assert "Submitted documents linked to it, to cancel first" in proposal_markdown(
        {"type": "proposal", **shown}, None
    )
    refused = await gateway.confirm(me, shown["id"], shown["payload_hash"])
    assert refused.status is Status.ERP_REFUSED
    assert refused.refusal is not None
    assert refused.refusal["message"] == words  # what the ERP then says, word for word
    assert rest.client.get(f"/api/resource/Sales Order/{order}").json()["data"]["docstatus"] == 1


async def test_a_record_changed_in_between_is_projected_again_for_its_new_version(
    erp: ERPNextConnector, drill_erp: DrillERP
) -> None:
    invoice = draft_copy(drill_erp, "Sales Invoice", posting_date=TEST_TODAY.isoformat(),
                         due_date="2026-12-30", is_return=0)  # fmt: skip
    gateway, me = await signed_in(erp)
    first = proposal_of(await gateway.call(me, "sales_invoice.submit", {"id": invoice}))
    with someone_else(demo(drill_erp)) as other:
        doc = other.get(f"/api/resource/Sales Invoice/{invoice}").json()["data"]
        items = [{**row, "qty": row["qty"] * 10} for row in doc["items"]]
        assert other.put(f"/api/resource/Sales Invoice/{invoice}", json={"items": items}).is_success
    stale = await gateway.confirm(me, first["id"], first["payload_hash"])
    fresh = stale.proposal
    assert fresh is not None
    assert fresh["projection"]["modified"] == fresh["base_modified"] != first["base_modified"]
    before = sum(e["debit"] for e in first["projection"]["ledger"])
    after = sum(e["debit"] for e in fresh["projection"]["ledger"])
    assert after > before  # the ten-fold quantities, as the ERP now computes them


async def test_a_connector_without_the_capability_shows_none(
    erp: ERPNextConnector, drill_erp: DrillERP
) -> None:
    class Plain(ERPNextConnector):
        @property
        def profile(self) -> ConnectorProfile:
            full = super().profile
            return dataclasses.replace(
                full, capabilities=full.capabilities - {Capability.PROJECTION}
            )

    plain = Plain(erp.base_url, catalog=CATALOG)
    try:
        gateway, me = await signed_in(erp)
        gateway.connector = plain
        invoice = draft_copy(drill_erp, "Sales Invoice", posting_date=TEST_TODAY.isoformat(),
                             due_date="2026-12-30", is_return=0)  # fmt: skip
        shown = proposal_of(await gateway.call(me, "sales_invoice.submit", {"id": invoice}))
        assert "projection" not in shown
        assert "Projected" not in proposal_markdown({"type": "proposal", **shown}, None)
    finally:
        await plain.aclose()


async def test_the_api_shows_the_projection(drill_erp: DrillERP, tmp_path: Any) -> None:
    runtime = await make_runtime(drill_erp.url, tmp_path)
    harness = build_app(runtime, tmp_path)
    try:
        async with client_for(harness.app) as client:
            await sign_in(client, "admin@demo.local")
            me = await runtime.sign_in("admin@demo.local", "demo")
            invoice = draft_copy(drill_erp, "Sales Invoice", posting_date=TEST_TODAY.isoformat(),
                                 due_date="2026-12-30", is_return=0)  # fmt: skip
            shown = proposal_of(
                await runtime.gateway.call(me, "sales_invoice.submit", {"id": invoice})
            )
            got = (await client.get(f"/api/proposals/{shown['id']}")).json()
            assert got["projection"] == shown["projection"]
            assert got["projection"]["ledger"]
    finally:
        await runtime.aclose()


async def test_a_submit_the_erp_would_refuse_shows_its_words_before_the_confirm(
    erp: ERPNextConnector, drill_erp: DrillERP, rest: RestERP
) -> None:
    source = raw(
        demo(drill_erp), "select name from `tabDelivery Note` where docstatus = 1 limit 1"
    )[0]["name"]
    doc = rest.client.get(f"/api/resource/Delivery Note/{source}").json()["data"]
    items = [{k: v for k, v in row.items() if k not in _CHILD_SKIP} for row in doc["items"]]
    note = draft_copy(drill_erp, "Delivery Note", posting_date=TEST_TODAY.isoformat(),
                      items=[{**row, "qty": row["qty"] * 100000} for row in items])  # fmt: skip
    gateway, me = await signed_in(erp, "admin@demo.local")
    shown = proposal_of(await gateway.call(me, "delivery_note.submit", {"id": note}))
    projection = shown["projection"]
    assert projection["ledger"] == projection["stock"] == []
    assert "needed in" in projection["refusal"]  # Insufficient Stock, in the ERP's words
    refused = await gateway.confirm(me, shown["id"], shown["payload_hash"])
    assert refused.status is Status.ERP_REFUSED
    assert refused.refusal is not None
    assert refused.refusal["message"] == projection["refusal"]
