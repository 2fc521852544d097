"""A turn in flight when PostgreSQL drops every connection of the store's database (as a
restart or a failover does) finishes, and nothing of it is lost: its state, its end in the
interaction log, the audit of its tool calls, its proposal and the confirm.

The connections are cut with ``pg_terminate_backend`` on the test's own database only (the
server is shared); the pool's pre-ping replaces the dead connections on their next use."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pg_fixtures import pg_database, terminate_clients
from server_doubles import CREATE_LEAD, SALES_BY_CUSTOMER, ScriptBook
from sqlalchemy.engine import make_url

from conftest import DemoERP
from erp_agent.config import RetrievalSettings, Settings
from erp_agent.models.base import Completion, Message
from erp_agent.runtime import Runtime
from erp_agent.store.records import Decision

pytestmark = [pytest.mark.anyio, pytest.mark.postgres, pytest.mark.slow]
ADMIN = "admin@demo.local"


def cut_connections(database: str) -> int:
    """Terminate every client connected to ``database``; how many there were."""
    return terminate_clients("datname", database)


class CutBeforeEveryCall(ScriptBook):
    """The scripted model, but the database drops its connections before each model call
    after the first: the turn has state saved, and saves again right after."""

    def __init__(self, database: str) -> None:
        super().__init__()
        self.database = database
        self.calls = 0
        self.cut: list[int] = []

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        self.calls += 1
        if self.calls > 1:
            self.cut.append(await asyncio.to_thread(cut_connections, self.database))
        return await super().complete(
            messages, tools, temperature=temperature, max_tokens=max_tokens
        )


async def test_a_turn_survives_the_database_dropping_its_connections(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    with pg_database() as url:
        database = str(make_url(url).database)
        settings = Settings(
            erp_url=demo_erp.url,
            data_dir=str(tmp_path),
            database_url=url,
            retrieval=RetrievalSettings(embeddings="none"),
        )
        runtime = await Runtime.create(settings)
        try:
            session = await runtime.sign_in(ADMIN, "demo")
            model = CutBeforeEveryCall(database)
            engine = runtime.engine(model)
            response = await engine.run_turn(session, SALES_BY_CUSTOMER)
            assert model.calls == 4
            assert sum(model.cut) >= 3  # the pool's connections were really cut, every time
            assert response.outcome == "answered"
            turn = await runtime.store.get_turn(response.turn_id)
            assert turn is not None
            assert turn.status == "done"
            assert turn.state["response"]["turn_id"] == response.turn_id
            logged = await runtime.store.interactions(user=ADMIN, limit=10)
            assert [(r.turn_id, r.outcome) for r in logged] == [(response.turn_id, "answered")]
            audited = await runtime.store.events(turn_id=response.turn_id)
            assert [e.tool for e in reversed(audited)] == [
                "metrics.query",
                "display.table",
                "display.chart",
            ]
            # A write in the same conditions: proposed, the connections cut, then confirmed.
            write = await runtime.engine(CutBeforeEveryCall(database)).run_turn(
                session, CREATE_LEAD, conversation_id=response.conversation_id
            )
            proposal = next(b for b in write.blocks if b["type"] == "proposal")
            assert cut_connections(database) >= 1
            done = await runtime.gateway.confirm(session, proposal["id"])
            assert done.status == "ok", done.message
            decided = await runtime.store.events(proposal_id=proposal["id"])
            assert [e.decision for e in reversed(decided)] == [
                Decision.PROPOSED,
                Decision.CONFIRMED,
            ]
            # The two turns, and the confirm's own message in the conversation.
            turns = await runtime.store.turns(response.conversation_id)
            assert [t.status for t in turns] == ["done", "done", "done"]
            assert turns[1].id == write.turn_id
        finally:
            await runtime.aclose()
            await runtime.store.close()
