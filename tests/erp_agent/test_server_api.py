"""The HTTP API in-process (httpx ASGITransport) against the demo ERP over real HTTP."""

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

from erp_agent.server.security import CSRF_COOKIE, SESSION_COOKIE

pytestmark = pytest.mark.anyio
ADMIN = "admin@demo.local"
SALES = "sales@demo.local"


@pytest.fixture
async def harness(demo_erp: Any, tmp_path: Path) -> AsyncIterator[Harness]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    yield build_app(runtime, tmp_path)
    await runtime.aclose()


@pytest.fixture
async def client(harness: Harness) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(harness.app) as client:
        yield client


def other_client(harness: Harness) -> httpx.AsyncClient:
    """A second browser against the same app (the lifespan is already running)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=harness.app), base_url="http://testserver"
    )


async def ask(
    client: httpx.AsyncClient, message: str, conversation_id: str | None = None
) -> list[tuple[str, Any]]:
    response = await client.post(
        "/api/chat", json={"message": message, "conversation_id": conversation_id}
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return sse_events(response.text)


def final(events: list[tuple[str, Any]]) -> dict[str, Any]:
    assert events[-1][0] == "response", events[-1]
    payload: dict[str, Any] = events[-1][1]
    return payload


# ------------------------------------------------------------------ sign-in, cookies, CSRF


async def test_sign_in_sets_an_httponly_lax_cookie_and_me_answers(
    client: httpx.AsyncClient,
) -> None:
    csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
    response = await client.post(
        "/api/auth/sign-in",
        json={"user": ADMIN, "password": "demo"},
        headers={"X-CSRF-Token": csrf},
    )
    assert response.status_code == 200
    cookies = response.headers.get_list("set-cookie")
    session_cookie = next(c for c in cookies if c.startswith(SESSION_COOKIE))
    assert "HttpOnly" in session_cookie
    assert "SameSite=lax" in session_cookie
    client.headers["X-CSRF-Token"] = response.json()["csrf"]
    me = (await client.get("/api/auth/me")).json()
    assert me["user"] == ADMIN
    assert me["is_admin"] is True
    assert (await client.post("/api/auth/sign-out")).status_code == 200
    assert (await client.get("/api/auth/me")).status_code == 401


async def test_wrong_password_gets_the_erps_refusal(client: httpx.AsyncClient) -> None:
    csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
    response = await client.post(
        "/api/auth/sign-in",
        json={"user": ADMIN, "password": "nope"},
        headers={"X-CSRF-Token": csrf},
    )
    assert response.status_code == 401
    assert "Sign-in to the ERP failed" in response.json()["detail"]


async def test_unsafe_requests_without_the_csrf_token_are_refused(
    client: httpx.AsyncClient,
) -> None:
    csrf = (await client.get("/api/auth/csrf")).json()["csrf"]
    no_header = await client.post("/api/auth/sign-in", json={"user": ADMIN, "password": "demo"})
    assert no_header.status_code == 403
    await sign_in(client, ADMIN)
    assert csrf != client.headers["X-CSRF-Token"]  # a fresh token per session
    for headers in ({"X-CSRF-Token": ""}, {"X-CSRF-Token": csrf}, {"X-CSRF-Token": "forged"}):
        refused = await client.post("/api/chat", json={"message": "hi"}, headers=headers)
        assert refused.status_code == 403, headers
        assert "CSRF" in refused.json()["detail"]
    # A cross-site form post carries the cookie but cannot read it to set the header.
    client.cookies.delete(CSRF_COOKIE)
    refused = await client.post("/api/chat", json={"message": "hi"})
    assert refused.status_code == 403


async def test_everything_but_health_and_docs_needs_a_session(client: httpx.AsyncClient) -> None:
    for path in ("/api/conversations", "/api/results/res_x", "/api/admin/model", "/api/auth/me"):
        assert (await client.get(path)).status_code == 401, path
    assert (await client.get("/openapi.json")).status_code == 200
    assert (await client.get("/docs")).status_code == 200


# ------------------------------------------------------------------ chat, conversations, results


async def test_chat_streams_progress_then_a_table_and_a_chart(client: httpx.AsyncClient) -> None:
    await sign_in(client, ADMIN)
    events = await ask(client, SALES_BY_CUSTOMER)
    kinds = [e for e, _ in events]
    assert "progress" in kinds
    assert kinds[-1] == "response"
    labels = [data["label"] for kind, data in events if kind == "progress"]
    assert "Thinking…" in labels
    response = final(events)
    types = [b["type"] for b in response["blocks"]]
    assert types == ["text", "table", "chart"]
    table = response["blocks"][1]
    # One row per customer and currency; the chart draws each customer once.
    assert table["total_rows"] >= len(response["blocks"][2]["spec"]["data"]["labels"]) > 1
    assert [c["name"] for c in response["tools_called"]] == [
        "metrics.query", "display.table", "display.chart",
    ]  # fmt: skip
    assert response["usage"] == {"prompt": 350, "cached": 60, "completion": 35}
    assert response["model"] == "scripted-1"


async def test_conversations_resume_with_stored_responses_and_feedback(
    client: httpx.AsyncClient, harness: Harness
) -> None:
    await sign_in(client, ADMIN)
    first = final(await ask(client, SALES_BY_CUSTOMER))
    second = final(await ask(client, "Anything else?", first["conversation_id"]))
    assert second["conversation_id"] == first["conversation_id"]
    listed = (await client.get("/api/conversations")).json()
    assert listed[0]["id"] == first["conversation_id"]
    resumed = (await client.get(f"/api/conversations/{first['conversation_id']}")).json()
    assert [t["user_message"] for t in resumed["turns"]] == [SALES_BY_CUSTOMER, "Anything else?"]
    assert resumed["turns"][0]["response"]["blocks"][1]["type"] == "table"

    rated = await client.post(
        f"/api/turns/{first['turn_id']}/feedback", json={"rating": "down", "comment": "too wide"}
    )
    assert rated.status_code == 200
    resumed = (await client.get(f"/api/conversations/{first['conversation_id']}")).json()
    assert resumed["turns"][0]["feedback"]["comment"] == "too wide"
    assert (
        await client.post(f"/api/turns/{first['turn_id']}/feedback", json={"rating": "meh"})
    ).status_code == 422

    async with other_client(harness) as other:
        await sign_in(other, SALES)
        assert (
            await other.get(f"/api/conversations/{first['conversation_id']}")
        ).status_code == 404
        refused = await other.post(f"/api/turns/{first['turn_id']}/feedback", json={"rating": "up"})
        assert refused.status_code == 404


async def test_results_page_and_export_for_their_owner_only(
    client: httpx.AsyncClient, harness: Harness
) -> None:
    await sign_in(client, ADMIN)
    table = final(await ask(client, SALES_BY_CUSTOMER))["blocks"][1]
    result_id = table["result_id"]
    page = (await client.get(f"/api/results/{result_id}", params={"start": 1, "limit": 2})).json()
    assert page["total_rows"] == table["total_rows"]
    assert page["rows"] == table["rows"][1:3]
    assert page["columns"] == table["columns"]
    exported = await client.get(f"/api/results/{result_id}/export")
    assert exported.headers["content-type"].startswith("text/csv")
    lines = exported.text.strip().splitlines()
    # The table's columns first (an export may add the result's own, e.g. records counted).
    assert lines[0].split(",")[: len(table["columns"])] == table["columns"]
    assert len(lines) == table["total_rows"] + 1
    assert (
        await client.get(f"/api/results/{result_id}", params={"columns": "nope"})
    ).status_code == 422

    async with other_client(harness) as other:
        await sign_in(other, SALES)
        assert (await other.get(f"/api/results/{result_id}")).status_code == 404
        assert (await other.get(f"/api/results/{result_id}/export")).status_code == 404


async def test_a_proposal_is_confirmed_once_with_its_exact_hash(client: httpx.AsyncClient) -> None:
    await sign_in(client, ADMIN)
    response = final(await ask(client, CREATE_LEAD))
    assert response["outcome"] == "proposal"
    proposal = next(b for b in response["blocks"] if b["type"] == "proposal")
    assert proposal["document"]["name"] == "Jane Roe"
    url = f"/api/proposals/{proposal['id']}/confirm"
    wrong = (await client.post(url, json={"payload_hash": "0" * 64})).json()
    assert wrong["ok"] is False
    assert "not what was proposed" in wrong["message"]
    done = (await client.post(url, json={"payload_hash": proposal["payload_hash"]})).json()
    assert done["ok"] is True, done
    assert done["link"]
    again = (await client.post(url, json={"payload_hash": proposal["payload_hash"]})).json()
    assert again["ok"] is False
    resumed = (await client.get(f"/api/conversations/{response['conversation_id']}")).json()
    shown = next(b for b in resumed["turns"][0]["response"]["blocks"] if b["type"] == "proposal")
    assert shown["status"] == "executed"


async def test_a_rejected_proposal_writes_nothing(
    client: httpx.AsyncClient, harness: Harness
) -> None:
    await sign_in(client, ADMIN)
    proposal = next(
        b for b in final(await ask(client, CREATE_LEAD))["blocks"] if b["type"] == "proposal"
    )
    async with other_client(harness) as other:
        await sign_in(other, SALES)
        stolen = (await other.post(f"/api/proposals/{proposal['id']}/reject")).json()
        assert stolen["ok"] is False
    rejected = (await client.post(f"/api/proposals/{proposal['id']}/reject")).json()
    assert rejected["ok"] is True
    confirm = await client.post(
        f"/api/proposals/{proposal['id']}/confirm", json={"payload_hash": proposal["payload_hash"]}
    )
    assert confirm.json()["ok"] is False


# ------------------------------------------------------------------ operations


async def test_health_checks_the_store_and_the_erp(
    client: httpx.AsyncClient, harness: Harness
) -> None:
    healthy = await client.get("/healthz")
    assert healthy.status_code == 200
    assert healthy.json() == {"status": "ok", "store": "ok", "erp": "ok"}

    async def down() -> None:
        raise httpx.ConnectError("refused")

    harness.app.state.server.erp_ping = down
    degraded = await client.get("/healthz")
    assert degraded.status_code == 503
    assert degraded.json()["erp"] == "failed: ConnectError"


async def test_metrics_count_requests_turns_tools_and_tokens(client: httpx.AsyncClient) -> None:
    await sign_in(client, ADMIN)
    await ask(client, SALES_BY_CUSTOMER)
    text = (await client.get("/metrics")).text
    assert 'erp_agent_http_requests_total{method="POST",route="/api/chat",status="200"} 1.0' in text
    assert 'erp_agent_turn_seconds_count{outcome="answered"} 1.0' in text
    assert 'erp_agent_tool_calls_total{tool="metrics.query"} 1.0' in text
    assert 'erp_agent_tokens_total{kind="prompt"} 350.0' in text


async def test_exports_go_through_the_export_tool(
    client: httpx.AsyncClient, harness: Harness
) -> None:
    await sign_in(client, ADMIN)
    result_id = final(await ask(client, SALES_BY_CUSTOMER))["blocks"][1]["result_id"]
    xlsx = await client.get(f"/api/results/{result_id}/export", params={"format": "xlsx"})
    assert xlsx.status_code == 200
    assert xlsx.content[:2] == b"PK"  # a zip container: a real workbook
    assert "attachment" in xlsx.headers["content-disposition"]
    events = await harness.runtime.store.events(tool="results.export")
    assert events
    assert events[0].user == ADMIN


def test_file_blocks_reach_the_browser_as_urls_not_paths() -> None:
    from erp_agent.server.blocks import for_web

    block = {"type": "file", "name": "Sales.xlsx", "path": "/srv/exports/admin/res_abc.xlsx"}
    (shown,) = for_web([block])
    assert shown == {
        "type": "file",
        "name": "Sales.xlsx",
        "url": "api/results/res_abc/export?format=xlsx",  # under the app's root path
    }
