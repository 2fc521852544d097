"""Prompt bytes a prefix cache can reuse, and requests that fit a small context window.

Real turns against the demo ERP with a scripted model: what the model is sent in a follow-up
starts with exactly what it was sent before; a first request fits an 8k window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from erp_agent.config import Settings
from erp_agent.models._fit import FIRST_TO_LEAVE, fit, request_tokens
from erp_agent.models._schemas import compact
from erp_agent.models.testing import ScriptedModel
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
            S.call("sales_invoice.count", {}),
            S.reply("Counted."),
            S.reply("Same again."),
        )
        engine = runtime.engine(model)
        first = await engine.run_turn(session, "How many sales invoices are there?")
        await engine.run_turn(session, "and last year?", conversation_id=first.conversation_id)
    finally:
        await runtime.aclose()
    one, two, three = model.requests
    # Between rounds of one turn: the same system messages (tool rules included) and tools.
    assert [m.content for m in one.messages[:2]] == [m.content for m in two.messages[:2]]
    assert "Tool rules:" in (two.messages[1].content or "")
    assert two.tools == one.tools
    # The follow-up: the earlier tools first, byte for byte, then whatever it adds.
    assert json.dumps(three.tools[: len(two.tools)]) == json.dumps(two.tools)
    assert three.messages[0].content == two.messages[0].content
    rules = (two.messages[1].content or "").split("\n\nSession:")[0]
    assert (three.messages[1].content or "").startswith(rules)  # new tools' rules come after


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
        model = ScriptedModel(S.reply("ok"))
        await runtime.engine(model).run_turn(session, "What did we bill the Nakuru branch in Q2?")
    finally:
        await runtime.aclose()
    request = model.requests[0]
    assert request_tokens(request.messages, request.tools) > 8192  # too big as it is
    fitted = fit(request.messages, request.tools, 8192)
    assert request_tokens(request.messages, fitted) <= 8192 - 1024
    assert len(fitted) >= len(request.tools) - 6
    kept = [t["function"]["name"] for t in fitted]
    offered = [t["function"]["name"] for t in request.tools]
    left = [name for name in offered if name not in kept]
    leaving = [name for name in FIRST_TO_LEAVE if name in offered]
    if len(left) <= len(leaving):
        assert set(left) == set(leaving[: len(left)])
    else:
        assert set(leaving) <= set(left)
        assert offered[-1] in left
    assert "metrics.query" in kept  # the request's own tools stay
    assert fit(request.messages, request.tools, 128_000) == list(request.tools)


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
    assert parameters["properties"]["description"] == {"type": "string"}
    assert parameters["properties"]["status"] == {"type": "string", "enum": ["Open", "Closed"]}
    assert parameters["properties"]["items"]["items"] == {"type": "object"}
    assert parameters["required"] == ["status"]
    assert "description" not in parameters
    assert tool["function"]["parameters"]["description"] == "Arguments."  # a copy was changed
