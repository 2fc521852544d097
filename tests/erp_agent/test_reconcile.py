"""A confirm interrupted by a timeout or a crash ends executed or failed — checked in the ERP as
the user, never written twice (issue: a crash mid-confirm left a proposal "executing" forever).

Real HTTP to a private copy of the seeded demo ERP; one server answers writes late (its
``write_delay`` test hook), so the agent times out after the ERP has written. A write without an
answer is "checking" until the window in which it could still arrive has passed (here a short
one). The truth is read from the ERP's own tables. Writes delivered late by a proxy, for every
kind of write: test_redteam_late_writes.py.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
from agent_helpers import signed_in_context

from conftest import TEST_TODAY, DemoERP, raw
from demo_erp.context import Settings
from demo_erp.server import start_in_thread
from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.gateway import reconcile
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.reconcile import InFlight
from erp_agent.store.memory import MemoryStore
from erp_agent.store.records import Proposal, ProposalStatus
from erp_agent.tools.base import Tool, ToolContext, ToolRegistry
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
TOOLS = catalog_tools(CATALOG)
SLOW_WRITE = 1.5  # seconds the slow server holds a committed write's reply
AGENT_TIMEOUT = 0.5  # seconds the agent waits for one ERP call
# No proxy; the grace covers the slow server's commit (it commits before holding the reply).
WINDOW = InFlight(dt.timedelta(seconds=AGENT_TIMEOUT), dt.timedelta(0), dt.timedelta(seconds=0.5))


@dataclass(frozen=True)
class Pair:
    fast: DemoERP
    slow: DemoERP


@pytest.fixture(scope="module")
def erps(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    path = tmp_path_factory.mktemp("reconcile") / "demo.sqlite"
    shutil.copy(demo_erp.path, path)
    fast = start_in_thread(Settings(db_path=str(path), today=TEST_TODAY))
    slow = start_in_thread(Settings(db_path=str(path), today=TEST_TODAY, write_delay=SLOW_WRITE))
    yield Pair(DemoERP(fast.url, fast.url, path), DemoERP(slow.url, slow.url, path))
    fast.stop()
    slow.stop()


@pytest.fixture
async def slow_erp(erps: Pair) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(erps.slow.url, catalog=CATALOG, timeout=AGENT_TIMEOUT)
    yield connector
    await connector.aclose()


@pytest.fixture
async def fast_erp(erps: Pair) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(erps.fast.url, catalog=CATALOG)
    yield connector
    await connector.aclose()


async def signed_in(erp: ERPNextConnector, user: str) -> tuple[Gateway, Session]:
    ctx = await signed_in_context(erp, user, [t.name for t in TOOLS], CATALOG)
    gateway = Gateway(ToolRegistry(TOOLS), MemoryStore(), erp, CATALOG, in_flight=WINDOW)
    return gateway, ctx.session


async def decided(gateway: Gateway, proposal_id: str, checking: Outcome) -> Proposal:
    """The proposal once the gateway's own check, due after the window, has decided it."""
    assert checking.status is Status.CHECKING, checking.for_model()
    assert "Unknown — checking" in checking.message
    for _ in range(100):
        found = await gateway.store.get_proposal(proposal_id)
        assert found is not None
        if found.status is not ProposalStatus.CHECKING:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{proposal_id} is still checking")


async def propose(gateway: Gateway, me: Session, tool: str, args: dict[str, object]) -> Proposal:
    outcome = await gateway.call(me, tool, args)
    assert outcome.status is Status.PROPOSAL, outcome.for_model()
    assert outcome.proposal is not None
    found = await gateway.store.get_proposal(outcome.proposal["id"])
    assert found is not None
    return found


def leads_named(demo: DemoERP, name: str) -> int:
    return len(raw(demo, "select name from tabLead where lead_name = ?", name))


async def test_a_create_whose_reply_timed_out_is_found_in_the_erp_not_written_again(
    slow_erp: ERPNextConnector, erps: Pair
) -> None:
    gateway, me = await signed_in(slow_erp, "admin@demo.local")
    proposal = await propose(gateway, me, "lead.create", {"name": "Timeout Prospect Ltd"})
    outcome = await gateway.confirm(me, proposal.id, proposal.payload_hash)
    assert leads_named(erps.fast, "Timeout Prospect Ltd") == 1
    again = await gateway.confirm(me, proposal.id, proposal.payload_hash)
    assert again.status is Status.REFUSED
    assert "Nothing more was written" in again.message
    stored = await decided(gateway, proposal.id, outcome)
    assert stored.status is ProposalStatus.EXECUTED
    assert stored.result is not None
    created = raw(
        erps.fast,
        "select name, erp_agent_write_id from tabLead where lead_name = ?",
        "Timeout Prospect Ltd",
    )
    assert stored.result["id"] == created[0]["name"]
    # Noted before the write was sent, and carried by it: the record is found by its marker.
    assert stored.checkpoint is not None
    assert stored.checkpoint["marker"] == proposal.id == created[0]["erp_agent_write_id"]
    assert leads_named(erps.fast, "Timeout Prospect Ltd") == 1


async def test_a_create_without_a_marker_field_is_found_by_owner_and_time(
    slow_erp: ERPNextConnector, erps: Pair
) -> None:
    """Customer has no write-marker field (named by its name, a duplicate is refused anyway):
    the record created by the user after the checkpoint with the payload's values is the write."""
    gateway, me = await signed_in(slow_erp, "admin@demo.local")
    args = {"name": "Timeout Customer Ltd", "customer_type": "Company"}
    proposal = await propose(gateway, me, "customer.create", args)
    outcome = await gateway.confirm(me, proposal.id, proposal.payload_hash)
    stored = await decided(gateway, proposal.id, outcome)
    assert stored.status is ProposalStatus.EXECUTED, stored.error
    assert stored.checkpoint is not None
    assert "marker" not in stored.checkpoint
    assert stored.result is not None
    assert stored.result["id"] == "Timeout Customer Ltd"


async def test_an_update_whose_reply_timed_out_is_decided_from_the_record(
    slow_erp: ERPNextConnector, erps: Pair
) -> None:
    gateway, me = await signed_in(slow_erp, "admin@demo.local")
    lead = raw(erps.fast, "select name from tabLead order by name limit 1")[0]["name"]
    proposal = await propose(
        gateway, me, "lead.update", {"id": lead, "values": {"organization": "Late Reply Ltd"}}
    )
    outcome = await gateway.confirm(me, proposal.id, proposal.payload_hash)
    stored = await decided(gateway, proposal.id, outcome)
    assert raw(erps.fast, "select company_name from tabLead where name = ?", lead)[0][0] == (
        "Late Reply Ltd"
    )
    assert stored.status is ProposalStatus.EXECUTED


async def test_a_confirm_that_died_before_writing_fails_and_is_offered_again(
    fast_erp: ERPNextConnector, erps: Pair
) -> None:
    gateway, me = await signed_in(fast_erp, "admin@demo.local")
    lead = raw(erps.fast, "select name, modified from tabLead order by name limit 1 offset 1")[0]
    proposal = await propose(
        gateway, me, "lead.update", {"id": lead["name"], "values": {"organization": "Never Ltd"}}
    )
    assert await gateway.store.claim_proposal(proposal.id)  # the process died right here
    (outcome,) = await gateway.sweep(lambda p: _same_session(p, me), everything=True)
    assert outcome.status is Status.ERROR
    assert "unchanged: nothing was written" in outcome.message
    assert outcome.proposal is not None  # the retry: the same change, to confirm again
    stored = await gateway.store.get_proposal(proposal.id)
    assert stored is not None
    assert stored.status is ProposalStatus.FAILED
    assert stored.superseded_by == outcome.proposal["id"]
    after = raw(
        erps.fast, "select company_name, modified from tabLead where name = ?", lead["name"]
    )
    assert after[0]["modified"] == lead["modified"]
    retry = await gateway.confirm(me, outcome.proposal["id"], outcome.proposal["payload_hash"])
    assert retry.status is Status.OK, retry.for_model()
    assert raw(erps.fast, "select company_name from tabLead where name = ?", lead["name"])[0][
        0
    ] == ("Never Ltd")


async def test_an_update_that_died_after_writing_is_marked_executed(
    fast_erp: ERPNextConnector, erps: Pair
) -> None:
    gateway, me = await signed_in(fast_erp, "admin@demo.local")
    lead = raw(erps.fast, "select name from tabLead order by name limit 1 offset 2")[0]["name"]
    proposal = await propose(
        gateway, me, "lead.update", {"id": lead, "values": {"organization": "Written Ltd"}}
    )
    assert await gateway.store.claim_proposal(proposal.id)
    # The write reached the ERP; the process died before recording it.
    await fast_erp.update(
        me.credential,
        "lead",
        lead,
        {"organization": "Written Ltd"},
        modified=proposal.base_modified,
    )
    assert await gateway.sweep(lambda p: _same_session(p, me)) == []  # not overdue yet
    (outcome,) = await gateway.sweep(lambda p: _same_session(p, me), everything=True)
    assert outcome.status is Status.OK
    stored = await gateway.store.get_proposal(proposal.id)
    assert stored is not None
    assert stored.status is ProposalStatus.EXECUTED
    assert stored.result is not None
    assert stored.result["organization"] == "Written Ltd"


async def test_a_create_that_cannot_be_told_apart_is_failed_and_never_retried(
    fast_erp: ERPNextConnector, erps: Pair
) -> None:
    """Without a marker field (Customer), a record the user created since that is not this one
    leaves it undecidable: failed, and nothing offered again."""
    gateway, me = await signed_in(fast_erp, "admin@demo.local")
    args = {"name": "Ambiguous Customer", "customer_type": "Company"}
    proposal = await propose(gateway, me, "customer.create", args)
    assert await gateway.store.claim_proposal(proposal.id)
    tool = gateway.registry.get("customer.create")
    assert tool is not None
    await _note_checkpoint(gateway, me, fast_erp, proposal.id, tool)
    # Meanwhile the user created another customer (not this one) in the ERP.
    await fast_erp.create(
        me.credential, "customer", {"name": "Something Else Entirely", "customer_type": "Company"}
    )
    (outcome,) = await gateway.sweep(lambda p: _same_session(p, me), everything=True)
    assert outcome.status is Status.ERROR
    assert "check them in the ERP" in outcome.message
    assert outcome.proposal is None
    assert not raw(erps.fast, "select name from tabCustomer where name = 'Ambiguous Customer'")
    stored = await gateway.store.get_proposal(proposal.id)
    assert stored is not None
    assert stored.status is ProposalStatus.FAILED


async def test_while_the_erp_is_unreachable_the_proposal_waits_for_the_next_sweep(
    erps: Pair,
) -> None:
    good = ERPNextConnector(erps.fast.url, catalog=CATALOG)
    gateway, me = await signed_in(good, "admin@demo.local")
    proposal = await propose(gateway, me, "lead.create", {"name": "Unreachable Prospect"})
    assert await gateway.store.claim_proposal(proposal.id)
    tool = gateway.registry.get("lead.create")
    assert tool is not None
    await _note_checkpoint(gateway, me, good, proposal.id, tool)  # the write may have been sent
    gone = ERPNextConnector("http://127.0.0.1:9", catalog=CATALOG, timeout=0.2)
    gone.client.backoff = 0.0
    gateway.connector = gone
    assert await gateway.sweep(lambda p: _same_session(p, me), everything=True) == []
    stored = await gateway.store.get_proposal(proposal.id)
    assert stored is not None
    assert stored.status is ProposalStatus.EXECUTING
    gateway.connector = good
    (outcome,) = await gateway.sweep(lambda p: _same_session(p, me), everything=True)
    assert outcome.status is Status.ERROR  # the ERP holds no such lead: offered again
    assert "it was not created" in outcome.message
    assert outcome.proposal is not None
    await gone.aclose()
    await good.aclose()


def test_overdue_follows_the_confirm_timeout() -> None:
    from erp_agent.gateway.reconcile import overdue

    now = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)
    claimed = Proposal(
        "p", "u", "s", "o", "lead.create", {}, "h", "x", status=ProposalStatus.EXECUTING,
        claimed_at=now - dt.timedelta(seconds=30),
    )  # fmt: skip
    assert not overdue(claimed, now, dt.timedelta(seconds=31))
    assert overdue(claimed, now, dt.timedelta(seconds=30))


async def _same_session(proposal: Proposal, session: Session) -> Session | None:
    return session if proposal.session_id == session.id else None


async def _note_checkpoint(
    gateway: Gateway, me: Session, erp: ERPNextConnector, proposal_id: str, tool: Tool
) -> None:
    """What a confirm notes just before it sends the write (it died right after)."""
    now = dt.datetime.now(dt.UTC).isoformat()
    noted = await reconcile.checkpoint(ToolContext(me, erp, CATALOG), tool, proposal_id)
    await gateway.store.set_checkpoint(proposal_id, {**noted, "sent_at": now, "settle_after": now})
