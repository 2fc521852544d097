"""The server's tables behind the store interface, one contract on every store: in memory,
SQLite and PostgreSQL (web sessions, admin settings, the interaction log and its usage
figures, audit events by turn)."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pg_fixtures import pg_database

from erp_agent.store.base import Store
from erp_agent.store.memory import MemoryStore
from erp_agent.store.records import AuditEvent, Decision, Interaction, WebSession
from erp_agent.store.sql_store import SQLStore

pytestmark = pytest.mark.anyio
T0 = dt.datetime(2026, 11, 30, 23, 30, tzinfo=dt.UTC)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "sqlite":
        sqlite = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
        await sqlite.migrate()
        yield sqlite
        await sqlite.close()
        return
    with pg_database() as url:
        pg = SQLStore(url)
        await pg.migrate()
        yield pg
        await pg.close()


def web(
    token: str, user: str = "amina@demo.local", *, hours: int = 12, sid: str = "s1"
) -> WebSession:
    return WebSession(
        token_hash=token, session_id=sid, user=user, org="Demo Ltd", roles=["Sales User"],
        allowed_tools=["customer.list"], csrf="c", credential=b"\x00sealed\xff",
        created_at=T0, expires_at=T0 + dt.timedelta(hours=hours),
    )  # fmt: skip


def turn(
    n: int, org: str = "acme", *, at: dt.datetime = T0, outcome: str = "answered"
) -> Interaction:
    return Interaction(
        turn_id=f"t{n}", conversation_id="c1", user="amina@demo.local", org=org,
        message=f"question {n}", model="m", outcome=outcome, prompt_tokens=100 * n,
        cached_tokens=n, completion_tokens=10 * n, tools=["sales_invoice.list"],
        latency_ms=12.5, at=at,
    )  # fmt: skip


async def test_web_sessions_round_trip_and_expire(store: Store) -> None:
    await store.save_web_session(web("h1"))
    await store.save_web_session(web("h2", hours=24, sid="s2"))
    assert await store.web_session("h1") == web("h1")
    assert await store.web_session("nope") is None
    newest = await store.newest_web_session(user="amina@demo.local")
    assert newest is not None
    assert newest.token_hash == "h2"
    by_id = await store.newest_web_session(session_id="s1")
    assert by_id is not None
    assert by_id.token_hash == "h1"
    await store.purge_web_sessions(T0 + dt.timedelta(hours=13))
    assert await store.web_session("h1") is None
    await store.delete_web_session("h2")
    assert await store.newest_web_session(user="amina@demo.local") is None


async def test_admin_settings_are_replaced_per_key(store: Store) -> None:
    assert await store.admin_settings() == {}
    await store.set_admin_setting("budgets", {"acme": 5000})
    await store.set_admin_setting("read_only", True)
    await store.set_admin_setting("budgets", {"acme": 7000, "beta": 1})
    assert await store.admin_settings() == {"budgets": {"acme": 7000, "beta": 1}, "read_only": True}


async def test_the_interaction_log_records_a_turn_once_and_sums_usage(store: Store) -> None:
    next_day = T0 + dt.timedelta(hours=1)  # 00:30 UTC on 1 December: another day and month
    await store.log_interaction(turn(1))
    await store.log_interaction(turn(1))  # a second worker finishing the same turn
    await store.log_interaction(turn(2, at=next_day, outcome="failed"))
    await store.log_interaction(turn(3, org="beta"))
    rows = await store.interactions(org="acme")
    assert [r.turn_id for r in rows] == ["t2", "t1"]
    assert rows[1] == turn(1)
    assert [r.turn_id for r in await store.interactions(outcome="failed")] == ["t2"]
    assert await store.month_tokens("acme", T0) == 110
    assert await store.month_tokens("acme", next_day) == 220
    days = await store.usage_by_day(T0 - dt.timedelta(days=1))
    assert days == [
        {
            "org": "acme",
            "day": "2026-11-30",
            "prompt": 100,
            "cached": 1,
            "completion": 10,
            "turns": 1,
        },
        {
            "org": "beta",
            "day": "2026-11-30",
            "prompt": 300,
            "cached": 3,
            "completion": 30,
            "turns": 1,
        },
        {
            "org": "acme",
            "day": "2026-12-01",
            "prompt": 200,
            "cached": 2,
            "completion": 20,
            "turns": 1,
        },
    ]


async def test_the_log_filters_by_its_outcome_and_keeps_feedback(store: Store) -> None:
    """A proposal is its own outcome (its true outcome is "answered"): each turn is found by
    exactly one outcome. Feedback lands on the logged turn, replaces earlier feedback, and is
    found by rating and by the turn's time."""
    from erp_agent.store.records import RESULTS

    rows = {
        "answered": (turn(1), "answered"),
        "proposal": (turn(2, at=T0 + dt.timedelta(minutes=1)), "proposal"),
        "refused": (turn(3, at=T0 + dt.timedelta(minutes=2), outcome="refused"), "answered"),
        "failed": (turn(4, at=T0 + dt.timedelta(days=1), outcome="failed"), "error"),
        "interrupted": (turn(5, at=T0 + dt.timedelta(days=2), outcome="interrupted"), "stopped"),
    }
    for row, shown in rows.values():
        row.shown = shown
        await store.log_interaction(row)
    for outcome in RESULTS:
        found = await store.interactions(outcome=outcome)
        assert [(r.turn_id, r.result) for r in found] == [(rows[outcome][0].turn_id, outcome)]
    assert (await store.interactions(outcome="proposal"))[0].outcome == "answered"
    assert await store.rate_interaction("t2", "down", "wrong source", T0) is True
    assert await store.rate_interaction("t4", "up", "", T0) is True
    assert await store.rate_interaction("t2", "up", "fine after all", T0) is True  # replaces
    assert await store.rate_interaction("nope", "up", "", T0) is False
    rated = await store.interactions(rated=True)
    assert [(r.turn_id, r.rating, r.comment) for r in rated] == [
        ("t4", "up", ""),
        ("t2", "up", "fine after all"),
    ]
    assert rated[1].rated_at == T0
    assert await store.interactions(rated=True, rating="down") == []
    assert [r.turn_id for r in await store.interactions(rated=True, outcome="proposal")] == ["t2"]
    day = await store.interactions(since=T0, until=T0 + dt.timedelta(hours=1))
    assert sorted(r.turn_id for r in day) == ["t1", "t2", "t3"]


async def test_audit_events_are_found_by_turn(store: Store) -> None:
    for n, turn_id in enumerate(["t1", "t2", None, "t1"]):
        await store.record_event(
            AuditEvent(
                user="amina",
                session_id="s",
                org="acme",
                tool=f"tool{n}",
                args_digest="d",
                decision=Decision.ALLOWED,
                reason="",
                latency_ms=1.0,
                at=T0 + dt.timedelta(seconds=n),
                turn_id=turn_id,
            )
        )
    assert [e.tool for e in await store.events(turn_id="t1")] == ["tool3", "tool0"]
    assert [e.turn_id for e in await store.events()] == ["t1", None, "t2", "t1"]
