"""What the model sees, end to end: real turns against the demo ERP with a model behind the
package's fake OpenAI-compatible server (real HTTP, a free loopback port). One test per defect
a frontier model ran into: schemas cut for a hosted model, tools dropped between rounds, an
empty result under a branch restriction read as "nothing", a year flagged as an unsupported
figure, a refused report with a metric that answers it, a report whose company the model
could not know."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest
from pydantic import SecretStr

from erp_agent.config import EngineSettings, ModelSettings
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply
from erp_agent.models.openai_compatible import OpenAICompatibleModel
from erp_agent.runtime import Runtime

pytestmark = pytest.mark.anyio
TODAY_SETTINGS = EngineSettings(today=dt.date(2026, 11, 30))


@pytest.fixture
def server() -> Iterator[tuple[FakeOpenAIServer, str]]:
    fake = FakeOpenAIServer(api_key="k", model="gpt-5.5", listed_window=200_000)
    with fake.running() as url:
        yield fake, url


def _model(url: str, spec: str = "openai-compatible:gpt-5.5") -> OpenAICompatibleModel:
    settings = ModelSettings.model_validate(
        {"model": spec, "base_url": url, "api_key": SecretStr("k")}
    )
    return OpenAICompatibleModel(settings)


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    return list(body.get("tools") or [])


def _names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"].replace("__", ".") for t in _tools(body)]


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


async def test_a_hosted_model_gets_every_schema_whole(
    runtime: Runtime, server: tuple[FakeOpenAIServer, str]
) -> None:
    fake, url = server
    fake.enqueue(FakeReply.text("Done."))
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    model = _model(url)
    try:
        await runtime.engine(model, TODAY_SETTINGS).run_turn(session, "Revenue by month this year")
    finally:
        await model.aclose()
    sent = {t["function"]["name"]: t["function"] for t in _tools(fake.requests[0].body)}
    full = runtime.registry.get("metrics.query")
    assert full is not None
    whole = full.schema(session)["function"]
    assert sent["metrics__query"]["description"] == whole["description"]  # not its first sentence
    enum = sent["metrics__query"]["parameters"]["properties"]["metric"]["enum"]
    assert "receivables_overdue_61_90" in enum  # what answers "60 days late" is named
    assert model.profile.context_window == 200_000


async def test_a_turns_rounds_only_append_to_the_tools_array(
    runtime: Runtime, server: tuple[FakeOpenAIServer, str]
) -> None:
    """A self-hosted 8k model (compact schemas): the tools array of each round begins with the
    previous round's byte for byte, as the results grow and tools.search adds tools."""
    fake, url = server
    fake.listed_window = None
    fake.context_limit = 64_000
    fake.enqueue(
        FakeReply.call("metrics.query", {"metric": "billed", "group_by": ["customer"]}),
        FakeReply.call("tools.search", {"query": "salary slips by employee"}),
        FakeReply.call("metrics.query", {"metric": "revenue", "group_by": ["customer"]}),
        FakeReply.text("Done."),
    )
    session = await runtime.sign_in("admin@demo.local", "demo")
    model = _model(url, "vllm:gpt-5.5")
    try:
        await runtime.engine(model, TODAY_SETTINGS).run_turn(session, "Billed by customer")
    finally:
        await model.aclose()
    bodies = [r.body for r in fake.requests]
    assert len(bodies) == 4
    for before, after in pairwise(bodies):
        old, new = _tools(before), _tools(after)
        assert json.dumps(new[: len(old)]) == json.dumps(old)
    added = _names(bodies[2])[len(_names(bodies[1])) :]
    assert added  # the search enabled tools, appended at the end
    assert all(n.startswith(("salary_slip.", "employee.")) for n in added), added


async def test_an_empty_result_under_a_branch_restriction_says_so(
    runtime: Runtime, server: tuple[FakeOpenAIServer, str]
) -> None:
    fake, url = server
    fake.enqueue(
        FakeReply.call(
            "sales_invoice.list", {"filters": [{"field": "branch", "op": "=", "value": "Mombasa"}]}
        ),
        FakeReply.text("No invoices for Mombasa are visible to you."),
    )
    session = await runtime.sign_in("kisumu.manager@demo.local", "demo")
    model = _model(url)
    try:
        await runtime.engine(model, TODAY_SETTINGS).run_turn(session, "Show me Mombasa's invoices")
    finally:
        await model.aclose()
    first, second = fake.requests[0].body, fake.requests[1].body
    session_block = first["messages"][1]["content"]
    assert "Restricted by the user's ERP permissions to Branch Kisumu" in session_block
    [result] = _tool_results(second)
    assert result["result"]["records"] == []
    assert "Branch Kisumu" in result["scope"]
    assert "not visible to them" in result["scope"]
    assert "does not mean there is none" in result["scope"]


async def test_a_year_is_no_figure_but_a_computed_share_is(
    runtime: Runtime, server: tuple[FakeOpenAIServer, str]
) -> None:
    fake, url = server
    fake.enqueue(
        FakeReply.call("metrics.query", {"metric": "invoice_count"}),
        FakeReply.text(
            "Invoices counted as of 30 November 2026, in FY 2026/27 and Q4 2026: above."
        ),
        FakeReply.call("metrics.query", {"metric": "invoice_count"}),
        FakeReply.text("About a third of them are overdue."),
        FakeReply.text("Some of them are overdue."),
    )
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    model = _model(url)
    try:
        engine = runtime.engine(model, TODAY_SETTINGS)
        dated = await engine.run_turn(session, "How many invoices did we raise?")
        assert len(fake.requests) == 2  # no second call for "2026"
        worded = await engine.run_turn(session, "How many invoices are there?")
    finally:
        await model.aclose()
    assert "Not verified" not in json.dumps(dated.blocks)
    checked = fake.requests[4].body["messages"][-1]["content"]
    assert "About a third" in checked  # a share the model worked out is checked like a number
    assert "Some of them are overdue." in json.dumps(worded.blocks)


async def test_a_refused_report_is_answered_by_its_metric_and_says_so(
    runtime: Runtime, server: tuple[FakeOpenAIServer, str]
) -> None:
    """The sales user may be offered Sales Analytics, but the ERP refuses to run it for them:
    the same question is answered from the invoices they can read, and the result says the
    report was not available (with the ERP's own words)."""
    fake, url = server
    fake.enqueue(
        FakeReply.call(
            "report.sales_analytics", {"from_date": "2026-10-01", "to_date": "2026-12-31"}
        ),
        FakeReply.text(
            "The Sales Analytics report is not available to you; from your invoices: above."
        ),
    )
    session = await runtime.sign_in("sales@demo.local", "demo")
    session.allowed_tools = session.allowed_tools | {"report.sales_analytics"}
    model = _model(url)
    try:
        await runtime.engine(model, TODAY_SETTINGS).run_turn(
            session, "Sales Analytics by customer this quarter"
        )
    finally:
        await model.aclose()
    [result] = _tool_results(fake.requests[1].body)
    body = result["result"]
    assert "not available to you" in body["report_unavailable"]
    assert "You don't have access to Report: Sales Analytics" in body["report_unavailable"]
    assert body["metric"] == "revenue"
    assert body["columns"][0]["key"] == "customer"
    assert body["rows"]


async def test_a_report_needing_a_company_is_offered_with_the_users_own(
    runtime: Runtime, server: tuple[FakeOpenAIServer, str]
) -> None:
    fake, url = server
    fake.enqueue(
        FakeReply.call("report.accounts_receivable", {}),
        FakeReply.text("Receivables are above."),
    )
    session = await runtime.sign_in("kisumu.manager@demo.local", "demo")
    model = _model(url)
    try:
        await runtime.engine(model, TODAY_SETTINGS).run_turn(
            session, "Run the accounts receivable report"
        )
    finally:
        await model.aclose()
    sent = {
        t["function"]["name"]: t["function"]["parameters"] for t in _tools(fake.requests[0].body)
    }
    company = sent["report__accounts_receivable"]["properties"]["company"]
    assert company["enum"] == ["Savanna Trading Ltd"]
    assert company["default"] == "Savanna Trading Ltd"
    assert "company" not in sent["report__accounts_receivable"].get("required", [])
    [result] = _tool_results(fake.requests[1].body)
    assert result.get("status") != "invalid", result
    definition = result.get("result", result)["definition"]
    assert "Company: Savanna Trading Ltd" in json.dumps(definition)
