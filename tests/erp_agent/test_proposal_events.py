"""Proposals made and decided are typed events on the one event stream, whichever channel
decides them, and the audit log is the stream's subscriber (the only writer of audit rows)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from gateway_doubles import make_gateway, session
from server_doubles import CREATE_LEAD, Harness, build_app, client_for, make_runtime, sign_in
from test_event_stream import ask

from erp_agent.calls.outcome import Status
from erp_agent.errors import StoreError
from erp_agent.events import Audited, AuditLog, Event, ProposalDecided, ProposalMade, ToolDecided
from erp_agent.gateway.gateway import TURN_ID
from erp_agent.store.records import AuditEvent, Decision

pytestmark = pytest.mark.anyio
ADMIN = "admin@demo.local"


def watch(gateway: Any) -> list[Event]:
    seen: list[Event] = []
    gateway.listeners.append(seen.append)
    return seen


async def propose_in_turn(gateway: Any, turn_id: str = "turn_a") -> str:
    token = TURN_ID.set(turn_id)
    try:
        outcome = await gateway.call(
            session(), "lead.create", {"name": "Jane"}, conversation_id="conv_1"
        )
    finally:
        TURN_ID.reset(token)
    assert outcome.proposal is not None
    return str(outcome.proposal["id"])


async def test_a_confirm_outside_the_turn_names_the_turn_that_made_the_proposal() -> None:
    gateway, _, _ = make_gateway()
    seen = watch(gateway)
    pid = await propose_in_turn(gateway)
    assert (await gateway.confirm(session(), pid)).status is Status.OK
    made, decided = seen
    assert isinstance(made, ProposalMade)
    assert (made.turn_id, made.proposal_id, made.decision) == ("turn_a", pid, Decision.PROPOSED)
    assert isinstance(decided, ProposalDecided)
    assert (decided.turn_id, decided.conversation_id, decided.user, decided.org) == (
        "turn_a",
        "conv_1",
        "amina@demo.local",
        made.org,
    )
    assert (decided.proposal_id, decided.action, decided.decision) == (
        pid,
        "confirm",
        Decision.CONFIRMED,
    )
    assert decided.refusal is None


async def test_reject_refusal_and_the_erps_refusal_are_decisions_on_the_stream() -> None:
    gateway, erp, _ = make_gateway()
    seen = watch(gateway)
    first = await propose_in_turn(gateway)
    await gateway.reject(session("mallory@demo.local"), first)  # not the owner
    await gateway.reject(session(), first)
    second = await propose_in_turn(gateway, "turn_b")
    erp.refuse_next = True
    await gateway.confirm(session(), second)
    decided = [e for e in seen if isinstance(e, ProposalDecided)]
    assert [(e.proposal_id, e.action, e.decision, e.turn_id) for e in decided] == [
        (first, "reject", Decision.REFUSED, "turn_a"),
        (first, "reject", Decision.REJECTED, "turn_a"),
        (second, "confirm", Decision.ERP_REFUSED, "turn_b"),
    ]
    assert decided[0].user == "mallory@demo.local"
    assert "belongs to another user" in decided[0].reason
    assert decided[2].refusal is not None
    assert decided[2].refusal["message"] == "Could not find Customer: Nobody Ltd"


async def test_every_audit_row_is_an_event_of_the_stream() -> None:
    gateway, _, store = make_gateway()
    seen = watch(gateway)
    await gateway.call(session(), "sales_invoice.list", {"customer": "Acme Ltd"})
    pid = await propose_in_turn(gateway)
    await gateway.confirm(session(), pid)
    audited = [e for e in seen if isinstance(e, Audited)]
    assert [type(e) for e in audited] == [ToolDecided, ProposalMade, ProposalDecided]
    rows = list(reversed(await store.events()))
    assert [(r.tool, r.decision, r.proposal_id, r.turn_id) for r in rows] == [
        (e.tool, e.decision, e.proposal_id or None, e.turn_id or None) for e in audited
    ]
    assert [r.args_digest for r in rows] == [e.args_digest for e in audited]


async def test_without_the_audit_subscriber_nothing_is_audited() -> None:
    # The gateway itself writes no audit rows: a second writer would record each decision twice.
    gateway, _, store = make_gateway()
    gateway.async_listeners.clear()
    await gateway.call(session(), "sales_invoice.list", {"customer": "Acme Ltd"})
    assert await store.events() == []


async def test_a_decision_that_cannot_be_audited_fails_the_call() -> None:
    gateway, _, store = make_gateway()

    async def broken(event: AuditEvent) -> None:
        raise StoreError("The store is unavailable.")

    store.record_event = broken  # type: ignore[method-assign]
    with pytest.raises(StoreError):
        await gateway.call(session(), "sales_invoice.list", {"customer": "Acme Ltd"})
    assert any(isinstance(x, AuditLog) for x in gateway.async_listeners)


@pytest.fixture
async def scripted(demo_erp: Any, tmp_path: Path) -> AsyncIterator[Harness]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    yield build_app(runtime, tmp_path)
    await runtime.aclose()


async def test_a_confirm_from_the_web_app_is_decided_on_the_stream(scripted: Harness) -> None:
    seen: list[Event] = []
    scripted.runtime.listeners.append(seen.append)
    async with client_for(scripted.app) as admin:
        await sign_in(admin, ADMIN)
        response = await ask(admin, CREATE_LEAD)
        proposal = next(b for b in response["blocks"] if b["type"] == "proposal")
        url = f"/api/proposals/{proposal['id']}/confirm"
        assert (await admin.post(url, json={"payload_hash": proposal["payload_hash"]})).json()["ok"]
        detail = (await admin.get(f"/api/admin/log/{response['turn_id']}")).json()
    (decided,) = [e for e in seen if isinstance(e, ProposalDecided)]
    assert (decided.turn_id, decided.conversation_id, decided.user) == (
        response["turn_id"],
        response["conversation_id"],
        ADMIN,
    )
    assert (decided.proposal_id, decided.decision) == (proposal["id"], Decision.CONFIRMED)
    # The audit record of the turn shows what became of its proposal.
    assert [e["decision"] for e in detail["events"]][-2:] == ["proposed", "confirmed"]
