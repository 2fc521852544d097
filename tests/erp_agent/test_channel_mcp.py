"""The MCP server driven by the official ``mcp`` client: over streamable HTTP against the running
server (a bearer API key per user) and over stdio (`erp-agent mcp --as USER` as a subprocess).
Each shows a figure that matches the ERP's REST API, a refused cross-scope request, and a write
that did not happen; a write happens only when the human says yes to the elicitation."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from channel_fixtures import (
    ADMIN,
    OwnERP,
    admin_client,
    agent,
    issue_key,
    own_erp,
    rest_names,
    revenue,
)
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from server_doubles import LiveServer

from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio
__all__ = ["agent", "own_erp"]
KISUMU = "kisumu.manager@demo.local"


@asynccontextmanager
async def http_client(url: str, key: str, **options: Any) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    async with (
        http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), **options) as client,
    ):
        yield client


def _year_revenue_args() -> dict[str, Any]:
    year = dt.date.today().year
    return {"metric": "revenue", "period": {"from": f"{year}-01-01", "to": f"{year}-12-31"}}


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _mombasa_invoice(erp: OwnERP) -> str:
    conn = sqlite3.connect(erp.path)
    try:
        (name,) = conn.execute(
            "select name from `tabSales Invoice` where branch = 'Mombasa' and docstatus = 1 limit 1"
        ).fetchone()
    finally:
        conn.close()
    return str(name)


async def test_over_http_a_figure_is_the_erps_own(agent: LiveServer, own_erp: OwnERP) -> None:
    truth = revenue(own_erp.url, dt.date.today().year)
    async with http_client(agent.url, issue_key(agent.url, ADMIN)) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "metrics.query" in names
        assert "tools.search" in names
        assert len(names) < 25  # routed: the spine and tools.search, not every tool
        assert not any("confirm" in n for n in names)  # no tool can confirm a proposal
        result = await client.call_tool("metrics.query", _year_revenue_args())
    assert not result.is_error
    text = _text(result)
    assert truth
    assert all(figure_present(text, v) for v in truth), (truth, text[:800])


async def test_over_http_cross_scope_requests_are_refused(
    agent: LiveServer, own_erp: OwnERP
) -> None:
    mombasa = _mombasa_invoice(own_erp)
    async with http_client(agent.url, issue_key(agent.url, KISUMU)) as client:
        # Another branch's invoice: the ERP's own refusal, verbatim, and none of its figures.
        probe = await client.call_tool("sales_invoice.get", {"id": mombasa})
        assert probe.is_error
        assert "does not have access to this document" in _text(probe)
        # A tool this user may not use, and one that does not exist: the protocol's own error.
        with pytest.raises(MCPError, match=r"not available to kisumu\.manager"):
            await client.call_tool("attendance.list", {})
        with pytest.raises(MCPError, match=r"no tool named 'proposal\.confirm'"):
            await client.call_tool("proposal.confirm", {"id": "prop_x"})
        # The branch's own revenue matches the ERP's answer to this user.
        mine = await client.call_tool("metrics.query", _year_revenue_args())
    truth = revenue(own_erp.url, dt.date.today().year, user=KISUMU)
    assert all(figure_present(_text(mine), v) for v in truth), (truth, _text(mine)[:800])


async def test_a_write_without_elicitation_is_a_proposal_with_a_link(
    agent: LiveServer, own_erp: OwnERP
) -> None:
    name = "Mcp Link Prospect"
    async with http_client(agent.url, issue_key(agent.url, ADMIN)) as client:
        result = await client.call_tool("lead.create", {"name": name})
    text = _text(result)
    assert "Proposed change (not written)" in text, text
    assert "?proposal=prop_" in text or result.structured_content["status"] == "proposal"
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", name]]) == []


async def test_a_write_happens_only_when_the_human_accepts(
    agent: LiveServer, own_erp: OwnERP
) -> None:
    asked: list[str] = []

    def answering(yes: bool) -> Any:
        async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(params.message)
            if not yes:
                return types.ElicitResult(action="decline")
            return types.ElicitResult(action="accept", content={"confirm": True})

        return callback

    key = issue_key(agent.url, ADMIN)
    async with http_client(agent.url, key, elicitation_callback=answering(False)) as client:
        declined = await client.call_tool("lead.create", {"name": "Mcp Declined Prospect"})
    assert "Not written" in _text(declined)
    assert "Mcp Declined Prospect" in asked[0]  # the user saw the exact document
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", "Mcp Declined Prospect"]]) == []
    async with http_client(agent.url, key, elicitation_callback=answering(True)) as client:
        accepted = await client.call_tool("lead.create", {"name": "Mcp Accepted Prospect"})
    assert not accepted.is_error, _text(accepted)
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", "Mcp Accepted Prospect"]])
    # Both decisions went through the event stream (its metrics count them).
    admin = admin_client(agent.url)
    metrics = admin.get("/metrics").text
    admin.close()
    assert 'erp_agent_proposals_total{decision="rejected"}' in metrics
    assert 'erp_agent_proposals_total{decision="confirmed"}' in metrics


async def test_bad_keys_and_malformed_json_rpc_get_the_protocols_errors(agent: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=agent.url, timeout=30) as http:
        none = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert none.status_code == 401
        assert "Authorization: Bearer" in none.json()["error"]["message"]
        wrong = await http.post(
            "/mcp", content=b"{}", headers={"Authorization": "Bearer eak_wrong"}
        )
        assert wrong.status_code == 401
        assert "not valid or was revoked" in wrong.json()["error"]["message"]
        odd = await http.post(
            "/mcp", content=b"{}", headers={"Authorization": "Bearer \xe9t\xe9".encode("latin-1")}
        )
        assert odd.status_code == 401  # any bytes in the header: a clear refusal, never a 500
        key = issue_key(agent.url, ADMIN)
        garbled = await http.post(
            "/mcp",
            content=b'{"jsonrpc": "2.0", "id": 1, "method": ',
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json",
                     "Accept": "application/json, text/event-stream"},
        )  # fmt: skip
    assert garbled.status_code == 400
    assert garbled.json()["error"]["code"] == -32700  # JSON-RPC's parse error


async def test_a_wrong_key_is_the_servers_words_in_the_sdk_not_an_oauth_flow(
    agent: LiveServer,
) -> None:
    # The official SDK shows the server's reason; nothing points it at an authorization server.
    with pytest.raises(BaseException) as caught:  # noqa: PT011 (raised in a task group)
        async with http_client(agent.url, "eak_wrong") as client:
            await client.list_tools()
    errors = [caught.value]
    while isinstance(errors[-1], BaseExceptionGroup):
        errors.append(errors[-1].exceptions[0])
    assert isinstance(errors[-1], MCPError)
    assert "not valid or was revoked" in str(errors[-1])
    async with httpx.AsyncClient(base_url=agent.url, timeout=30) as http:
        wrong = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize"},
            headers={"Authorization": "Bearer eak_wrong"},
        )
        assert wrong.status_code == 401
        assert "resource_metadata" not in wrong.headers["www-authenticate"]
        for discovery in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-authorization-server",
        ):
            found = await http.get(discovery)
            assert found.status_code == 404
            assert "API key" in found.json()["error_description"]


async def test_over_stdio_as_the_user(own_erp: OwnERP, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ERP_AGENT_ERP_URL": own_erp.url,
        "ERP_AGENT_PASSWORD": "demo",
        "ERP_AGENT_DATA_DIR": str(tmp_path),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "erp_agent", "mcp", "--as", KISUMU], env=env
    )
    async with Client(params) as client:
        result = await client.call_tool("metrics.query", _year_revenue_args())
        probe = await client.call_tool("sales_invoice.get", {"id": _mombasa_invoice(own_erp)})
        write = await client.call_tool("lead.create", {"name": "Mcp Stdio Prospect"})
    truth = revenue(own_erp.url, dt.date.today().year, user=KISUMU)
    assert all(figure_present(_text(result), v) for v in truth), (truth, _text(result)[:800])
    assert probe.is_error
    assert "does not have access" in _text(probe)
    assert json.dumps(write.structured_content).count("proposal") >= 1
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", "Mcp Stdio Prospect"]]) == []


async def test_a_large_result_is_a_resource_only_its_owner_reads(agent: LiveServer) -> None:
    async with http_client(agent.url, issue_key(agent.url, ADMIN)) as client:
        result = await client.call_tool("sales_invoice.list", {"limit": 200})
        links = [c for c in result.content if isinstance(c, types.ResourceLink)]
        assert links, _text(result)[:300]
        page = result.structured_content
        assert len(page["page"]) == 20  # one page and an exact summary; the rest stays here
        assert page["summary"]["row_count"] == 200
        whole = await client.read_resource(str(links[0].uri))
        rows = json.loads(whole.contents[0].text)  # type: ignore[union-attr]
        assert len(rows.get("records") or rows.get("rows") or rows) == 200
        found = await client.call_tool("tools.search", {"query": "approve purchase order"})
        assert not found.is_error
    async with http_client(agent.url, issue_key(agent.url, KISUMU)) as other:
        with pytest.raises(MCPError, match="no result"):
            await other.read_resource(str(links[0].uri))


async def test_over_stdio_before_2026_the_user_is_asked_too(
    own_erp: OwnERP, tmp_path: Path
) -> None:
    env = {**os.environ, "ERP_AGENT_ERP_URL": own_erp.url, "ERP_AGENT_PASSWORD": "demo",
           "ERP_AGENT_DATA_DIR": str(tmp_path)}  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "erp_agent", "mcp", "--as", ADMIN], env=env
    )
    asked: list[str] = []

    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    async with Client(params, mode="legacy", elicitation_callback=decline) as client:
        result = await client.call_tool("lead.create", {"name": "Mcp Legacy Prospect"})
    assert asked
    assert "Not written" in _text(result)
    assert rest_names(own_erp.url, "Lead", [["lead_name", "=", "Mcp Legacy Prospect"]]) == []
