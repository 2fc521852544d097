"""A turn a crash left ``running`` is never lost: the next request on its conversation (or the
server's recovery pass) continues it from its last persisted step, or closes it with a clear
message; a proposal it had prepared is shown either way.

The crash is a KeyboardInterrupt raised by the model mid-turn (nothing after it runs: no final
save), after the turn prepared a write; the ERP is the demo ERP over real HTTP.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from server_doubles import build_app, client_for, make_runtime, sign_in, sse_events

from conftest import DemoERP
from erp_agent.calls.session import Session
from erp_agent.config import Settings
from erp_agent.engine import interrupted
from erp_agent.engine.prompt import is_context
from erp_agent.models.testing import ScriptedModel
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore
from erp_agent.store.records import ProposalStatus, Turn

pytestmark = pytest.mark.anyio
S = ScriptedModel
USER = "admin@demo.local"


@pytest.fixture
async def runtime(demo_erp: DemoERP) -> AsyncIterator[Runtime]:
    rt = await Runtime.create(Settings(erp_url=demo_erp.url), store=MemoryStore())
    yield rt
    await rt.aclose()


async def crash_after_a_proposal(runtime: Runtime, session: Session, name: str) -> Turn:
    """A turn that prepared ``lead.create`` and then died; made silent for an hour."""
    crashing = ScriptedModel(S.call("lead.create", {"name": name}), KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        await runtime.engine(crashing).run_turn(session, f"Create a lead for {name}")
    (turn,) = [t for t in runtime.store._turns.values() if t.status == "running"]  # type: ignore[attr-defined]
    assert turn.id not in interrupted.ACTIVE
    turn.updated_at -= dt.timedelta(hours=1)
    await runtime.store.save_turn(turn)
    return turn


def proposals_in(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b.get("type") == "proposal"]


async def test_the_next_request_continues_the_interrupted_turn_and_shows_its_proposal(
    runtime: Runtime,
) -> None:
    session = await runtime.sign_in(USER, "demo")
    turn = await crash_after_a_proposal(runtime, session, "Resumed Prospect Ltd")
    (made,) = await runtime.store.list_proposals(user=USER)
    model = ScriptedModel(S.reply("I prepared the lead for you to confirm."))
    engine = runtime.engine(model)

    (resumed,) = await interrupted.recover_conversation(engine, session, turn.conversation_id)

    assert resumed.turn_id == turn.id
    (block,) = proposals_in(resumed.blocks)
    assert (block["id"], block["status"]) == (made.id, "pending")
    assert resumed.blocks[0]["markdown"] == "I prepared the lead for you to confirm."
    # From its last persisted step: the tool call already answered was not made again.
    assert [
        m.role for m in model.requests[0].messages if m.role != "system" and not is_context(m)
    ] == ["user", "assistant", "tool"]
    assert len(await runtime.store.list_proposals(user=USER)) == 1
    stored = await runtime.store.get_turn(turn.id)
    assert stored is not None
    assert stored.status == "done"
    # Nothing more to recover; a turn still within its deadline is left alone.
    assert await interrupted.recover_conversation(engine, session, turn.conversation_id) == []


async def test_a_turn_that_cannot_be_continued_is_closed_with_a_clear_message(
    runtime: Runtime,
) -> None:
    session = await runtime.sign_in(USER, "demo")
    turn = await crash_after_a_proposal(runtime, session, "Closed Prospect Ltd")
    (made,) = await runtime.store.list_proposals(user=USER)
    await runtime.gateway.reject(session, made.id)

    response = await interrupted.close(runtime.store, turn, "and could not be resumed")

    assert response.outcome == "interrupted"
    assert response.blocks[0]["markdown"].startswith("This answer was interrupted")
    (block,) = proposals_in(response.blocks)
    assert (block["id"], block["status"]) == (made.id, str(ProposalStatus.REJECTED))
    stored = await runtime.store.get_turn(turn.id)
    assert stored is not None
    assert stored.status == "failed"
    assert stored.state["response"]["outcome"] == "interrupted"


async def test_a_live_turn_is_never_taken_over(runtime: Runtime) -> None:
    session = await runtime.sign_in(USER, "demo")
    turn = await crash_after_a_proposal(runtime, session, "Live Prospect Ltd")
    interrupted.ACTIVE.add(turn.id)  # as if an engine of this process were running it
    try:
        engine = runtime.engine(ScriptedModel())
        assert await interrupted.recover_conversation(engine, session, turn.conversation_id) == []
    finally:
        interrupted.ACTIVE.discard(turn.id)


async def test_over_http_the_next_message_finishes_the_interrupted_turn_first(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    harness = build_app(runtime, tmp_path)
    try:
        async with client_for(harness.app) as client:
            await sign_in(client, USER)
            session = await runtime.sign_in(USER, "demo")
            turn = await crash_after_a_proposal(runtime, session, "Over HTTP Prospect Ltd")
            (made,) = await runtime.store.list_proposals(user=USER)
            # The conversation is the user's: the next message on it comes over HTTP.
            reply = await client.post(
                "/api/chat",
                json={"message": "anything else?", "conversation_id": turn.conversation_id},
            )
            assert reply.status_code == 200, reply.text
            assert any(name == "response" for name, _ in sse_events(reply.text))
            shown = (await client.get(f"/api/conversations/{turn.conversation_id}")).json()
            first, second = shown["turns"]
            assert (first["id"], first["status"]) == (turn.id, "done")
            (block,) = proposals_in(first["response"]["blocks"])
            assert block["id"] == made.id
            assert second["user_message"] == "anything else?"
            listed = await client.get(
                "/api/proposals", params={"conversation_id": turn.conversation_id}
            )
            assert [p["id"] for p in listed.json()["proposals"]] == [made.id]
    finally:
        await runtime.aclose()


async def test_the_servers_recovery_pass_resumes_as_the_user_or_closes(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    from erp_agent.server import recovery

    runtime = await make_runtime(demo_erp.url, tmp_path)
    harness = build_app(runtime, tmp_path)
    try:
        async with client_for(harness.app) as client:
            session = await runtime.sign_in(USER, "demo")
            orphan = await crash_after_a_proposal(runtime, session, "Nobody Signed In Ltd")
            state = harness.app.state.server
            # Nobody is signed in: it cannot be continued as the user, so it is closed.
            assert await recovery.finish_turns(state) == 1
            closed = await runtime.store.get_turn(orphan.id)
            assert closed is not None
            assert (closed.status, closed.state["response"]["outcome"]) == ("failed", "interrupted")

            await sign_in(client, USER)
            again = await crash_after_a_proposal(runtime, session, "Signed In Prospect Ltd")
            assert await recovery.finish_turns(state) == 1
            resumed = await runtime.store.get_turn(again.id)
            assert resumed is not None
            assert resumed.status == "done"
            assert proposals_in(resumed.state["response"]["blocks"])
            assert await recovery.finish_turns(state) == 0
    finally:
        await runtime.aclose()
