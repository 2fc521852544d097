"""One event stream per turn: events carry the turn, conversation, user and organisation; the
interaction log, usage and the audit join all come from it, with true outcomes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import (
    CREATE_LEAD,
    SALES_BY_CUSTOMER,
    Harness,
    build_app,
    client_for,
    make_runtime,
    sign_in,
    sse_events,
)

from erp_agent.events import (
    ANSWERED,
    FAILED,
    INTERRUPTED,
    REFUSED,
    EventBus,
    ModelCalled,
    TurnFinished,
    true_outcome,
)
from erp_agent.planner import OfflinePlanner

pytestmark = pytest.mark.anyio
ADMIN = "admin@demo.local"


@pytest.mark.parametrize(
    ("shown", "statuses", "guard", "expected"),
    [
        ("answered", ["ok"], False, ANSWERED),
        ("proposal", ["proposal"], False, ANSWERED),
        ("answered", [], False, ANSWERED),
        ("error", ["ok"], False, FAILED),  # a model failure is never logged as answered
        ("stopped", ["ok"], False, INTERRUPTED),  # deadline or step limit
        ("stopped", ["error", "error", "error"], True, FAILED),  # too many failed calls
        ("interrupted", [], False, INTERRUPTED),
        ("answered", ["refused", "erp_refused"], False, REFUSED),
        ("answered", ["erp_refused", "ok"], False, ANSWERED),
        ("answered", ["error"], False, FAILED),
        ("answered", ["invalid", "refused"], False, REFUSED),
    ],
)
def test_outcomes_are_true(shown: str, statuses: list[str], guard: bool, expected: str) -> None:
    assert true_outcome(shown, statuses, guard_stopped=guard) == expected


async def test_the_bus_stamps_context_and_waits_for_async_subscribers() -> None:
    bus = EventBus()
    seen: list[Any] = []
    recorded: list[str] = []

    async def record(event: Any) -> None:
        recorded.append(event.kind)

    bus.subscribe(seen.append)
    bus.subscribe_async(record)
    bus.subscribe(lambda _: 1 / 0)  # a failing subscriber breaks nothing
    bus.bind(conversation_id="c1", user="u@x", org="acme")
    bus.emit(ModelCalled("t1", prompt_tokens=3))
    await bus.publish(TurnFinished("t1", outcome="answered"))
    assert [(e.kind, e.conversation_id, e.user, e.org) for e in seen] == [
        ("ModelCalled", "c1", "u@x", "acme"),
        ("TurnFinished", "c1", "u@x", "acme"),
    ]
    assert recorded == ["ModelCalled", "TurnFinished"]


@pytest.fixture
async def scripted(demo_erp: Any, tmp_path: Path) -> AsyncIterator[Harness]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    yield build_app(runtime, tmp_path)
    await runtime.aclose()


async def ask(client: httpx.AsyncClient, message: str) -> dict[str, Any]:
    events = sse_events((await client.post("/api/chat", json={"message": message})).text)
    return next(data for name, data in events if name == "response")


async def test_the_log_joins_a_turns_decisions_by_its_id(scripted: Harness) -> None:
    async with client_for(scripted.app) as admin:
        await sign_in(admin, ADMIN)
        first = await ask(admin, SALES_BY_CUSTOMER)
        second = await ask(admin, SALES_BY_CUSTOMER)  # same user, moments later
        for turn in (first, second):
            detail = (await admin.get(f"/api/admin/log/{turn['turn_id']}")).json()
            assert [e["tool"] for e in detail["events"]] == [
                "metrics.query",
                "display.table",
                "display.chart",
            ]
            assert {e["turn_id"] for e in detail["events"]} == {turn["turn_id"]}
            assert detail["outcome"] == "answered"
        log = (await admin.get("/api/admin/log")).json()
        assert [r["turn_id"] for r in log] == [second["turn_id"], first["turn_id"]]
        # The provider's counts, summed over the turn's four model calls.
        assert (log[0]["prompt_tokens"], log[0]["completion_tokens"]) == (350, 35)
        metrics = (await admin.get("/metrics")).text
        assert 'erp_agent_turn_seconds_count{outcome="answered"} 2.0' in metrics
        assert 'erp_agent_tokens_total{kind="prompt"} 700.0' in metrics


async def test_the_offline_planner_costs_no_tokens(demo_erp: Any, tmp_path: Path) -> None:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    harness = build_app(runtime, tmp_path, model=lambda rt: OfflinePlanner(rt.catalog))
    async with client_for(harness.app) as admin:
        await sign_in(admin, ADMIN)
        response = await ask(admin, "How many customers do we have?")
        assert response["usage"] == {"prompt": 0, "cached": 0, "completion": 0}
        log = (await admin.get("/api/admin/log")).json()
        assert [(r["turn_id"], r["prompt_tokens"], r["completion_tokens"]) for r in log] == [
            (response["turn_id"], 0, 0)
        ]
        assert log[0]["outcome"] == "answered"
        budgets = (await admin.get("/api/admin/budgets")).json()
        assert budgets["orgs"][0]["used_this_month"] == 0
    await runtime.aclose()


async def test_proposals_made_and_decided_are_counted(scripted: Harness) -> None:
    async with client_for(scripted.app) as admin:
        await sign_in(admin, ADMIN)
        response = await ask(admin, CREATE_LEAD)
        proposal = next(b for b in response["blocks"] if b["type"] == "proposal")
        url = f"/api/proposals/{proposal['id']}/confirm"
        assert (await admin.post(url, json={"payload_hash": proposal["payload_hash"]})).json()["ok"]
        metrics = (await admin.get("/metrics")).text
        assert 'erp_agent_proposals_total{decision="made"} 1.0' in metrics
        assert 'erp_agent_proposals_total{decision="confirmed"} 1.0' in metrics
