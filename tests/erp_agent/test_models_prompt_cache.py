"""Prompt bytes a prefix cache can reuse, and requests that fit a small context window.

Real turns against the demo ERP with a scripted model: what the model is sent in a follow-up
starts with exactly what it was sent before; a first request fits an 8k window."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from erp_agent.config import Settings
from erp_agent.models._fit import fit, request_tokens
from erp_agent.models._schemas import compact
from erp_agent.models.base import Message, ModelProfile
from erp_agent.models.openai_compatible import wire_messages, wire_tools
from erp_agent.models.prefix import hermes_prompt, shared_prefix
from erp_agent.models.testing import Recording, ScriptedModel
from erp_agent.planner import OfflinePlanner
from erp_agent.retrieval.knowledge import packaged_root
from erp_agent.runtime import Runtime
from erp_agent.store.memory import MemoryStore

pytestmark = pytest.mark.anyio
S = ScriptedModel


async def _runtime(demo_erp: Any, tmp_path: Path) -> Runtime:
    return await Runtime.create(
        Settings(erp_url=demo_erp.url, data_dir=str(tmp_path)), store=MemoryStore()
    )


async def test_a_follow_up_keeps_the_prompt_prefix(demo_erp: Any, tmp_path: Path) -> None:
    runtime = await _runtime(demo_erp, tmp_path)
    try:
        session = await runtime.sign_in("accounts.manager@demo.local", "demo")
        model = ScriptedModel(
            S.call("metrics.query", {"metric": "invoice_count"}),
            S.reply("Counted."),
            S.reply("Same again."),
        )
        engine = runtime.engine(model)
        first = await engine.run_turn(session, "How many sales invoices are there?")
        await engine.run_turn(session, "and last year?", conversation_id=first.conversation_id)
    finally:
        await runtime.aclose()
    one, two, three = model.requests
    # Between rounds of one turn: the same system messages and tools.
    assert [m.content for m in one.messages[:2]] == [m.content for m in two.messages[:2]]
    assert two.tools == one.tools
    # A tool's rules travel in its own description, never in the system messages.
    assert "Tool rules" not in (two.messages[1].content or "")
    # The follow-up: the earlier tools first, byte for byte, then whatever it adds; the same
    # system messages, and the whole earlier request before its own messages.
    assert json.dumps(three.tools[: len(two.tools)]) == json.dumps(two.tools)
    assert [m.content for m in three.messages[:2]] == [m.content for m in two.messages[:2]]
    assert [m.content for m in three.messages[: len(two.messages)]] == [
        m.content for m in two.messages
    ]


OPEN_ANSWER = "\n<|im_start|>assistant\n"  # where a rendered request asks for the answer


async def _two_turns(
    runtime: Runtime, first: str, then: str
) -> tuple[tuple[list[Message], list[dict[str, Any]]], tuple[list[Message], list[dict[str, Any]]]]:
    """Turn one's last request and turn two's first, as the planner drives real turns."""
    session = await runtime.sign_in("accounts.manager@demo.local", "demo")
    model = Recording(OfflinePlanner(runtime.catalog, runtime.connector.name), routed=True)
    engine = runtime.engine(model)
    one = await engine.run_turn(session, first)
    asked = len(model.requests)
    await engine.run_turn(session, then, conversation_id=one.conversation_id)
    return model.requests[asked - 1], model.requests[asked]


def _names(tools: Sequence[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]


async def test_a_follow_up_sends_the_same_tools_array(demo_erp: Any, tmp_path: Path) -> None:
    """A follow-up that names nothing new: the tools array byte for byte as before (no
    fallback tool, nothing for "the last result" added), so the prefix cache holds through
    the whole first turn."""
    runtime = await _runtime(demo_erp, tmp_path)
    try:
        before, after = await _two_turns(
            runtime, "Monthly invoiced totals for this year", "and for last year?"
        )
    finally:
        await runtime.aclose()
    assert json.dumps(after[1]) == json.dumps(before[1])
    # The follow-up's request begins with the whole of the previous one (a prefix cache reads
    # only what the follow-up adds: the answer, its context, its question).
    earlier = hermes_prompt(*before).removesuffix(OPEN_ANSWER)
    assert hermes_prompt(*after).startswith(earlier)


async def test_a_follow_up_only_appends_tools(demo_erp: Any, tmp_path: Path) -> None:
    """A follow-up that asks what the linked records hold of their own appends that entity's
    reading tools at the end (not its counts and sums); the tools before them and the share of
    the prompt a prefix cache reuses hold. (The module sections come after the tools array, so
    a module the follow-up adds does not break it.)"""
    runtime = await _runtime(demo_erp, tmp_path)
    try:
        before, after = await _two_turns(
            runtime,
            "How many open purchase orders are there?",
            "what country is each of those suppliers in?",
        )
    finally:
        await runtime.aclose()
    old, new = before[1], after[1]
    assert json.dumps(new[: len(old)]) == json.dumps(old)
    added = _names(new[len(old) :])
    assert "supplier.list" in added
    assert not {"supplier.count", "supplier.aggregate"} & set(added)
    # The prompt is unchanged up to the end of the earlier tools: only what comes after them
    # is read again.
    earlier = hermes_prompt(before[0], old)
    tools_end = earlier.index("</tools>") - 1
    kept = shared_prefix(earlier, hermes_prompt(*after))
    assert kept >= tools_end
    # What the measure catches: the same tools with the new ones first share far less.
    reordered = (after[0], [*new[len(old) :], *old])
    assert shared_prefix(earlier, hermes_prompt(*reordered)) < earlier.index("<tools>") + 100


def _is_context(message: Message) -> bool:
    return message.role == "user" and (message.content or "").startswith("<erp_agent_context>")


async def _conversation_with_knowledge(
    demo_erp: Any, tmp_path: Path, *messages: str
) -> tuple[Recording, list[int]]:
    """One conversation of the planner with the starter knowledge indexed, every request
    recorded; the number of requests made before each follow-up."""
    runtime = await _runtime(demo_erp, tmp_path)
    before: list[int] = []
    try:
        await asyncio.to_thread(runtime.knowledge.index_path, packaged_root())
        session = await runtime.sign_in("accounts.manager@demo.local", "demo")
        model = Recording(OfflinePlanner(runtime.catalog, runtime.connector.name), routed=True)
        engine = runtime.engine(model)
        one = await engine.run_turn(session, messages[0])
        for message in messages[1:]:
            before.append(len(model.requests))
            await engine.run_turn(session, message, conversation_id=one.conversation_id)
    finally:
        await runtime.aclose()
    return model, before


async def test_a_follow_up_begins_with_the_first_turns_request_passages_included(
    demo_erp: Any, tmp_path: Path
) -> None:
    """With knowledge passages in the first turn's context, the second turn's request still
    begins with every request of the first turn, byte for byte as a server receives it (the
    first turn's context stays where it was sent), with the same tools; the second turn's
    context comes after, just before its question, and names the passages already given
    instead of sending them again."""
    model, [asked] = await _conversation_with_knowledge(
        demo_erp,
        tmp_path,
        "How does a quotation become a sales order?",
        "How does a quotation become a sales order, step by step?",
    )
    first_turn, (messages, tools) = model.requests[:asked], model.requests[asked]
    assert "Knowledge (cite" in (first_turn[0][0][2].content or "")  # passages were sent
    sent = wire_messages(messages)
    for earlier, earlier_tools in first_turn:
        before = wire_messages(earlier)
        assert json.dumps(sent[: len(before)]) == json.dumps(before)
        assert json.dumps(wire_tools(tools)) == json.dumps(wire_tools(earlier_tools))
    last = first_turn[-1][0]
    added = messages[len(last) :]
    assert [m.role for m in added] == ["assistant", "user", "user"]  # answer, context, question
    assert _is_context(added[1])
    assert added[2].content == "How does a quotation become a sales order, step by step?"
    assert "given earlier in this conversation" in (added[1].content or "")
    earlier = hermes_prompt(*first_turn[-1]).removesuffix(OPEN_ANSWER)
    assert hermes_prompt(messages, tools).startswith(earlier)


async def test_a_follow_up_that_adds_tools_leaves_earlier_context_out(
    demo_erp: Any, tmp_path: Path
) -> None:
    """A follow-up that appends tools breaks the prefix before the history anyway: earlier
    turns' context is left out of its request (and of the next turns'), only its own is sent."""
    model, (asked, second) = await _conversation_with_knowledge(
        demo_erp,
        tmp_path,
        "Show me the open sales orders",
        "what credit limit do those customers have?",
        "and the first one?",
    )
    before, after = model.requests[asked - 1], model.requests[asked]
    assert len(after[1]) > len(before[1])  # tools were added
    contexts = [i for i, m in enumerate(after[0]) if _is_context(m)]
    assert contexts == [len(after[0]) - 2]  # only this turn's, just before the question
    assert "given earlier in this conversation" not in (after[0][-2].content or "")
    first_context = model.requests[0][0][2]
    assert _is_context(first_context)
    assert first_context not in model.requests[second][0]  # nor in the next turn's


async def test_two_users_of_one_role_get_the_same_prefix(demo_erp: Any, tmp_path: Path) -> None:
    runtime = await _runtime(demo_erp, tmp_path)
    sent = []
    try:
        for user in ("kisumu.manager@demo.local", "mombasa.manager@demo.local"):
            session = await runtime.sign_in(user, "demo")
            model = ScriptedModel(S.reply("ok"))
            await runtime.engine(model).run_turn(session, "Revenue by month")
            sent.append(model.requests[0])
    finally:
        await runtime.aclose()
    assert json.dumps(sent[0].tools) == json.dumps(sent[1].tools)
    assert sent[0].messages[0].content == sent[1].messages[0].content


async def test_a_first_request_fits_an_8k_window(demo_erp: Any, tmp_path: Path) -> None:
    runtime = await _runtime(demo_erp, tmp_path)
    try:
        session = await runtime.sign_in("accounts.manager@demo.local", "demo")
        # A model that reads 8k tokens: its share of knowledge passages is smaller too.
        model = ScriptedModel(
            S.reply("ok"), profile=ModelProfile(name="small", context_window=8192)
        )
        await runtime.engine(model).run_turn(session, "What did we bill the Nakuru branch in Q2?")
    finally:
        await runtime.aclose()
    request = model.requests[0]
    # Compact schemas: every routed tool fits, in its order, with room for the answer.
    fitted = fit(request.tools, 8192)
    assert _names(fitted) == _names(request.tools)
    assert request_tokens(request.messages, fitted) <= 8192 - 1024
    assert fitted == [compact(t) for t in request.tools]
    # A large context gets the full schemas, unless the setting asks for compact ones.
    assert fit(request.tools, 128_000) == list(request.tools)
    assert fit(request.tools, 128_000, compact_tools=True) == fitted
    assert "metrics.query" in _names(fit(request.tools, 8192, compact_tools=False))


async def test_a_small_context_gets_a_smaller_share_of_knowledge(
    demo_erp: Any, tmp_path: Path
) -> None:
    runtime = await _runtime(demo_erp, tmp_path)
    sent = {}
    try:
        await asyncio.to_thread(runtime.knowledge.index_path, packaged_root())
        session = await runtime.sign_in("accounts.manager@demo.local", "demo")
        for window in (8192, 128_000):
            profile = ModelProfile(name="m", context_window=window)
            model = ScriptedModel(S.reply("ok"), profile=profile)
            await runtime.engine(model).run_turn(session, "How do I close an accounting period?")
            context = [m.content or "" for m in model.requests[0].messages if m.role == "user"]
            sent[window] = context[0]
    finally:
        await runtime.aclose()
    assert "Knowledge" in sent[128_000]  # passages were found for the question
    assert len(sent[8192]) < len(sent[128_000])
    assert len(sent[8192]) <= 8192 // 20 * 4 + 1000  # the passages' share, and the frame


def test_compact_schemas_keep_what_a_call_needs() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "item.list",
            "description": "List items. Use filters to narrow the list.",
            "parameters": {
                "type": "object",
                "description": "Arguments.",
                "properties": {
                    "description": {"type": "string", "description": "Text to match."},
                    "status": {"type": "string", "enum": ["Open", "Closed"], "title": "S"},
                    "items": {"type": "array", "items": {"type": "object", "description": "x"}},
                },
                "required": ["status"],
            },
        },
    }
    small = compact(tool)["function"]
    assert small["description"] == "List items."
    parameters = small["parameters"]
    assert set(parameters["properties"]) == {"description", "status", "items"}
    assert parameters["properties"]["description"] == {
        "type": "string",
        "description": "Text to match.",
    }
    assert parameters["properties"]["status"] == {"type": "string", "enum": ["Open", "Closed"]}
    assert parameters["properties"]["items"]["items"] == {"type": "object", "description": "x"}
    assert parameters["required"] == ["status"]
    assert parameters["description"] == "Arguments."
    assert "title" not in parameters["properties"]["status"]


def test_compact_schemas_keep_every_enum_a_call_needs() -> None:
    """A long list of names (metrics, fields) stays in the compact schema: a small model
    calls the tool right the first time instead of being answered with the list."""
    names = [f"metric_{i}" for i in range(40)]
    full = {
        "type": "function",
        "function": {
            "name": "figures.query",
            "description": "Query a figure.",
            "parameters": {
                "type": "object",
                "properties": {
                    "metric": {"type": "string", "enum": names, "description": "Which one."},
                    "fields": {"type": "array", "items": {"type": "string", "enum": names}},
                    "order": {"type": "string", "enum": ["asc", "desc"]},
                    "note": {"type": "string", "maxLength": 50},
                },
                "required": ["metric"],
            },
        },
    }
    small = compact(full)["function"]["parameters"]["properties"]
    assert small["metric"] == {"type": "string", "enum": names, "description": "Which one."}
    assert small["fields"]["items"]["enum"] == names
    assert small["note"] == {"type": "string"}
    schema = compact(full)["function"]["parameters"]
    call = {"metric": names[-1], "fields": names[:3], "order": "asc"}
    assert not list(jsonschema.Draft202012Validator(schema).iter_errors(call))
    assert list(jsonschema.Draft202012Validator(schema).iter_errors({"metric": "revenu"}))


async def test_a_recorded_conversation_only_appends_and_keeps_its_prefix(
    demo_erp: Any, tmp_path: Path
) -> None:
    """Over a conversation with follow-ups, as the planner drives it: every request's tools
    array begins with the previous request's byte for byte (never a tool dropped), and over
    each turn's later rounds at least 90% of a request is an unchanged prefix of the one
    before (what a prefix cache spares the server from reading again)."""
    messages = (
        "Revenue by customer this year",
        "and last year?",
        "top 3 instead",
        "show that as a chart",
        "How many open sales orders do we have?",
        "and last month?",
    )
    model, starts = await _conversation_with_knowledge(demo_erp, tmp_path, *messages)
    requests = model.requests
    for (_, before), (_, after) in pairwise(requests):
        assert json.dumps(after[: len(before)]) == json.dumps(before)
    firsts = {0, *starts}
    rendered = [hermes_prompt(*r) for r in requests]
    later = [i for i in range(1, len(requests)) if i not in firsts]
    assert later
    kept = sum(shared_prefix(rendered[i - 1], rendered[i]) for i in later)
    assert kept / sum(len(rendered[i]) for i in later) >= 0.9
