"""Retention and deletion: a user deletes their conversation (another's is refused like a missing
one), exports what is kept about them, an administrator deletes a user's data, the purge removes
what is older than the settings (on the SQL store and in memory), and question text in the
admin log is shown only to the roles granted it."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_doubles import SALES_BY_CUSTOMER, build_app, client_for, sign_in, sse_events

from conftest import DemoERP
from erp_agent.config import RetentionSettings, Settings
from erp_agent.runtime import Runtime
from erp_agent.server import retention
from erp_agent.store.base import Store
from erp_agent.store.memory import MemoryStore
from erp_agent.store.records import Conversation, Interaction, Turn
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
SALES, ADMIN = "sales@demo.local", "admin@demo.local"


async def runtime_for(demo: DemoERP, tmp_path: Path, **changes: Any) -> Runtime:
    settings = Settings(erp_url=demo.url, data_dir=str(tmp_path), **changes)
    return await Runtime.create(settings, store=MemoryStore())


def second_client(app: Any) -> httpx.AsyncClient:
    """Another browser on the same running app (its lifespan is already started)."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


async def ask(client: httpx.AsyncClient, message: str) -> str:
    reply = await client.post("/api/chat", json={"message": message})
    assert reply.status_code == 200, reply.text
    response = next(data for name, data in sse_events(reply.text) if name == "response")
    return str(response["conversation_id"])


@pytest.fixture
async def app(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Any]:
    runtime = await runtime_for(demo_erp, tmp_path)
    yield build_app(runtime, tmp_path).app
    await runtime.aclose()


async def test_a_user_deletes_their_conversation_and_not_anothers(app: Any) -> None:
    async with client_for(app) as sales, second_client(app) as admin:
        await sign_in(sales, SALES)
        await sign_in(admin, ADMIN)
        mine = await ask(sales, SALES_BY_CUSTOMER)
        theirs = await ask(admin, SALES_BY_CUSTOMER)
        refused = await sales.delete(f"/api/conversations/{theirs}")
        assert refused.status_code == 404
        assert refused.json()["detail"] == "No such conversation of yours."
        assert (await admin.get(f"/api/conversations/{theirs}")).status_code == 200
        assert (await sales.delete(f"/api/conversations/{mine}")).json() == {"deleted": True}
        assert (await sales.get(f"/api/conversations/{mine}")).status_code == 404
        assert mine not in [c["id"] for c in (await sales.get("/api/conversations")).json()]


async def test_export_and_an_administrators_deletion_of_a_users_data(app: Any) -> None:
    async with client_for(app) as sales, second_client(app) as admin:
        await sign_in(sales, SALES)
        await sign_in(admin, ADMIN)
        await ask(sales, SALES_BY_CUSTOMER)
        exported = (await sales.get("/api/me/export")).json()
        assert exported["user"] == SALES
        questions = [t["question"] for c in exported["conversations"] for t in c["turns"]]
        assert SALES_BY_CUSTOMER in questions
        assert any(r["message"] == SALES_BY_CUSTOMER for r in exported["interaction_log"])
        # Not an admin: may not delete someone's data.
        assert (await sales.delete(f"/api/admin/users/{ADMIN}/data")).status_code == 403
        deleted = (await admin.delete(f"/api/admin/users/{SALES}/data")).json()
        assert deleted["deleted"]["conversations"] == 1
        assert deleted["deleted"]["interactions"] >= 1
        assert deleted["deleted"]["results"] >= 1
        # Their sessions went too: sign in again to see that nothing is left.
        assert (await sales.get("/api/conversations")).status_code == 401
        await sign_in(sales, SALES)
        assert (await sales.get("/api/me/export")).json()["conversations"] == []


async def test_question_text_only_to_roles_granted(demo_erp: DemoERP, tmp_path: Path) -> None:
    runtime = await runtime_for(
        demo_erp, tmp_path, retention=RetentionSettings(question_text_roles=["Privacy Officer"])
    )
    async with client_for(build_app(runtime, tmp_path).app) as admin:
        await sign_in(admin, ADMIN)
        await ask(admin, SALES_BY_CUSTOMER)
        rows = (await admin.get("/api/admin/log")).json()
        assert rows
        assert all(SALES_BY_CUSTOMER not in str(r) for r in rows), [str(r) for r in rows]
        assert rows[0]["message"] == "(question hidden: shown only to Privacy Officer)"
        detail = (await admin.get(f"/api/admin/log/{rows[0]['turn_id']}")).json()
        assert SALES_BY_CUSTOMER not in str(detail)
    await runtime.aclose()


async def _aged(store: Store, user: str, days: int, now: dt.datetime) -> str:
    at = now - dt.timedelta(days=days)
    conversation = Conversation(f"c-{user}-{days}", user, "default", "t", at, at)
    await store.create_conversation(conversation)
    turn = Turn(f"t-{user}-{days}", conversation.id, 1, "q", created_at=at, updated_at=at)
    await store.save_turn(turn)
    await store.log_interaction(
        Interaction(turn_id=f"t-{user}-{days}", conversation_id=conversation.id, user=user,
                    org="default", message="q", model="m", outcome="answered", prompt_tokens=1,
                    cached_tokens=0, completion_tokens=1, tools=[], latency_ms=1.0, at=at)
    )  # fmt: skip
    return conversation.id


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_the_purge_removes_only_what_is_older_than_the_settings(
    demo_erp: DemoERP, tmp_path: Path, kind: str
) -> None:
    store: Store = (
        MemoryStore()
        if kind == "memory"
        else open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    )
    await store.migrate()
    now = dt.datetime.now(dt.UTC)
    old = await _aged(store, SALES, 120, now)
    recent = await _aged(store, SALES, 10, now)
    counts = await store.purge_older_than(
        conversations_before=None, interactions_before=now - dt.timedelta(days=90)
    )
    assert counts["interactions"] == 1
    logged = await store.interactions(user=SALES)
    assert [r.turn_id for r in logged] == [f"t-{SALES}-10"]
    # Conversations are aged by their last activity (the turn saved just now counts as such).
    counts = await store.purge_older_than(
        conversations_before=now + dt.timedelta(seconds=1), interactions_before=None
    )
    assert counts["conversations"] == 2
    assert await store.get_conversation(old) is None
    assert await store.get_conversation(recent) is None
    assert await store.turns(old) == []
    await store.close()


async def test_the_scheduled_purge_uses_the_settings_and_exports_age_out(
    demo_erp: DemoERP, tmp_path: Path
) -> None:
    runtime = await runtime_for(demo_erp, tmp_path)
    harness = build_app(runtime, tmp_path)
    async with client_for(harness.app) as sales:
        await sign_in(sales, SALES)
        await ask(sales, SALES_BY_CUSTOMER)
        exports = tmp_path / "exports"
        exports.mkdir(exist_ok=True)
        stale, fresh = exports / "old.csv", exports / "new.csv"
        stale.write_text("a"), fresh.write_text("b")
        eight_days = (dt.datetime.now() - dt.timedelta(days=8)).timestamp()
        os.utime(stale, (eight_days, eight_days))
        state = harness.app.state.server
        counts = await retention.purge(state)
        assert counts["exports"] == 1
        assert not stale.exists()
        assert fresh.exists()
        assert counts["conversations"] == 0  # a conversation of today stays (90 days)
        later = await retention.purge(state, dt.datetime.now(dt.UTC) + dt.timedelta(days=91))
        assert later["conversations"] == 1
        assert later["interactions"] >= 1
        assert later["results"] >= 1
        assert (await sales.get("/api/conversations")).json() == []
    await runtime.aclose()
