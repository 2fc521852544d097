"""A figure's documents on every channel, against the demo ERP: the API (``GET /api/drill``:
the owner gets the documents, anyone else and an expired reference a plain refusal), the CLI
(``ask --json`` carries the references, ``erp-agent drill REF`` opens one) and the markdown of
MCP and the OpenAI-compatible API (a link per figure)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from server_doubles import (
    TOP_CUSTOMERS,
    Harness,
    ScriptBook,
    build_app,
    client_for,
    make_runtime,
    sign_in,
    sse_events,
)
from typer.testing import CliRunner

from erp_agent.channels.markdown import blocks_markdown, figure_links
from erp_agent.cli import _agent
from erp_agent.cli.ask import ask
from erp_agent.cli.drill import drill
from erp_agent.results.store import ResultRecord
from erp_agent.tools.modules.drill import DRILL_DAYS

pytestmark = pytest.mark.anyio
WEB = "https://agent.example.com/erp"


@pytest.fixture
async def harness(demo_erp: Any, tmp_path: Path) -> AsyncIterator[Harness]:
    runtime = await make_runtime(demo_erp.url, tmp_path)
    yield build_app(runtime, tmp_path)
    await runtime.aclose()


@pytest.fixture
async def owner(harness: Harness) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(harness.app) as client:
        await sign_in(client, "admin@demo.local")
        yield client


def other_client(harness: Harness) -> httpx.AsyncClient:
    """A second browser against the same app (the lifespan is already running)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=harness.app), base_url="http://testserver"
    )


async def _answer(client: httpx.AsyncClient) -> tuple[list[dict[str, Any]], Any]:
    reply = await client.post("/api/chat", json={"message": TOP_CUSTOMERS})
    events = sse_events(reply.text)
    assert events[-1][0] == "response", events[-1]
    blocks: list[dict[str, Any]] = events[-1][1]["blocks"]
    return blocks, events[-1][1]


async def test_the_api_opens_a_figure_for_its_owner_and_refuses_anyone_else(
    harness: Harness, owner: httpx.AsyncClient
) -> None:
    blocks, response = await _answer(owner)
    table = next(b for b in blocks if b["type"] == "table")
    chart = next(b for b in blocks if b["type"] == "chart")
    # Every row of the table, every bar and every total carries its reference.
    assert all(table["drills"])
    assert len(table["drills"]) == len(table["rows"]) == 5
    assert chart["charts"][0]["drills"] == table["drills"]
    [total] = table["drill_totals"]
    definition = next(c["definition"] for c in response["tools_called"] if c.get("definition"))
    assert definition["drill"] == table["drill_totals"]
    opened = await owner.get(f"/api/drill/{table['drills'][0]}")
    assert opened.status_code == 200, opened.text
    body = opened.json()
    assert body["listed"]["matches"] is True
    assert body["figure"]["value"] == table["rows"][0][table["columns"].index("billed")]
    [listing] = body["blocks"]
    assert listing["type"] == "table"
    assert listing["total_rows"] == body["listed"]["records"]
    assert all(link and "/app/sales-invoice/" in link for link in listing["links"])
    whole = (await owner.get(f"/api/drill/{total['ref']}")).json()
    assert whole["listed"]["records"] == total["records"]
    assert (await owner.get("/api/drill/not-a-reference")).status_code == 400
    # Kept longer than a figure opens for: expired, and said so.
    store = harness.runtime.results
    record = await store.fetch_stored(table["drills"][0].split(".")[0], "admin@demo.local")
    assert record is not None
    old = dt.datetime.now(dt.UTC) - dt.timedelta(days=DRILL_DAYS, minutes=1)
    await store.save(ResultRecord("res_expiredfigure", record.user, record.tool,
                                  record.data, created_at=old))  # fmt: skip
    expired = await owner.get("/api/drill/res_expiredfigure.r0")
    assert expired.status_code == 410
    assert "expired" in expired.json()["detail"]
    async with other_client(harness) as other:
        await sign_in(other, "accounts@demo.local")
        refused = await other.get(f"/api/drill/{table['drills'][0]}")
        assert refused.status_code == 404
        assert refused.json()["detail"].startswith("There is no result")


async def test_markdown_links_each_figure_to_its_documents(
    harness: Harness, owner: httpx.AsyncClient
) -> None:
    blocks, _ = await _answer(owner)
    text = blocks_markdown(blocks, web_url=WEB)
    table = next(b for b in blocks if b["type"] == "table")
    for ref in table["drills"]:
        assert f"[open]({WEB}/?drill={ref})" in text  # in the table and under the chart
    assert text.count("| Documents |") == 2
    assert "Documents behind the total: [" in text
    assert f"({WEB}/?drill={table['drill_totals'][0]['ref']})" in text
    # Without the web app's address there is nothing to link to.
    assert "?drill=" not in blocks_markdown(blocks)
    # An MCP client given the figures themselves (no table) gets a link per figure too.
    result_id = table["result_id"]
    stored = await harness.runtime.results.fetch_stored(result_id, "admin@demo.local")
    assert stored is not None
    linked = figure_links(result_id, stored.data, WEB)
    assert "- Total: " in linked
    assert f"[documents]({WEB}/?drill={result_id}.t0)" in linked
    for ref in table["drills"]:
        assert f"[documents]({WEB}/?drill={ref})" in linked


def test_ask_json_carries_the_references_and_drill_opens_one(
    demo_erp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "demo")
    monkeypatch.setenv("ERP_AGENT_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(_agent, "model_for", lambda runtime, spec: ScriptBook())
    app = typer.Typer()
    app.command("ask")(ask)
    app.command("drill")(drill)
    runner = CliRunner()
    asked = runner.invoke(app, ["ask", TOP_CUSTOMERS, "--as", "admin@demo.local", "--json"])
    assert asked.exit_code == 0, asked.output
    payload = json.loads(asked.stdout)
    chart = next(b for b in payload["blocks"] if b["type"] == "chart")
    ref = chart["charts"][0]["drills"][2]
    opened = runner.invoke(app, ["drill", ref, "--as", "admin@demo.local", "--json"])
    assert opened.exit_code == 0, opened.output
    body = json.loads(opened.stdout)
    assert body["ref"] == ref
    assert body["listed"]["matches"] is True
    assert len(body["rows"]) == body["listed"]["records"] == body["figure"]["records"]
    shown = runner.invoke(app, ["drill", ref, "--as", "admin@demo.local"])
    assert shown.exit_code == 0, shown.output
    assert "the figure, exactly" in shown.output
    refused = runner.invoke(app, ["drill", ref, "--as", "accounts@demo.local"])
    assert refused.exit_code == 1
    assert "There is no result" in refused.output
