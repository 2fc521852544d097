"""SQLStore keeps every record exactly: proposals, audit events, conversations, turns."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pg_fixtures import pg_database

from erp_agent.errors import StoreError
from erp_agent.store.records import (
    AuditEvent,
    Conversation,
    Decision,
    Proposal,
    ProposalStatus,
    Turn,
)
from erp_agent.store.sql_store import SQLStore

pytestmark = pytest.mark.anyio

T0 = dt.datetime(2026, 11, 30, 9, 0, 0, 123456, tzinfo=dt.UTC)
PLUS_TWO = dt.timezone(dt.timedelta(hours=2))


@pytest.fixture(params=["file", "memory", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SQLStore]:
    if request.param == "postgres":
        with pg_database() as url:
            store = SQLStore(url)
            await store.migrate()
            yield store
            await store.close()
        return
    in_file = f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}"
    store = SQLStore(in_file if request.param == "file" else "sqlite+aiosqlite://")
    await store.migrate()
    yield store
    await store.close()


def proposal(id: str = "p1", **changes: object) -> Proposal:
    values: dict[str, object] = {
        "id": id,
        "user": "amina@demo.local",
        "session_id": "s1",
        "org": "Demo Ltd",
        "tool": "sales_invoice.create",
        "payload": {
            "customer": "Société Générale — Zürich 東京",
            "items": [{"item": "Widget", "qty": 3, "rate": "10.10"}, ["nested", [1, 2.5, None]]],
            "grand_total": "30.30",  # decimals travel as strings
            "flags": {"draft": True, "note": None},
        },
        "payload_hash": "ab" * 32,
        "summary": "Create an invoice for Société Générale: 30.30",
        "diff": [{"field": "status", "before": "Draft", "after": "Submitted"}],
        "document": {"doctype": "Sales Invoice", "items": [{"qty": 3}]},
        "created_at": T0,
        "expires_at": T0 + dt.timedelta(minutes=15),
        "conversation_id": "c1",
    }
    values.update(changes)
    return Proposal(**values)  # type: ignore[arg-type]


def event(n: int, **changes: object) -> AuditEvent:
    values: dict[str, object] = {
        "user": "amina@demo.local",
        "session_id": "s1",
        "org": "Demo Ltd",
        "tool": "sales_invoice.list",
        "args_digest": f"{n:016x}",
        "decision": Decision.ALLOWED,
        "reason": "",
        "latency_ms": 12.5 + n,
        "at": T0 + dt.timedelta(seconds=n),
    }
    values.update(changes)
    return AuditEvent(**values)  # type: ignore[arg-type]


# proposals


async def test_proposal_round_trips_with_unicode_nested_json_and_aware_datetimes(
    store: SQLStore,
) -> None:
    original = proposal(created_at=dt.datetime(2026, 11, 30, 11, 0, 0, 1, tzinfo=PLUS_TWO))
    await store.add_proposal(original)
    loaded = await store.get_proposal("p1")
    assert loaded == original
    assert loaded is not None
    assert loaded.created_at.tzinfo is not None
    assert loaded.created_at == dt.datetime(2026, 11, 30, 9, 0, 0, 1, tzinfo=dt.UTC)
    assert loaded.status is ProposalStatus.PENDING
    assert await store.get_proposal("missing") is None


async def test_proposal_without_document_keeps_none(store: SQLStore) -> None:
    await store.add_proposal(proposal(document=None, diff=[], conversation_id=None))
    loaded = await store.get_proposal("p1")
    assert loaded is not None
    assert (loaded.document, loaded.diff, loaded.conversation_id) == (None, [], None)
    assert (loaded.result, loaded.error, loaded.decided_at) == (None, None, None)


async def test_claim_moves_pending_to_executing_once(store: SQLStore) -> None:
    await store.add_proposal(proposal())
    assert await store.claim_proposal("p1") is True
    assert await store.claim_proposal("p1") is False
    assert await store.claim_proposal("missing") is False
    loaded = await store.get_proposal("p1")
    assert loaded is not None
    assert loaded.status is ProposalStatus.EXECUTING


async def test_finish_stores_status_result_error_and_decision_time(store: SQLStore) -> None:
    await store.add_proposal(proposal("ok"))
    await store.add_proposal(proposal("refused"))
    decided = T0 + dt.timedelta(minutes=3)
    await store.finish_proposal(
        "ok", ProposalStatus.EXECUTED, result={"name": "ACC-SINV-0001", "total": "30.30"},
        decided_at=decided,
    )  # fmt: skip
    refusal = {"message": "Customer is frozen — «Acme»", "exc_type": "ValidationError"}
    await store.finish_proposal("refused", ProposalStatus.FAILED, error=refusal)

    ok = await store.get_proposal("ok")
    assert ok is not None
    assert (ok.status, ok.result, ok.error, ok.decided_at) == (
        ProposalStatus.EXECUTED,
        {"name": "ACC-SINV-0001", "total": "30.30"},
        None,
        decided,
    )
    failed = await store.get_proposal("refused")
    assert failed is not None
    assert (failed.status, failed.error, failed.result) == (ProposalStatus.FAILED, refusal, None)
    assert failed.decided_at is not None  # defaults to now
    assert failed.decided_at.tzinfo is not None


async def test_finishing_an_unknown_proposal_is_a_store_error(store: SQLStore) -> None:
    with pytest.raises(StoreError, match="no proposal nope"):
        await store.finish_proposal("nope", ProposalStatus.REJECTED)


async def test_list_proposals_filters_by_user_and_status_newest_first(store: SQLStore) -> None:
    for n, (user, status) in enumerate(
        [
            ("amina", ProposalStatus.PENDING),
            ("amina", ProposalStatus.EXECUTED),
            ("bo", ProposalStatus.PENDING),
            ("amina", ProposalStatus.PENDING),
        ]
    ):
        created = T0 + dt.timedelta(minutes=n)
        await store.add_proposal(proposal(f"p{n}", user=user, status=status, created_at=created))

    assert [p.id for p in await store.list_proposals()] == ["p3", "p2", "p1", "p0"]
    assert [p.id for p in await store.list_proposals(user="amina")] == ["p3", "p1", "p0"]
    pending = await store.list_proposals(status=ProposalStatus.PENDING)
    assert [p.id for p in pending] == ["p3", "p2", "p0"]
    mine = await store.list_proposals(user="amina", status=ProposalStatus.PENDING, limit=1)
    assert [p.id for p in mine] == ["p3"]


# audit events


async def test_event_round_trips_and_gets_an_id(store: SQLStore) -> None:
    original = event(0, decision=Decision.ERP_REFUSED, reason="Crédit dépassé", proposal_id="p1")
    await store.record_event(original)
    assert original.id is not None
    (loaded,) = await store.events()
    assert loaded == original
    assert loaded.decision is Decision.ERP_REFUSED


async def test_events_are_newest_first_and_filtered(store: SQLStore) -> None:
    await store.record_event(event(1))
    await store.record_event(event(2, user="bo@demo.local"))
    await store.record_event(event(3, tool="lead.create", decision=Decision.PROPOSED))
    await store.record_event(event(4, decision=Decision.REFUSED))
    # Recorded late but happened first: order is by time, not by insertion.
    await store.record_event(event(0))

    def digests(found: list[AuditEvent]) -> list[int]:
        return [int(e.args_digest, 16) for e in found]

    assert digests(await store.events()) == [4, 3, 2, 1, 0]
    assert digests(await store.events(user="amina@demo.local")) == [4, 3, 1, 0]
    assert digests(await store.events(tool="lead.create")) == [3]
    assert digests(await store.events(decision=Decision.REFUSED)) == [4]
    assert digests(await store.events(since=T0 + dt.timedelta(seconds=2))) == [4, 3, 2]
    # The same instant given in another zone filters the same way.
    since_plus_two = (T0 + dt.timedelta(seconds=3)).astimezone(PLUS_TWO)
    assert digests(await store.events(since=since_plus_two)) == [4, 3]
    assert digests(await store.events(limit=2)) == [4, 3]
    assert digests(await store.events(user="amina@demo.local", decision=Decision.ALLOWED)) == [
        1,
        0,
    ]


async def test_events_at_the_same_instant_keep_recording_order(store: SQLStore) -> None:
    for n in range(3):
        await store.record_event(event(n, at=T0))
    assert [int(e.args_digest, 16) for e in await store.events()] == [2, 1, 0]


# conversations and turns


async def test_conversation_round_trips(store: SQLStore) -> None:
    original = Conversation(
        id="c1", user="amina", org="Demo Ltd", title="Überfällige Rechnungen 📈",
        created_at=T0, updated_at=T0.astimezone(PLUS_TWO),
    )  # fmt: skip
    await store.create_conversation(original)
    assert await store.get_conversation("c1") == original
    assert await store.get_conversation("missing") is None


async def test_list_conversations_is_per_user_most_recent_first(store: SQLStore) -> None:
    for n, user in enumerate(["amina", "bo", "amina", "amina"]):
        at = T0 + dt.timedelta(hours=n)
        await store.create_conversation(
            Conversation(id=f"c{n}", user=user, org="Demo", created_at=at, updated_at=at)
        )
    assert [c.id for c in await store.list_conversations("amina")] == ["c3", "c2", "c0"]
    assert [c.id for c in await store.list_conversations("amina", limit=2)] == ["c3", "c2"]
    assert [c.id for c in await store.list_conversations("bo")] == ["c1"]
    assert await store.list_conversations("nobody") == []

    # New activity in c0 brings it to the top.
    later = T0 + dt.timedelta(days=1)
    await store.save_turn(
        Turn(id="t", conversation_id="c0", seq=1, user_message="hi", created_at=later,
             updated_at=later)
    )  # fmt: skip
    assert [c.id for c in await store.list_conversations("amina")] == ["c0", "c3", "c2"]
    c0 = await store.get_conversation("c0")
    assert c0 is not None
    assert c0.updated_at == later


async def test_a_conversation_is_created_with_its_first_turn(store: SQLStore) -> None:
    later = T0 + dt.timedelta(minutes=5)
    turn = Turn(
        id="t1", conversation_id="c1", seq=1, user_message="How are sales?", status="done",
        state={"response": {"outcome": "answered"}}, created_at=later, updated_at=later,
    )  # fmt: skip
    conversation = Conversation(id="c1", user="amina", org="Demo", created_at=T0, updated_at=T0)
    await store.create_conversation(conversation, turn)
    assert await store.get_turn("t1") == turn
    assert [t.id for t in await store.turns("c1")] == ["t1"]
    found = await store.get_conversation("c1")
    assert found is not None
    assert found.updated_at == later  # its activity is the turn's
    # The same id again fails whole: neither the conversation nor a second turn is kept.
    with pytest.raises(StoreError):
        await store.create_conversation(
            conversation, dataclasses.replace(turn, id="t2", user_message="again")
        )
    assert await store.get_turn("t2") is None


async def test_save_turn_inserts_then_updates_its_state(store: SQLStore) -> None:
    await store.create_conversation(Conversation(id="c1", user="amina", org="Demo"))
    turn = Turn(
        id="t1", conversation_id="c1", seq=1, user_message="Zeige offene Posten für Müller",
        state={"step": 1, "messages": [{"role": "user", "content": "Müller"}]},
        created_at=T0, updated_at=T0,
    )  # fmt: skip
    await store.save_turn(turn)
    assert await store.get_turn("t1") == turn

    turn.state = {"step": 2, "tool_calls": [["customer.get", {"name": "Müller"}]], "total": "9.99"}
    turn.status = "done"
    turn.updated_at = T0 + dt.timedelta(seconds=5)
    await store.save_turn(turn)
    loaded = await store.get_turn("t1")
    assert loaded == turn
    assert [t.id for t in await store.turns("c1")] == ["t1"]
    assert await store.get_turn("missing") is None


async def test_turns_come_back_in_sequence(store: SQLStore) -> None:
    await store.create_conversation(Conversation(id="c1", user="amina", org="Demo"))
    await store.create_conversation(Conversation(id="c2", user="amina", org="Demo"))
    for seq in (3, 1, 2):
        await store.save_turn(Turn(id=f"t{seq}", conversation_id="c1", seq=seq, user_message="q"))
    await store.save_turn(Turn(id="other", conversation_id="c2", seq=1, user_message="q"))
    assert [t.seq for t in await store.turns("c1")] == [1, 2, 3]
    assert await store.turns("missing") == []


async def test_two_turns_cannot_share_a_sequence_number(store: SQLStore) -> None:
    await store.create_conversation(Conversation(id="c1", user="amina", org="Demo"))
    await store.save_turn(Turn(id="t1", conversation_id="c1", seq=1, user_message="q"))
    with pytest.raises(StoreError, match=r"(?s)save turn t2 .*same key is already stored"):
        await store.save_turn(Turn(id="t2", conversation_id="c1", seq=1, user_message="q"))
    assert await store.get_turn("t2") is None


async def test_a_turn_needs_its_conversation(store: SQLStore) -> None:
    with pytest.raises(StoreError, match="refers to a record that is not stored"):
        await store.save_turn(Turn(id="t1", conversation_id="nowhere", seq=1, user_message="q"))


async def test_version_and_recovery_columns_round_trip(store: SQLStore) -> None:
    claimed = T0 + dt.timedelta(minutes=1)
    await store.add_proposal(
        proposal("v1", base_modified="2026-11-30 09:00:00.123456", conversation_id="c9")
    )
    assert await store.claim_proposal("v1", at=claimed)
    await store.set_checkpoint("v1", {"created_after": "2026-11-30 08:00:00", "owner": "amina"})
    # A conditional finish only decides a proposal still in the expected status.
    assert not await store.finish_proposal(
        "v1", ProposalStatus.FAILED, expected=ProposalStatus.PENDING
    )
    assert await store.finish_proposal(
        "v1", ProposalStatus.STALE, superseded_by="v2", expected=ProposalStatus.EXECUTING
    )
    loaded = await store.get_proposal("v1")
    assert loaded is not None
    assert (loaded.status, loaded.base_modified, loaded.claimed_at, loaded.superseded_by) == (
        ProposalStatus.STALE,
        "2026-11-30 09:00:00.123456",
        claimed,
        "v2",
    )
    assert loaded.checkpoint == {"created_after": "2026-11-30 08:00:00", "owner": "amina"}
    assert [p.id for p in await store.list_proposals(conversation_id="c9")] == ["v1"]
    with pytest.raises(StoreError):
        await store.set_checkpoint("nope", {})


async def test_a_proposals_business_date_round_trips(store: SQLStore) -> None:
    # The date pinned when it was prepared: its confirm runs on it (``Gateway.context_of``).
    await store.add_proposal(proposal("d1", business_date=dt.date(2026, 9, 30)))
    await store.add_proposal(proposal("d2"))
    dated, undated = await store.get_proposal("d1"), await store.get_proposal("d2")
    assert dated is not None
    assert undated is not None
    assert dated.business_date == dt.date(2026, 9, 30)
    assert type(dated.business_date) is dt.date
    assert undated.business_date is None


async def test_running_turns_are_those_silent_since_a_time(store: SQLStore) -> None:
    await store.create_conversation(Conversation(id="c1", user="amina", org="Demo"))
    old, new = T0, T0 + dt.timedelta(hours=1)
    await store.save_turn(
        Turn(id="old", conversation_id="c1", seq=1, user_message="q", updated_at=old)
    )
    await store.save_turn(
        Turn(id="new", conversation_id="c1", seq=2, user_message="q", updated_at=new)
    )
    await store.save_turn(
        Turn(
            id="done", conversation_id="c1", seq=3, user_message="q", status="done", updated_at=old
        )
    )
    cutoff = T0 + dt.timedelta(minutes=30)
    assert [t.id for t in await store.running_turns(updated_before=cutoff)] == ["old"]
