"""Proposals are bound to the version of the record the user saw (issue: a confirmed submit of
a USD 1,474.07 invoice submitted USD 1,474,070.40 after someone edited it in between).

Real HTTP to the demo ERP, on a private copy of the seeded data; the truth is read from the
ERP's own tables and REST API, never through the code under test.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from agent_helpers import signed_in_context
from erp_edits import draft_invoice, someone_else

from conftest import TEST_TODAY, DemoERP, raw
from demo_erp.context import Settings
from demo_erp.server import RunningServer, start_in_thread
from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import ErpRefusal
from erp_agent.gateway.gateway import Gateway
from erp_agent.store.memory import MemoryStore
from erp_agent.store.records import ProposalStatus
from erp_agent.tools.base import ToolRegistry
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
TOOLS = catalog_tools(CATALOG)
STALE = "Document has been modified after you have opened it"


@pytest.fixture(scope="module")
def erp_copy(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoERP]:
    """A private copy of the seeded ERP: these tests submit, cancel and edit documents."""
    path = tmp_path_factory.mktemp("stale") / "demo.sqlite"
    shutil.copy(demo_erp.path, path)
    server: RunningServer = start_in_thread(Settings(db_path=str(path), today=TEST_TODAY))
    yield DemoERP(server.url, server.url, path)
    server.stop()


@pytest.fixture
async def erp(erp_copy: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(erp_copy.url, catalog=CATALOG)
    yield connector
    await connector.aclose()


async def signed_in(erp: ERPNextConnector, user: str) -> tuple[Gateway, Session]:
    ctx = await signed_in_context(erp, user, [t.name for t in TOOLS], CATALOG)
    return Gateway(ToolRegistry(TOOLS), MemoryStore(), erp, CATALOG), ctx.session


def proposal_of(outcome: Outcome) -> dict[str, Any]:
    assert outcome.status is Status.PROPOSAL, outcome.for_model()
    assert outcome.proposal is not None
    return outcome.proposal


async def test_submit_of_an_invoice_edited_in_between_is_refused_not_submitted(
    erp: ERPNextConnector, erp_copy: DemoERP
) -> None:
    gateway, me = await signed_in(erp, "accounts.manager@demo.local")
    invoice = draft_invoice(erp_copy)
    shown = proposal_of(await gateway.call(me, "sales_invoice.submit", {"id": invoice["name"]}))
    assert shown["base_modified"] == invoice["modified"]
    assert shown["document"]["total"] == invoice["grand_total"]

    # Someone multiplies the quantities by 1000 while the proposal waits for the confirm.
    with someone_else(erp_copy) as other:
        doc = other.get(f"/api/resource/Sales Invoice/{invoice['name']}").json()["data"]
        items = [{**row, "qty": row["qty"] * 1000} for row in doc["items"]]
        edited = other.put(f"/api/resource/Sales Invoice/{invoice['name']}", json={"items": items})
        assert edited.status_code == 200, edited.text
    new_total = raw(
        erp_copy, "select grand_total from `tabSales Invoice` where name = ?", invoice["name"]
    )[0]["grand_total"]
    assert new_total != invoice["grand_total"]

    outcome = await gateway.confirm(me, shown["id"], shown["payload_hash"])

    state = raw(
        erp_copy, "select docstatus from `tabSales Invoice` where name = ?", invoice["name"]
    )
    assert state[0]["docstatus"] == 0, "the edited invoice must not have been submitted"
    assert outcome.status is Status.ERP_REFUSED
    assert outcome.refusal is not None
    assert outcome.refusal["exc_type"] == "TimestampMismatchError"
    assert STALE in outcome.refusal["message"]
    assert STALE in outcome.message  # the user sees the ERP's refusal verbatim
    assert "Nothing was written" in outcome.message
    old = await gateway.store.get_proposal(shown["id"])
    assert old is not None
    assert old.status is ProposalStatus.STALE
    # A fresh proposal shows the invoice as it is now, and binds to its new version.
    fresh = outcome.proposal
    assert fresh is not None
    assert old.superseded_by == fresh["id"] != shown["id"]
    assert fresh["document"]["total"] == new_total
    assert fresh["payload_hash"] != shown["payload_hash"]
    now_modified = raw(
        erp_copy, "select modified from `tabSales Invoice` where name = ?", invoice["name"]
    )[0]["modified"]
    assert fresh["base_modified"] == now_modified

    done = await gateway.confirm(me, fresh["id"], fresh["payload_hash"])
    assert done.status is Status.OK, done.for_model()
    state = raw(
        erp_copy,
        "select docstatus, grand_total from `tabSales Invoice` where name = ?",
        invoice["name"],
    )
    assert (state[0]["docstatus"], state[0]["grand_total"]) == (1, new_total)


async def test_an_unchanged_invoice_submits_at_the_version_shown(
    erp: ERPNextConnector, erp_copy: DemoERP
) -> None:
    gateway, me = await signed_in(erp, "accounts.manager@demo.local")
    invoice = draft_invoice(erp_copy)
    shown = proposal_of(await gateway.call(me, "sales_invoice.submit", {"id": invoice["name"]}))
    done = await gateway.confirm(me, shown["id"], shown["payload_hash"])
    assert done.status is Status.OK, done.for_model()
    assert (
        raw(erp_copy, "select docstatus from `tabSales Invoice` where name = ?", invoice["name"])[
            0
        ]["docstatus"]
        == 1
    )
    # Submitting it again is refused before any proposal: it would change nothing.
    again = await gateway.call(me, "sales_invoice.submit", {"id": invoice["name"]})
    assert again.status is Status.INVALID
    assert "only a draft can be submitted" in again.message
    assert "already submitted" in again.message
    assert await gateway.store.list_proposals(status=ProposalStatus.PENDING) == []


async def test_cancel_of_a_draft_is_never_proposed(
    erp: ERPNextConnector, erp_copy: DemoERP
) -> None:
    gateway, me = await signed_in(erp, "accounts.manager@demo.local")
    invoice = draft_invoice(erp_copy)
    outcome = await gateway.call(me, "sales_invoice.cancel", {"id": invoice["name"]})
    assert outcome.status is Status.INVALID
    assert "only a submitted document can be cancelled" in outcome.message


async def test_an_update_is_recomputed_against_the_newer_value_never_overwriting_it(
    erp: ERPNextConnector, erp_copy: DemoERP
) -> None:
    gateway, me = await signed_in(erp, "admin@demo.local")
    customer = raw(erp_copy, "select name, credit_limit from tabCustomer order by name limit 1")[0]
    mine, theirs = float(customer["credit_limit"] or 0) + 1000, 777_777.0
    shown = proposal_of(
        await gateway.call(
            me, "customer.update", {"id": customer["name"], "values": {"credit_limit": mine}}
        )
    )
    assert shown["diff"][0]["before"] == customer["credit_limit"]
    with someone_else(erp_copy) as other:
        reply = other.put(
            f"/api/resource/Customer/{customer['name']}", json={"credit_limit": theirs}
        )
        assert reply.status_code == 200, reply.text

    outcome = await gateway.confirm(me, shown["id"], shown["payload_hash"])

    assert outcome.status is Status.ERP_REFUSED
    assert STALE in outcome.message
    stored = raw(erp_copy, "select credit_limit from tabCustomer where name = ?", customer["name"])
    assert stored[0]["credit_limit"] == theirs, "the newer value must not be overwritten"
    fresh = outcome.proposal
    assert fresh is not None
    assert fresh["diff"] == [
        {"field": "credit_limit", "label": "Credit limit", "before": theirs, "after": mine}
    ]
    done = await gateway.confirm(me, fresh["id"], fresh["payload_hash"])
    assert done.status is Status.OK, done.for_model()
    stored = raw(erp_copy, "select credit_limit from tabCustomer where name = ?", customer["name"])
    assert stored[0]["credit_limit"] == mine


async def test_a_stale_update_already_made_by_someone_else_offers_nothing_to_confirm(
    erp: ERPNextConnector, erp_copy: DemoERP
) -> None:
    gateway, me = await signed_in(erp, "admin@demo.local")
    customer = raw(
        erp_copy, "select name, credit_limit from tabCustomer order by name limit 1 offset 1"
    )[0]
    target = float(customer["credit_limit"] or 0) + 5
    shown = proposal_of(
        await gateway.call(
            me, "customer.update", {"id": customer["name"], "values": {"credit_limit": target}}
        )
    )
    with someone_else(erp_copy) as other:
        other.put(f"/api/resource/Customer/{customer['name']}", json={"credit_limit": target})
    outcome = await gateway.confirm(me, shown["id"], shown["payload_hash"])
    assert outcome.status is Status.ERP_REFUSED
    assert outcome.proposal is None
    assert "nothing would change" in outcome.message
    stale = await gateway.store.get_proposal(shown["id"])
    assert stale is not None
    assert (stale.status, stale.superseded_by) == (ProposalStatus.STALE, None)


async def test_delete_and_workflow_action_check_the_version_first(
    erp: ERPNextConnector, erp_copy: DemoERP
) -> None:
    """Frappe's delete and apply_workflow reload the record, so the connector checks."""
    gateway, me = await signed_in(erp, "admin@demo.local")
    created = await erp.create(me.credential, "lead", {"name": "Stale Prospect"})
    shown = proposal_of(await gateway.call(me, "lead.delete", {"id": created["id"]}))
    with someone_else(erp_copy) as other:
        other.put(f"/api/resource/Lead/{created['id']}", json={"company_name": "Edited Ltd"})
    outcome = await gateway.confirm(me, shown["id"], shown["payload_hash"])
    assert outcome.status is Status.ERP_REFUSED
    assert STALE in outcome.message
    assert raw(erp_copy, "select name from tabLead where name = ?", created["id"])

    manager_gateway, manager = await signed_in(erp, "purchase.manager@demo.local")
    pending = raw(
        erp_copy,
        "select name from `tabPurchase Order` where workflow_state = 'Pending Approval' "
        "and docstatus = 0 order by name limit 1",
    )[0]["name"]
    approve = proposal_of(
        await manager_gateway.call(
            manager, "purchase_order.workflow_action", {"id": pending, "action": "Approve"}
        )
    )
    with someone_else(erp_copy) as other:
        reply = other.put(f"/api/resource/Purchase Order/{pending}", json={"schedule_date": None})
        assert reply.status_code == 200, reply.text
    refused = await manager_gateway.confirm(manager, approve["id"], approve["payload_hash"])
    assert refused.status is Status.ERP_REFUSED
    assert STALE in refused.message
    row = raw(
        erp_copy,
        "select workflow_state, docstatus from `tabPurchase Order` where name = ?",
        pending,
    )[0]
    assert (row["workflow_state"], row["docstatus"]) == ("Pending Approval", 0)
    assert refused.proposal is not None  # the same approval, at the new version


async def test_the_connector_sends_the_version_and_frappe_refuses_a_stale_one(
    erp: ERPNextConnector, erp_copy: DemoERP
) -> None:
    """Independent of the tools: update/submit/cancel with an old ``modified`` are refused
    by the ERP itself (check_if_latest), and nothing changes."""
    cred = await erp.login("accounts.manager@demo.local", "demo")
    invoice = draft_invoice(erp_copy)
    with pytest.raises(ErpRefusal) as refused:
        await erp.submit(cred, "sales_invoice", invoice["name"], modified="2001-01-01 00:00:00")
    assert refused.value.refusal.exc_type == "TimestampMismatchError"
    with pytest.raises(ErpRefusal):
        await erp.update(
            cred, "sales_invoice", invoice["name"], {"remarks": "x"}, modified="2001-01-01"
        )
    row = raw(
        erp_copy,
        "select docstatus, modified, remarks from `tabSales Invoice` where name = ?",
        invoice["name"],
    )[0]
    assert (row["docstatus"], row["modified"]) == (0, invoice["modified"])
    submitted = await erp.submit(cred, "sales_invoice", invoice["name"], modified=row["modified"])
    with pytest.raises(ErpRefusal) as late:
        await erp.cancel(cred, "sales_invoice", invoice["name"], modified=row["modified"])
    assert late.value.refusal.exc_type == "TimestampMismatchError"
    cancelled = await erp.cancel(
        cred, "sales_invoice", invoice["name"], modified=str(submitted["modified"])
    )
    assert cancelled["modified"] != submitted["modified"]
    assert (
        raw(erp_copy, "select docstatus from `tabSales Invoice` where name = ?", invoice["name"])[
            0
        ]["docstatus"]
        == 2
    )
