"""The admin console API: System Manager only; the model key is write-only."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
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

from erp_agent.models.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.anyio
ADMIN = "admin@demo.local"
SALES = "sales@demo.local"
SECRET = "sk-test-never-shown-0123456789"


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """A real OpenAI-compatible endpoint on loopback that accepts SECRET (its base URL)."""
    server = FakeOpenAIServer(api_key=SECRET, model="gpt-test")
    with server.running() as url:
        yield url


class FakeKnowledge:
    def __init__(self) -> None:
        self.docs: dict[str, str] = {}

    async def upload(self, name: str, text: str) -> dict[str, Any]:
        self.docs[name] = text
        return {"indexed": [name]}

    async def reindex(self) -> dict[str, Any]:
        return {"indexed": sorted(self.docs)}


@pytest.fixture
async def harness(demo_erp: Any, tmp_path: Path) -> AsyncIterator[Harness]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    built = build_app(runtime, tmp_path)
    yield built
    await built.switch.aclose()  # the provider clients a switch opened
    await runtime.aclose()


@pytest.fixture
async def admin(harness: Harness) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(harness.app) as client:
        await sign_in(client, ADMIN)
        yield client


def browser(harness: Harness) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=harness.app), base_url="http://testserver"
    )


ADMIN_ROUTES = [
    ("GET", "/api/admin/model", None),
    ("PUT", "/api/admin/model", {"provider": "offline"}),
    ("GET", "/api/admin/policy", None),
    ("PUT", "/api/admin/policy", {"yaml": "everyone: []"}),
    ("GET", "/api/admin/tenant", None),
    ("PUT", "/api/admin/tenant", {"read_only": True}),
    ("GET", "/api/admin/budgets", None),
    ("PUT", "/api/admin/budgets", {"org": "default", "tokens": 1}),
    ("GET", "/api/admin/usage", None),
    ("GET", "/api/admin/log", None),
    ("GET", "/api/admin/log/turn_x", None),
    ("GET", "/api/admin/feedback", None),
    ("GET", "/api/admin/audit", None),
    ("POST", "/api/admin/knowledge", {"name": "a.md", "text": "# A"}),
    ("POST", "/api/admin/knowledge/reindex", None),
]


async def test_admin_routes_refuse_other_users(admin: httpx.AsyncClient, harness: Harness) -> None:
    async with browser(harness) as sales:
        await sign_in(sales, SALES)
        for method, path, body in ADMIN_ROUTES:
            response = await sales.request(method, path, json=body)
            assert response.status_code == 403, (method, path)
            assert "System Manager" in response.json()["detail"]
    # Nothing the refused requests asked for happened.
    assert (await admin.get("/api/admin/tenant")).json() == {
        "read_only": False,
        "source": "environment",
    }


async def test_the_model_key_is_write_only(
    admin: httpx.AsyncClient, harness: Harness, provider: str
) -> None:
    start = (await admin.get("/api/admin/model")).json()
    assert start == {
        "provider": "offline",
        "model": "scripted-1",
        "base_url": None,
        "key_set": False,
        "switchable": True,
        "source": "environment",
        "problems": [],
    }
    choice = {
        "provider": "openai",
        "model": "gpt-test",
        "base_url": provider,
        "api_key": SECRET,
    }
    switched = await admin.put("/api/admin/model", json=choice)
    assert switched.status_code == 200
    assert switched.json()["key_set"] is True
    assert SECRET not in switched.text
    again = await admin.get("/api/admin/model")
    assert SECRET not in again.text
    assert again.json()["model"] == "gpt-test"
    # Changing only the model keeps the key, without the admin sending it again.
    kept = (
        await admin.put("/api/admin/model", json={**choice, "model": "gpt-other", "api_key": None})
    ).json()
    assert kept["key_set"] is True
    # Another endpoint never receives the old key: without one it cannot answer, so the
    # switch is refused and the current choice stays.
    moved = await admin.put(
        "/api/admin/model", json={**choice, "base_url": "http://127.0.0.1:9/v1", "api_key": None}
    )
    assert moved.status_code == 422
    assert (await admin.get("/api/admin/model")).json()["base_url"] == provider
    for path in ("/api/admin/model", "/api/admin/log", "/api/admin/audit", "/openapi.json"):
        assert SECRET not in (await admin.get(path)).text
    stored = (await harness.runtime.store.admin_settings())["model"]
    assert SECRET not in str(stored)
    assert (await admin.put("/api/admin/model", json={"provider": "nonsense"})).status_code == 422
    assert (await admin.put("/api/admin/model", json={"provider": "openai"})).status_code == 422
    back = (await admin.put("/api/admin/model", json={"provider": "offline"})).json()
    assert back["provider"] == "offline"


async def test_every_model_setting_is_set_in_the_console_and_a_bad_one_named(
    admin: httpx.AsyncClient, provider: str
) -> None:
    """Beside the endpoint, the window, timeout, retries and compact schemas; unset, the
    window in use is the endpoint's default (128k for a hosted gateway)."""
    hosted = {"provider": "openai", "model": "openai-compatible:gpt-test", "base_url": provider}
    chosen = await admin.put("/api/admin/model", json={**hosted, "api_key": SECRET})
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["preset"] == "openai-compatible"
    assert chosen.json()["window_in_use"] == 128_000
    tuned = {**hosted, "context_window": 32_000, "timeout": 90, "max_retries": 1}
    set_ = (await admin.put("/api/admin/model", json=tuned)).json()
    assert (set_["context_window"], set_["timeout"], set_["max_retries"]) == (32_000, 90.0, 1)
    assert set_["window_in_use"] == 32_000
    bad = await admin.put("/api/admin/model", json={**hosted, "context_window": -5})
    assert bad.status_code == 422
    assert bad.json()["detail"].startswith("context_window: ")
    assert (await admin.get("/api/admin/model")).json()["context_window"] == 32_000
    await admin.put("/api/admin/model", json={"provider": "offline"})


async def test_policy_edits_are_validated_and_apply_to_new_sessions(
    admin: httpx.AsyncClient, harness: Harness
) -> None:
    policy = (await admin.get("/api/admin/policy")).json()
    assert "Sales User" in policy["policy"]["roles"]
    bad = await admin.put("/api/admin/policy", json={"yaml": "roles:\n  Sales User: lead.*\n"})
    assert bad.status_code == 422
    assert "expected a list of glob strings" in bad.json()["detail"]
    # A misspelt key is refused, not ignored (it would silently drop every role's tools).
    typo = await admin.put("/api/admin/policy", json={"yaml": "role:\n  Sales User: [lead.*]\n"})
    assert typo.status_code == 422
    assert "unknown key(s) 'role'" in typo.json()["detail"]
    assert (
        await admin.put("/api/admin/policy", json={"yaml": "roles: [unclosed"})
    ).status_code == 422
    async with browser(harness) as before:
        await sign_in(before, SALES)
        narrowed = dict(policy["policy"])
        narrowed["roles"] = {**narrowed["roles"], "Sales User": ["customer.*"]}
        import yaml

        saved = await admin.put("/api/admin/policy", json={"yaml": yaml.safe_dump(narrowed)})
        assert saved.status_code == 200
        assert saved.json()["policy"]["roles"]["Sales User"] == ["customer.*"]
        async with browser(harness) as after:
            await sign_in(after, SALES)
            answer = sse_events(
                (await after.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text
            )[-1][1]
            assert [b["type"] for b in answer["blocks"]] == ["text"]  # the aggregate was refused
        # A session signed in before the change keeps what it was granted.
        earlier = sse_events(
            (await before.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text
        )[-1][1]
        assert "table" in [b["type"] for b in earlier["blocks"]]


async def test_read_only_switch_refuses_writes_in_open_sessions(admin: httpx.AsyncClient) -> None:
    proposal = next(
        b
        for b in sse_events((await admin.post("/api/chat", json={"message": CREATE_LEAD})).text)[
            -1
        ][1]["blocks"]
        if b["type"] == "proposal"
    )
    assert (await admin.put("/api/admin/tenant", json={"read_only": True})).json() == {
        "read_only": True,
        "source": "admin console",
    }
    assert (await admin.get("/api/auth/me")).json()["read_only"] is True
    refused = (
        await admin.post(
            f"/api/proposals/{proposal['id']}/confirm",
            json={"payload_hash": proposal["payload_hash"]},
        )
    ).json()
    assert refused["ok"] is False
    assert "no longer available" in refused["message"]
    await admin.put("/api/admin/tenant", json={"read_only": False})


async def test_budgets_stop_turns_and_usage_is_charted(admin: httpx.AsyncClient) -> None:
    sse_events((await admin.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text)
    usage = (await admin.get("/api/admin/usage", params={"days": 7})).json()
    assert usage["rows"][0]["org"] == "default"
    assert usage["rows"][0]["prompt"] == 350
    budgets = (await admin.put("/api/admin/budgets", json={"org": "default", "tokens": 100})).json()
    default = next(o for o in budgets["orgs"] if o["org"] == "default")
    assert default == {"org": "default", "tokens": 100, "used_this_month": 385}
    over = await admin.post("/api/chat", json={"message": SALES_BY_CUSTOMER})
    assert over.status_code == 429
    assert "100" in over.json()["detail"]
    await admin.put("/api/admin/budgets", json={"org": "default", "tokens": None})
    assert (await admin.post("/api/chat", json={"message": "hello"})).status_code == 200


async def test_interaction_log_filters_and_detail(admin: httpx.AsyncClient) -> None:
    sse_events((await admin.post("/api/chat", json={"message": SALES_BY_CUSTOMER})).text)
    sse_events((await admin.post("/api/chat", json={"message": "hello"})).text)
    everything = (await admin.get("/api/admin/log")).json()
    assert len(everything) == 2
    by_tool = (await admin.get("/api/admin/log", params={"tool": "display.chart"})).json()
    assert [r["message"] for r in by_tool] == [SALES_BY_CUSTOMER]
    assert (await admin.get("/api/admin/log", params={"user": "nobody@x"})).json() == []
    detail = (await admin.get(f"/api/admin/log/{by_tool[0]['turn_id']}")).json()
    assert detail["log"]["tools_called"] == [
        "metrics.query",
        "display.table",
        "display.chart",
    ]
    assert {e["tool"] for e in detail["events"]} >= {"metrics.query", "display.chart"}
    audit = (
        await admin.get("/api/admin/audit", params={"tool": "display.chart", "decision": "allowed"})
    ).json()
    assert audit
    assert all(e["tool"] == "display.chart" for e in audit)


async def test_knowledge_without_an_indexer_is_501(admin: httpx.AsyncClient) -> None:
    response = await admin.post(
        "/api/admin/knowledge", json={"name": "returns.md", "text": "# Returns"}
    )
    assert response.status_code == 501
    assert "no knowledge indexer" in response.json()["detail"]
    assert (await admin.post("/api/admin/knowledge/reindex")).status_code == 501


async def test_knowledge_upload_and_reindex_with_an_indexer(demo_erp: Any, tmp_path: Path) -> None:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    knowledge = FakeKnowledge()
    harness = build_app(runtime, tmp_path, knowledge=knowledge)
    async with client_for(harness.app) as admin:
        await sign_in(admin, ADMIN)
        bad = await admin.post("/api/admin/knowledge", json={"name": "../etc/passwd", "text": "x"})
        assert bad.status_code == 422
        ok = await admin.post(
            "/api/admin/knowledge", json={"name": "returns.md", "text": "# Returns"}
        )
        assert ok.json() == {"indexed": ["returns.md"]}
        assert (await admin.post("/api/admin/knowledge/reindex")).json() == {
            "indexed": ["returns.md"]
        }
    await runtime.aclose()


async def test_admin_settings_survive_a_restart(
    demo_erp: Any, tmp_path: Path, provider: str
) -> None:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    first = build_app(runtime, tmp_path)
    async with client_for(first.app) as admin:
        await sign_in(admin, ADMIN)
        await admin.put("/api/admin/tenant", json={"read_only": True})
        await admin.put("/api/admin/budgets", json={"org": "acme", "tokens": 5000})
        await admin.put(
            "/api/admin/model",
            json={"provider": "openai", "model": "m", "base_url": provider, "api_key": SECRET},
        )
    second = build_app(runtime, tmp_path)
    async with client_for(second.app) as admin:
        await sign_in(admin, ADMIN)
        assert (await admin.get("/api/admin/tenant")).json()["read_only"] is True
        assert {"org": "acme", "tokens": 5000, "used_this_month": 0} in (
            await admin.get("/api/admin/budgets")
        ).json()["orgs"]
        assert (await admin.get("/api/admin/model")).json()["key_set"] is True
    await first.switch.aclose()
    await second.switch.aclose()
    await runtime.aclose()


async def test_index_panel_shows_cards_waiting_for_embeddings(
    admin: httpx.AsyncClient, harness: Harness
) -> None:
    from erp_agent.retrieval.backfill import Backfill
    from erp_agent.retrieval.documents import Document, Kind

    runtime = harness.runtime
    index, embedder = runtime.retriever.index, runtime.retriever.embedder
    assert embedder is not None
    before = (await admin.get("/api/admin/index")).json()
    cards = [
        Document(key=f"lead:L-{i}", kind=Kind.RECORD, tenant="default", title=f"Lead L-{i}",
                 text=f"Lead L-{i} from the admin console test.", entity="lead", parent="lead")
        for i in range(3)
    ]  # fmt: skip
    index.upsert(cards)
    status = (await admin.get("/api/admin/index")).json()
    assert status["available"] is True
    assert status["documents"] == before["documents"] + 3
    assert status["keyword_only"] == before["keyword_only"] + 3
    Backfill(index, embedder, progress=runtime.index_progress).run()
    status = (await admin.get("/api/admin/index")).json()
    assert status["keyword_only"] == 0
    job = status["jobs"]["embedding"]
    assert job["done"] == job["total"] == before["keyword_only"] + 3
    assert job["running"] is False
    assert job["rate"] > 0


def chat(client: httpx.AsyncClient, question: str) -> Any:
    async def go() -> dict[str, Any]:
        reply = await client.post("/api/chat", json={"message": question})
        return dict(sse_events(reply.text)[-1][1])

    return go()


async def test_log_outcome_filters_find_what_they_name(
    admin: httpx.AsyncClient, harness: Harness
) -> None:
    """Each turn has one outcome and each filter finds exactly its turns: a proposal is an
    answer that proposed a write (its true outcome is "answered"), so "proposal" finds every
    proposal and "answered" none of them."""
    from typing import get_args

    from erp_agent.server.routes.admin import Outcome
    from erp_agent.store.records import RESULTS, Interaction

    assert get_args(Outcome) == RESULTS  # the API's filter and the store's outcomes agree
    proposals = [(await chat(admin, CREATE_LEAD))["turn_id"] for _ in range(2)]
    answered = (await chat(admin, SALES_BY_CUSTOMER))["turn_id"]
    store = harness.runtime.store
    for outcome, shown in (
        ("refused", "answered"),
        ("failed", "error"),
        ("interrupted", "stopped"),
    ):
        await store.log_interaction(
            Interaction(f"t-{outcome}", "c-x", ADMIN, "default", "q", "m", outcome, shown=shown)
        )
    found = {
        outcome: [r["turn_id"] for r in (await admin.get("/api/admin/log", params={"outcome": outcome})).json()]
        for outcome in RESULTS
    }  # fmt: skip
    assert sorted(found["proposal"]) == sorted(proposals)
    assert found["answered"] == [answered]
    assert found["refused"] == ["t-refused"]
    assert found["failed"] == ["t-failed"]
    assert found["interrupted"] == ["t-interrupted"]
    everything = (await admin.get("/api/admin/log")).json()
    assert sorted(r["turn_id"] for r in everything) == sorted(
        t for ids in found.values() for t in ids
    )
    # The column shows what the filter matches.
    assert {r["turn_id"]: r["outcome"] for r in everything}[proposals[0]] == "proposal"
    bad = await admin.get("/api/admin/log", params={"outcome": "stopped"})
    assert bad.status_code == 422  # a name no filter has is refused, not answered with nothing
    detail = (await admin.get(f"/api/admin/log/{proposals[0]}")).json()
    assert detail["outcome"] == "proposal"


async def test_feedback_view_lists_ratings_with_their_turns_and_filters(
    admin: httpx.AsyncClient, harness: Harness
) -> None:
    import datetime as dt

    first = (await chat(admin, SALES_BY_CUSTOMER))["turn_id"]
    second = (await chat(admin, CREATE_LEAD))["turn_id"]
    unrated = (await chat(admin, "hello"))["turn_id"]
    up = await admin.post(f"/api/turns/{first}/feedback", json={"rating": "up", "comment": "Spot on"})  # fmt: skip
    assert up.status_code == 200
    await admin.post(f"/api/turns/{second}/feedback", json={"rating": "down", "comment": "Wrong lead source"})  # fmt: skip
    async with browser(harness) as sales:
        await sign_in(sales, SALES)
        theirs = (await chat(sales, "hello"))["turn_id"]
        await sales.post(f"/api/turns/{theirs}/feedback", json={"rating": "down", "comment": "api_key=sk-secret-123456789"})  # fmt: skip
        # Nobody rates another user's answer.
        assert (await sales.post(f"/api/turns/{first}/feedback", json={"rating": "down"})).status_code == 404  # fmt: skip

    view = (await admin.get("/api/admin/feedback")).json()
    assert view["summary"] == {"up": 1, "down": 2}
    rows = {r["turn_id"]: r for r in view["rows"]}
    assert unrated not in rows
    assert rows[first]["rating"] == "up"
    assert rows[first]["comment"] == "Spot on"
    assert rows[first]["message"] == SALES_BY_CUSTOMER  # the turn it belongs to
    assert rows[first]["user"] == ADMIN
    assert rows[second]["outcome"] == "proposal"
    assert rows[first]["rated_at"] >= rows[first]["at"]
    assert "sk-secret" not in rows[theirs]["comment"]  # masked like the question

    def turns(**params: Any) -> Any:
        async def go() -> list[str]:
            reply = await admin.get("/api/admin/feedback", params=params)
            assert reply.status_code == 200, reply.text
            return sorted(r["turn_id"] for r in reply.json()["rows"])

        return go()

    assert await turns(user=SALES) == [theirs]
    assert await turns(rating="down") == sorted([second, theirs])
    assert await turns(outcome="proposal") == [second]
    assert await turns(rating="up", outcome="proposal") == []
    today = dt.datetime.now(dt.UTC).date()
    assert await turns(since=today.isoformat(), until=today.isoformat()) == sorted([first, second, theirs])  # fmt: skip
    assert await turns(until=(today - dt.timedelta(days=1)).isoformat()) == []
    assert await turns(since=(today + dt.timedelta(days=1)).isoformat()) == []
    assert (await admin.get("/api/admin/feedback", params={"rating": "meh"})).status_code == 422
    # Feedback changed later replaces the earlier one.
    await admin.post(f"/api/turns/{first}/feedback", json={"rating": "down", "comment": "On second thought"})  # fmt: skip
    assert (await admin.get("/api/admin/feedback")).json()["summary"] == {"up": 0, "down": 3}
    # The turn's detail shows it too.
    detail = (await admin.get(f"/api/admin/log/{first}")).json()
    assert detail["feedback"]["comment"] == "On second thought"


async def test_index_counts_add_up_while_cards_arrive_during_embedding(
    admin: httpx.AsyncClient, harness: Harness
) -> None:
    """Cards synced while the backfill runs are embedded in the same run: its total grows with
    them ("N of N cards embedded" at the end, never more done than total), and the panel's
    figures add up: documents = embedded + keyword-only."""
    from erp_agent.retrieval.backfill import Backfill
    from erp_agent.retrieval.documents import Document, Kind

    runtime = harness.runtime
    index, embedder = runtime.retriever.index, runtime.retriever.embedder
    assert embedder is not None

    def card(i: int) -> Document:
        return Document(key=f"lead:L-late-{i}", kind=Kind.RECORD, tenant="default",
                        title=f"Lead L-late-{i}", text=f"Lead L-late-{i}.", entity="lead",
                        parent="lead")  # fmt: skip

    index.upsert([card(i) for i in range(3)])
    Backfill(index, embedder, progress=runtime.index_progress).run()  # everything embedded
    index.upsert([card(i) for i in range(3, 8)])
    arriving = [card(i) for i in range(8, 20)]
    job = Backfill(index, embedder, batch_size=2, progress=runtime.index_progress)
    seen: list[tuple[int, int | None]] = []

    def sync_meanwhile(phase: Any) -> None:  # the record sync writes while embedding runs
        seen.append((phase.done, phase.total))
        if arriving and phase.done:
            index.upsert([arriving.pop()])

    runtime.index_progress.listeners.append(sync_meanwhile)
    try:
        stored = job.run()
    finally:
        runtime.index_progress.listeners.remove(sync_meanwhile)
    assert stored == 17
    assert all(total is None or done <= total for done, total in seen), seen
    status = (await admin.get("/api/admin/index")).json()
    assert status["keyword_only"] == 0
    assert status["documents"] == status["embedded"] + status["keyword_only"]
    done = status["jobs"]["embedding"]
    assert done["done"] == done["total"] == 17
    assert done["detail"] == "cards embedded"
