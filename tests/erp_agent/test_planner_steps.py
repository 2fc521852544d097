"""Multi-step plans read from the conversation alone: call → result → display → answer, with
tools the planner only knows by their schemas (search modules written elsewhere)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from erp_agent.models.base import Completion, Message, ToolCall
from erp_agent.planner import OfflinePlanner

pytestmark = pytest.mark.anyio
SYSTEM = Message(
    "system", "Session:\n- Today: 2026-11-30\n- User: u@x\n- Company: Savanna Trading Ltd"
)
PLANNER = OfflinePlanner()


def tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    params = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": "", "parameters": params}}


SEARCH = {"query": {"type": "string"}, "limit": {"type": "integer"}}
TOOLS = [
    tool("knowledge.search", SEARCH, ["query"]),
    tool("records.search", {**SEARCH, "entity": {"type": "string"}}, ["query"]),
    tool("display.table", {"result_id": {"type": "string"}}, ["result_id"]),
]


async def step(messages: list[Message]) -> Completion:
    return await PLANNER.complete([SYSTEM, *messages], TOOLS)


def answered(call: ToolCall, content: dict[str, Any]) -> list[Message]:
    return [
        Message("assistant", None, (call,)),
        Message("tool", json.dumps(content), tool_call_id=call.id, name=call.name),
    ]


async def test_knowledge_answer_cites_the_passage_titles() -> None:
    question = [Message("user", "How does a quotation turn into a sales order?")]
    first = await step(question)
    assert [c.name for c in first.tool_calls] == ["knowledge.search"]
    passages = {
        "passages": [
            {
                "title": "Selling: from quote to order",
                "text": "Open the quotation and choose Create > Sales Order.",
            }
        ]
    }
    final = await step(
        [
            *question,
            *answered(
                first.tool_calls[0], {"status": "ok", "result_id": "res_1", "result": passages}
            ),
        ]
    )
    assert final.content is not None
    assert "Selling: from quote to order" in final.content
    assert "Create > Sales Order" in final.content


async def test_an_unknown_id_is_searched_and_found_only_exactly() -> None:
    question = [Message("user", "INV-2026-00873")]
    first = await step(question)
    assert [c.name for c in first.tool_calls] == ["records.search"]
    assert json.loads(first.tool_calls[0].arguments)["query"] == "INV-2026-00873"
    hits = {
        "hits": [
            {"id": "INV-2026-00873", "text": "Sales Invoice INV-2026-00873 to Gulf Traders"},
            {"id": "INV-2026-00874"},
        ]
    }
    found = await step(
        [
            *question,
            *answered(first.tool_calls[0], {"status": "ok", "result_id": "res_2", "result": hits}),
        ]
    )
    assert found.content is not None
    assert "INV-2026-00873" in found.content
    assert "INV-2026-00874" not in found.content
    near = {"hits": [{"id": "INV-2026-00874"}]}
    missed = await step(
        [
            *question,
            *answered(first.tool_calls[0], {"status": "ok", "result_id": "res_3", "result": near}),
        ]
    )
    assert missed.content is not None
    assert missed.content.startswith("No records found")


async def test_never_calls_a_tool_that_was_not_offered() -> None:
    completion = await PLANNER.complete(
        [SYSTEM, Message("user", "How many open sales orders do we have?")], TOOLS
    )
    assert completion.tool_calls == []
    assert completion.content is not None
    assert "can't" in completion.content


async def test_an_erp_refusal_is_passed_on_verbatim() -> None:
    tools = [tool("sales_invoice.get", {"id": {"type": "string"}}, ["id"])]
    question = [Message("user", "status of ACC-SINV-2026-00001?")]
    first = await PLANNER.complete([SYSTEM, *question], tools)
    refusal = {
        "status": "erp_refused",
        "message": "The ERP refused",
        "erp_refusal": {"message": "Not permitted: Branch Kisumu"},
    }
    final = await PLANNER.complete(
        [SYSTEM, *question, *answered(first.tool_calls[0], refusal)], tools
    )
    assert final.content is not None
    assert "Not permitted: Branch Kisumu" in final.content
