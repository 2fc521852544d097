"""ScriptedModel conversations through the whole engine against the demo ERP over real HTTP."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from decimal import Decimal

import pytest

from conftest import DemoERP
from erp_agent.config import EngineSettings, Settings
from erp_agent.engine import history
from erp_agent.engine.prompt import is_context
from erp_agent.engine.routing import DEFAULT_CAP
from erp_agent.errors import ModelAuthError, ModelContextTooLong, ModelRateLimited
from erp_agent.events import Event, EventBus, TextDelta
from erp_agent.models.base import Message
from erp_agent.models.testing import ScriptedModel
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
S = ScriptedModel


@pytest.fixture
async def runtime(demo_erp: DemoERP) -> AsyncIterator[Runtime]:
    rt = await Runtime.create(Settings(erp_url=demo_erp.url), store=MemoryStore())
    yield rt
    await rt.aclose()


def raw_sum(demo: DemoERP, sql: str) -> Decimal:
    conn = sqlite3.connect(demo.path)
    try:
        return Decimal(str(conn.execute(sql).fetchone()[0] or 0)).quantize(Decimal("0.01"))
    finally:
        conn.close()


def tool_payload(
    messages: list[Message] | tuple[Message, ...], index: int = -1
) -> dict[str, object]:
    tools = [m for m in messages if m.role == "tool"]
    return json.loads(tools[index].content or "{}")  # type: ignore[no-any-return]


async def test_question_streams_progress_and_answers_with_a_chart(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    total = raw_sum(
        demo_erp,
        "select sum(base_grand_total) from `tabSales Invoice` where docstatus = 1 and company = 'Savanna Trading Ltd'",
    )

    def answer(messages: object) -> object:
        payload = tool_payload(messages, -2)  # the figure, before the chart's answer
        value = payload["result"]["rows"][0]["billed"]  # type: ignore[index]
        return S.reply(f"Savanna Trading Ltd billed KES {value:,.2f} in total.")

    model = ScriptedModel(
        S.call("metrics.query", {
            "metric": "billed", "group_by": ["company"],
            "filters": [{"dimension": "company", "value": "Savanna Trading Ltd"}]}),
        lambda messages: S.call("display.chart", {"result_id": S.last_result_id(messages), "type": "bar", "label": "company", "values": ["billed"]}),
        answer,  # type: ignore[arg-type]
    )  # fmt: skip
    events: list[Event] = []
    bus = EventBus()
    bus.subscribe(events.append)
    response = await runtime.engine(model).run_turn(
        session, "What did Savanna Trading Ltd bill in total? Show a chart.", bus=bus
    )
    assert response.outcome == "answered"
    text = response.blocks[0]
    assert text["type"] == "text"
    assert f"{total:,.2f}" in text["markdown"]
    chart = next(b for b in response.blocks if b["type"] == "chart")
    assert chart["spec"]["type"] == "bar"
    assert (
        Decimal(str(chart["spec"]["data"]["datasets"][0]["data"][0])).quantize(Decimal("0.01"))
        == total
    )
    assert [c["name"] for c in response.tools_called] == ["metrics.query", "display.chart"]
    kinds = [e.kind for e in events]
    assert kinds[0] == "Thinking"
    assert "Calculating" in kinds or "RunningTool" in kinds
    assert kinds[-1] == "TurnFinished"
    # The model was offered only routed tools, not all of them.
    assert 0 < len(model.requests[0].tools) <= DEFAULT_CAP


async def test_document_ids_become_links_and_progress_names_the_document(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    conn = sqlite3.connect(demo_erp.path)
    name, status = conn.execute(
        "select name, status from `tabSales Invoice` where docstatus = 1 limit 1"
    ).fetchone()
    conn.close()
    model = ScriptedModel(
        S.call("sales_invoice.get", {"id": name}), S.reply(f"{name} is {status}.")
    )
    events: list[Event] = []
    bus = EventBus()
    bus.subscribe(events.append)
    response = await runtime.engine(model).run_turn(session, f"Is {name} paid?", bus=bus)
    assert f"[{name}]({demo_erp.url}/app/sales-invoice/{name})" in response.blocks[0]["markdown"]
    assert any(e.label == f"Fetching Sales Invoice {name}…" for e in events)


async def test_write_becomes_a_proposal_block_and_nothing_is_written(runtime: Runtime) -> None:
    session = await runtime.sign_in("sales@demo.local", "demo")
    model = ScriptedModel(
        S.call("lead.create", {"name": "Proposal Prospect"}),
        S.reply("I prepared the lead; please confirm it."),
    )
    response = await runtime.engine(model).run_turn(
        session, "Create a lead called Proposal Prospect"
    )
    proposal = next(b for b in response.blocks if b["type"] == "proposal")
    assert proposal["payload"] == {"name": "Proposal Prospect"}
    assert response.outcome == "proposal"
    page = await runtime.connector.list(session.credential, "lead", filters=[], limit=0)
    assert "Proposal Prospect" not in {r.get("name") for r in page.records}
    done = await runtime.gateway.confirm(session, proposal["id"], proposal["payload_hash"])
    assert done.ok


async def test_guards_in_the_loop(runtime: Runtime) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    model = ScriptedModel(
        S.call("salary_slip.list", {}),  # not offered for an invoice question
        S.call("metrics.query", {"metric": "invoice_count"}),
        S.call("metrics.query", {"metric": "invoice_count"}),  # identical repeat
        S.reply("There are invoices."),
    )
    response = await runtime.engine(model).run_turn(session, "how many sales invoices do we have?")
    contents = [
        json.loads(m.content or "{}") for m in model.requests[-1].messages if m.role == "tool"
    ]
    assert contents[0]["status"] == "refused"
    assert "tools.search" in contents[0]["message"]
    assert contents[1]["status"] == "ok"
    assert "already called" in contents[2]["message"]
    assert response.outcome == "answered"


async def test_three_failures_in_a_row_stop_the_turn(runtime: Runtime) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    bad = S.call("sales_invoice.get", "{not json")
    model = ScriptedModel(bad, bad, bad, S.reply("never reached"))
    response = await runtime.engine(model).run_turn(session, "show invoice")
    assert response.outcome == "stopped"
    assert "3 failed tool calls in a row" in response.blocks[0]["markdown"]


async def test_invented_number_is_questioned_then_flagged(runtime: Runtime) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    model = ScriptedModel(
        S.call("metrics.query", {"metric": "invoice_count"}),
        S.reply("We have 123,456 invoices worth KES 9,876,543.21."),
        S.reply("We have 123,456 invoices worth KES 9,876,543.21."),
    )
    response = await runtime.engine(model).run_turn(session, "how many sales invoices?")
    retry_prompt = model.requests[2].messages[-1]
    assert retry_prompt.role == "user"
    assert "do not appear in any tool result" in (retry_prompt.content or "")
    assert (
        "⚠ Not verified against ERP data: 123,456, 9,876,543.21" in response.blocks[0]["markdown"]
    )


async def test_corrected_answer_passes_provenance(runtime: Runtime, demo_erp: DemoERP) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    conn = sqlite3.connect(demo_erp.path)
    # The invoice_count metric counts submitted invoices, credit notes not counted.
    count = conn.execute(
        "select count(*) from `tabSales Invoice` where docstatus = 1 and is_return = 0"
    ).fetchone()[0]
    conn.close()
    model = ScriptedModel(
        S.call("metrics.query", {"metric": "invoice_count"}),
        S.reply("There are 99,999 invoices."),
        S.reply(f"There are {count:,} invoices."),
    )
    response = await runtime.engine(model).run_turn(session, "how many sales invoices?")
    assert response.blocks[0]["markdown"] == f"There are {count:,} invoices."


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ModelAuthError("bad key"), "An administrator must update the model settings"),
        (ModelRateLimited("busy"), "try again shortly"),
    ],
)
async def test_model_errors_become_clear_messages(
    runtime: Runtime, error: Exception, expected: str
) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    response = await runtime.engine(ScriptedModel(error)).run_turn(session, "revenue?")
    assert response.outcome == "error"
    assert expected in response.blocks[0]["markdown"]


async def test_context_too_long_trims_harder_then_retries_once(runtime: Runtime) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    engine = runtime.engine(ScriptedModel(S.reply("First answer.")))
    first = await engine.run_turn(session, "hello " * 50)
    model = ScriptedModel(ModelContextTooLong("too long"), S.reply("Short answer."))
    second = await runtime.engine(model).run_turn(
        session, "and now?", conversation_id=first.conversation_id
    )
    assert second.blocks[0]["markdown"] == "Short answer."
    assert len(model.requests[1].messages) <= len(model.requests[0].messages)
    still = ScriptedModel(ModelContextTooLong("too long"), ModelContextTooLong("too long"))
    third = await runtime.engine(still).run_turn(
        session, "again", conversation_id=first.conversation_id
    )
    assert "Start a new conversation" in third.blocks[0]["markdown"]


async def test_history_carries_over_and_turn_state_is_saved_each_step(runtime: Runtime) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    first = await runtime.engine(
        ScriptedModel(S.call("metrics.query", {"metric": "invoice_count"}), S.reply("Counted."))
    ).run_turn(session, "count invoices")
    model = ScriptedModel(S.reply("Same as before."))
    await runtime.engine(model).run_turn(
        session, "and again?", conversation_id=first.conversation_id
    )
    sent = [m for m in model.requests[0].messages if m.role != "system"]
    # The context tier (what earlier turns were about) is a delimited user message just
    # before the request; the history itself is unchanged.
    assert (sent[-2].content or "").startswith("<erp_agent_context>")
    roles = [m.role for m in sent[:-2] + sent[-1:] if not is_context(m)]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    turns = await runtime.store.turns(first.conversation_id)
    assert [t.status for t in turns] == ["done", "done"]
    log = turns[0].state["log"]
    assert log["tools_called"] == ["metrics.query"]
    assert log["outcome"] == "answered"
    assert log["prompt_hash"]


async def test_another_process_continues_a_crashed_turn(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    crashing = ScriptedModel(
        S.call("metrics.query", {"metric": "invoice_count"}), KeyboardInterrupt()
    )
    with pytest.raises(KeyboardInterrupt):
        await runtime.engine(crashing).run_turn(session, "count invoices")
    (turn,) = [t for t in runtime.store._turns.values() if t.status == "running"]  # type: ignore[attr-defined]
    stored = history.from_state(turn.state["messages"])
    assert [m.role for m in stored if not is_context(m)] == ["user", "assistant", "tool"]
    other = await Runtime.create(Settings(erp_url=demo_erp.url), store=runtime.store)
    model = ScriptedModel(S.reply("Counted after the restart."))
    response = await other.engine(model).continue_turn(session, turn.id)
    assert response.blocks[0]["markdown"] == "Counted after the restart."
    assert [
        m.role for m in model.requests[0].messages if m.role != "system" and not is_context(m)
    ] == ["user", "assistant", "tool"]
    await other.aclose()


async def test_max_rounds_and_tools_search(runtime: Runtime) -> None:
    session = await runtime.sign_in("hr@demo.local", "demo")
    model = ScriptedModel(
        S.call("tools.search", {"query": "expense claims"}),
        S.call("expense_claim.count", {}),
        S.reply("Done."),
    )
    response = await runtime.engine(model, EngineSettings(max_rounds=5)).run_turn(
        session, "hello there"
    )
    assert "expense_claim.count" not in model.requests[0].tool_names
    assert (
        "expense_claim__count" in model.requests[1].tool_names
        or "expense_claim.count" in model.requests[1].tool_names
    )
    assert response.outcome == "answered"
    looping = ScriptedModel(*[S.call("tools.search", {"query": f"thing {i}"}) for i in range(3)])
    stopped = await runtime.engine(looping, EngineSettings(max_rounds=3)).run_turn(session, "hello")
    assert stopped.outcome == "stopped"


async def test_conversation_state_tier_carries_documents_forward(
    runtime: Runtime, demo_erp: DemoERP
) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    conn = sqlite3.connect(demo_erp.path)
    (name,) = conn.execute(
        "select name from `tabSales Invoice` where docstatus = 1 limit 1"
    ).fetchone()
    conn.close()
    first = await runtime.engine(ScriptedModel(S.reply("Noted."))).run_turn(
        session, f"Look at {name}"
    )
    model = ScriptedModel(S.reply("It is the one above."))
    await runtime.engine(model).run_turn(
        session, "is it paid?", conversation_id=first.conversation_id
    )
    # This turn's context is just before the request.
    context = model.requests[0].messages[-2].content or ""
    assert context.startswith("<erp_agent_context>")
    assert f"Discussed earlier in this conversation: {name} (sales_invoice)" in context
    assert "Earlier topics: sales_invoice" in context


async def test_the_answer_streams_as_text_deltas_before_the_turn_finishes(
    runtime: Runtime,
) -> None:
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    answer = "There are no figures in this answer, only words that arrive one by one."
    events: list[Event] = []
    bus = EventBus()
    bus.subscribe(events.append)
    response = await runtime.engine(ScriptedModel(S.reply(answer))).run_turn(
        session, "hello", bus=bus
    )
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 5  # word by word, not one block at the end
    assert "".join(d.text for d in deltas).strip() == answer
    finished = next(i for i, e in enumerate(events) if e.kind == "TurnFinished")
    assert all(events.index(d) < finished for d in deltas)
    assert response.blocks[0]["markdown"] == answer
