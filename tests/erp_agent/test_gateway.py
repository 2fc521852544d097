"""Every path through Gateway.call / confirm / reject, each with its audit event."""

from __future__ import annotations

import datetime as dt

import pytest
from gateway_doubles import make_gateway, session

from erp_agent.calls.outcome import Status
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.proposals import payload_hash
from erp_agent.store.records import Decision, ProposalStatus

pytestmark = pytest.mark.anyio


async def test_read_runs_and_returns_the_result_unchanged() -> None:
    gateway, _, store = make_gateway()
    outcome = await gateway.call(session(), "sales_invoice.list", {"customer": "Acme Ltd"})
    assert outcome.status is Status.OK
    assert outcome.data == {"rows": [{"customer": "Acme Ltd", "total": 10.5}], "exact": True}
    assert outcome.for_model() == {"status": "ok", "result": outcome.data}
    (event,) = await store.events()
    assert (event.user, event.tool, event.decision) == (
        "amina@demo.local",
        "sales_invoice.list",
        Decision.ALLOWED,
    )
    assert len(event.args_digest) == 16
    assert event.latency_ms >= 0


async def test_unknown_and_not_allowed_tools_are_refused_even_when_named() -> None:
    gateway, erp, store = make_gateway()
    unknown = await gateway.call(session(), "payroll.run_everything", {})
    assert unknown.status is Status.REFUSED
    assert "no tool named" in unknown.message
    narrow = session(allowed={"sales_invoice.list"})
    refused = await gateway.call(narrow, "lead.create", {"name": "X"})
    assert refused.status is Status.REFUSED
    assert "not available to amina@demo.local" in refused.message
    assert erp.executed == []
    assert await store.list_proposals() == []
    assert [e.decision for e in await store.events()] == [Decision.REFUSED, Decision.REFUSED]


async def test_read_only_tenant_never_proposes_a_write() -> None:
    gateway, erp, store = make_gateway()
    outcome = await gateway.call(session(read_only=True), "lead.create", {"name": "X"})
    assert outcome.status is Status.REFUSED
    assert "read-only" in outcome.message
    assert await store.list_proposals() == []
    assert erp.executed == []


async def test_invalid_arguments_list_every_problem() -> None:
    gateway, _, store = make_gateway()
    outcome = await gateway.call(
        session(), "sales_invoice.list", {"customer": 5, "limit": 0, "colour": "red"}
    )
    assert outcome.status is Status.INVALID
    assert any(e.startswith("customer: 5 is not of type 'string'") for e in outcome.errors)
    assert any(e.startswith("limit: 0 is less than the minimum of 1") for e in outcome.errors)
    assert any("'colour' was unexpected" in e for e in outcome.errors)
    assert outcome.for_model()["errors"] == outcome.errors
    not_object = await gateway.call(session(), "sales_invoice.list", ["x"])
    assert not_object.errors == ["arguments must be a JSON object, not list"]
    assert {e.decision for e in await store.events()} == {Decision.INVALID}


async def test_erp_refusal_is_passed_through_verbatim() -> None:
    gateway, _, store = make_gateway()
    outcome = await gateway.call(session(), "sales_invoice.list", {"customer": "Forbidden"})
    assert outcome.status is Status.ERP_REFUSED
    assert outcome.refusal == {
        "message": "No permission for Customer", "exc_type": "PermissionError", "status": 403,
        "messages": [], "title": None,
    }  # fmt: skip
    (event,) = await store.events()
    assert event.decision is Decision.ERP_REFUSED
    assert event.reason == "No permission for Customer"


async def test_write_becomes_a_proposal_and_confirm_executes_exactly_it_once() -> None:
    gateway, erp, store = make_gateway()
    me = session()
    proposed = await gateway.call(me, "lead.create", {"name": "Jane", "amount": 12.5})
    assert proposed.status is Status.PROPOSAL
    assert erp.executed == []
    view = proposed.proposal
    assert view is not None
    assert view["payload"] == {"name": "Jane", "amount": 12.5}
    assert view["payload_hash"] == payload_hash("lead.create", {"name": "Jane", "amount": 12.5})
    assert "The user must confirm it" in proposed.for_model()["message"]
    done = await gateway.confirm(me, view["id"], view["payload_hash"])
    assert done.status is Status.OK
    assert erp.executed == [("amina@demo.local", {"name": "Jane", "amount": 12.5})]
    again = await gateway.confirm(me, view["id"])
    assert again.status is Status.REFUSED
    assert "already executed" in again.message
    assert len(erp.executed) == 1
    stored = await store.get_proposal(view["id"])
    assert stored is not None
    assert stored.status is ProposalStatus.EXECUTED
    decisions = [e.decision for e in reversed(await store.events())]
    assert decisions == [Decision.PROPOSED, Decision.CONFIRMED, Decision.REFUSED]


async def test_another_user_or_session_cannot_confirm() -> None:
    gateway, erp, _ = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    other_user = await gateway.confirm(session("mallory@demo.local"), pid)
    assert other_user.status is Status.REFUSED
    assert "belongs to another user" in other_user.message
    other_session = await gateway.confirm(session(sid="s2"), pid)
    assert "another session" in other_session.message
    assert erp.executed == []


async def test_expired_proposal_is_refused_and_marked() -> None:
    now = [dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)]
    gateway, erp, store = make_gateway(clock=lambda: now[0], proposal_ttl=dt.timedelta(minutes=15))
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    now[0] += dt.timedelta(minutes=15)
    late = await gateway.confirm(session(), pid)
    assert late.status is Status.REFUSED
    assert "expired at 09:15 UTC" in late.message
    stored = await store.get_proposal(pid)
    assert stored is not None
    assert stored.status is ProposalStatus.EXPIRED
    assert erp.executed == []


async def test_tampered_payload_is_refused() -> None:
    gateway, erp, store = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    store._proposals[pid].payload["name"] = "Mallory"  # someone edits the stored payload
    tampered = await gateway.confirm(session(), pid)
    assert tampered.status is Status.REFUSED
    assert "changed after it was prepared" in tampered.message
    assert erp.executed == []


async def test_confirm_with_a_different_hash_is_refused() -> None:
    gateway, erp, _ = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    wrong = await gateway.confirm(
        session(), pid, payload_hash("lead.create", {"name": "Someone else"})
    )
    assert wrong.status is Status.REFUSED
    assert erp.executed == []


async def test_erp_refusal_at_execution_is_returned_verbatim_and_kept() -> None:
    gateway, erp, store = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    erp.refuse_next = True
    failed = await gateway.confirm(session(), pid)
    assert failed.status is Status.ERP_REFUSED
    assert failed.refusal is not None
    assert failed.refusal["message"] == "Could not find Customer: Nobody Ltd"
    stored = await store.get_proposal(pid)
    assert stored is not None
    assert stored.status is ProposalStatus.FAILED
    assert stored.error == failed.refusal


async def test_reject_closes_the_proposal() -> None:
    gateway, erp, store = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    assert (await gateway.reject(session("mallory@demo.local"), pid)).status is Status.REFUSED
    assert (await gateway.reject(session(), pid)).status is Status.OK
    assert (await gateway.confirm(session(), pid)).status is Status.REFUSED
    stored = await store.get_proposal(pid)
    assert stored is not None
    assert stored.status is ProposalStatus.REJECTED
    assert erp.executed == []


async def test_tool_withdrawn_after_proposal_cannot_be_confirmed() -> None:
    gateway, erp, _ = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    narrowed = session(allowed={"sales_invoice.list"})
    outcome = await gateway.confirm(narrowed, pid)
    assert outcome.status is Status.REFUSED
    assert erp.executed == []


async def test_another_session_of_the_same_user_cannot_reject() -> None:
    gateway, erp, store = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    pid = proposed.proposal["id"] if proposed.proposal else ""
    elsewhere = await gateway.reject(session(sid="s2"), pid)
    assert elsewhere.status is Status.REFUSED
    assert "another session" in elsewhere.message
    someone = await gateway.reject(session("mallory@demo.local"), pid)
    assert someone.status is Status.REFUSED
    stored = await store.get_proposal(pid)
    assert stored is not None
    assert stored.status is ProposalStatus.PENDING
    # Still confirmable where it was made.
    done = await gateway.confirm(session(), pid)
    assert done.status is Status.OK
    assert len(erp.executed) == 1


async def test_proposals_carry_their_conversation() -> None:
    gateway, _, store = make_gateway()
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"}, conversation_id="c1")
    assert proposed.proposal is not None
    assert proposed.proposal["conversation_id"] == "c1"
    (stored,) = await store.list_proposals(conversation_id="c1")
    assert stored.id == proposed.proposal["id"]
    assert await store.list_proposals(conversation_id="c2") == []


async def test_confirm_runs_on_the_business_date_the_proposal_was_prepared_on() -> None:
    # An engine pinned to an eval's day prepares the write (it passes ``today=`` to the call);
    # the user confirms it later through another gateway (the server's), whose own date differs.
    pinned, own = dt.date(2026, 9, 30), dt.date(2026, 12, 7)
    engine_side, erp, store = make_gateway()
    proposed = await engine_side.call(session(), "lead.create", {"name": "Jane"}, today=pinned)
    assert proposed.proposal is not None
    stored = await store.get_proposal(proposed.proposal["id"])
    assert stored is not None
    assert stored.business_date == pinned
    assert "business_date" not in proposed.proposal  # the view shown and confirmed is unchanged
    server_side = Gateway(
        engine_side.registry, store, engine_side.connector, engine_side.catalog, today=own
    )
    done = await server_side.confirm(session(), proposed.proposal["id"])
    assert done.status is Status.OK
    assert erp.executed_on == [pinned]


async def test_a_proposal_without_a_business_date_confirms_on_the_gateways() -> None:
    # A row stored before the column, or prepared unpinned: the confirming gateway's own date,
    # and with none pinned there either, None (the user's clock), as before.
    own = dt.date(2026, 12, 7)
    gateway, erp, store = make_gateway(today=own)
    proposed = await gateway.call(session(), "lead.create", {"name": "Jane"})
    assert proposed.proposal is not None
    stored = await store.get_proposal(proposed.proposal["id"])
    assert stored is not None
    assert stored.business_date == own  # prepared on the gateway's pinned date
    stored.business_date = None  # as a row stored before the column reads back
    await store.add_proposal(stored)
    assert (await gateway.confirm(session(), stored.id)).status is Status.OK
    assert erp.executed_on == [own]

    unpinned, unpinned_erp, _ = make_gateway()
    proposed = await unpinned.call(session(), "lead.create", {"name": "Joe"})
    assert proposed.proposal is not None
    assert (await unpinned.confirm(session(), proposed.proposal["id"])).status is Status.OK
    assert unpinned_erp.executed_on == [None]
