"""AnthropicModel: translation to the Messages API and back, replayed through a mock transport
with responses in the shape the real API returns. No network."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from pydantic import SecretStr

from erp_agent.config import ModelSettings
from erp_agent.errors import (
    ModelAuthError,
    ModelContextTooLong,
    ModelRateLimited,
    ModelUnavailable,
)
from erp_agent.models._anthropic_wire import to_anthropic
from erp_agent.models.anthropic import AnthropicModel
from erp_agent.models.base import Message, ToolCall

pytestmark = pytest.mark.anyio

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "sales_invoice.list",
            "description": "List sales invoices.",
            "parameters": {
                "type": "object",
                "properties": {"customer": {"type": "string"}, "filters": {"type": "object"}},
                "required": ["customer"],
            },
        },
    }
]

TOOL_USE = {
    "id": "msg_01A",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-model",
    "content": [
        {"type": "text", "text": "Let me look."},
        {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "sales_invoice__list",
            "input": {"customer": "Acme"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 120,
        "output_tokens": 40,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 2048,
    },
}

TEXT = {
    **TOOL_USE,
    "id": "msg_01B",
    "content": [{"type": "text", "text": "Acme has 2 open invoices."}],
    "stop_reason": "end_turn",
    "usage": {
        "input_tokens": 30,
        "output_tokens": 9,
        "cache_creation_input_tokens": 1500,
        "cache_read_input_tokens": 0,
    },
}


class Replay:
    """A mock transport answering with queued (status, JSON or SSE text, headers)."""

    def __init__(self, *answers: tuple[int, Any, dict[str, str]]) -> None:
        self.answers = list(answers)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[httpx2.Headers] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(json.loads(request.content))
        self.headers.append(request.headers)
        status, body, headers = self.answers.pop(0)
        if isinstance(body, str):
            return httpx2.Response(
                status, text=body, headers={"content-type": "text/event-stream", **headers}
            )
        return httpx2.Response(status, json=body, headers=headers)


def model_with(replay: Replay, **settings: Any) -> AnthropicModel:
    values = {"provider": "anthropic", "model": "claude-test-model", "api_key": SecretStr("k")}
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(replay))
    return AnthropicModel(ModelSettings.model_validate({**values, **settings}), http_client=client)


def ok(body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
    return 200, body, {}


def test_translation_system_apart_tool_results_grouped_and_roles_alternating() -> None:
    calls = (
        ToolCall("t1", "sales_invoice.list", '{"customer": "Acme"}'),
        ToolCall("t2", "a.b", "{"),
    )
    system, messages = to_anthropic(
        [
            Message("system", "You are the ERP assistant."),
            Message("system", "Company: Acme Ltd."),
            Message("user", "Open invoices?"),
            Message("assistant", None, calls),
            Message("tool", '[{"name": "SINV-1"}]', tool_call_id="t1"),
            Message("tool", "Invalid JSON in arguments", tool_call_id="t2"),
            Message("user", "And overdue?"),
        ]
    )
    assert system == [
        {"type": "text", "text": "You are the ERP assistant."},
        {
            "type": "text",
            "text": "Company: Acme Ltd.",
            "cache_control": {"type": "ephemeral"},
        },
    ]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {
            "type": "tool_use",
            "id": "t1",
            "name": "sales_invoice__list",
            "input": {"customer": "Acme"},
        },
        {"type": "tool_use", "id": "t2", "name": "a__b", "input": {"_unparsed_arguments": "{"}},
    ]
    # Both results in the one user message after the tool calls, before the user's next words.
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": '[{"name": "SINV-1"}]'},
        {"type": "tool_result", "tool_use_id": "t2", "content": "Invalid JSON in arguments"},
        {"type": "text", "text": "And overdue?"},
    ]


def test_cache_breakpoints_on_system_and_marked_messages_at_most_four() -> None:
    history = [Message("system", "rules")]
    for i in range(5):
        history += [Message("user", f"q{i}", cache_breakpoint=True), Message("assistant", f"a{i}")]
    system, messages = to_anthropic(history)
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    marked = [block["text"] for m in messages for block in m["content"] if "cache_control" in block]
    assert marked == ["q2", "q3", "q4"]  # the latest three, plus the system prefix: four
    no_system, messages = to_anthropic([Message("user", "only", cache_breakpoint=True)])
    assert no_system == []
    assert messages[0]["content"][0]["cache_control"] == {"type": "ephemeral"}


async def test_tool_call_round_trip_with_cached_usage() -> None:
    replay = Replay(ok(TOOL_USE), ok(TEXT))
    model = model_with(replay, max_output_tokens=1000)
    first = await model.complete(
        [Message("system", "ERP assistant."), Message("user", "Acme's invoices?")], TOOLS
    )
    assert first.content == "Let me look."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("toolu_01", "sales_invoice.list", {"customer": "Acme"})
    ]
    assert first.finish_reason == "tool_calls"
    assert (first.usage.prompt_tokens, first.usage.cached_tokens) == (2168, 2048)
    assert first.usage.completion_tokens == 40

    sent = replay.bodies[0]
    assert sent["system"] == [
        {"type": "text", "text": "ERP assistant.", "cache_control": {"type": "ephemeral"}}
    ]
    assert sent["max_tokens"] == 1000
    assert sent["tools"] == [
        {
            "name": "sales_invoice__list",
            "description": "List sales invoices.",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]

    history = [
        Message("system", "ERP assistant."),
        Message("user", "Acme's invoices?"),
        first.as_message(),
        Message("tool", '["SINV-1", "SINV-2"]', tool_call_id="toolu_01"),
    ]
    second = await model.complete(history, TOOLS, temperature=0.2, max_tokens=300)
    await model.aclose()
    assert second.content == "Acme has 2 open invoices."
    assert second.finish_reason == "stop"
    assert (second.usage.prompt_tokens, second.usage.cache_write_tokens) == (1530, 1500)
    sent = replay.bodies[1]
    assert sent["messages"][1]["content"][1]["name"] == "sales_invoice__list"
    assert sent["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": '["SINV-1", "SINV-2"]'}
        ],
    }
    assert sent["max_tokens"] == 300
    assert "temperature" not in sent  # the API has no sampling parameters any more
    assert model.profile.supports_temperature is False


async def test_strict_tool_schemas() -> None:
    replay = Replay(ok(TEXT))
    model = model_with(replay, strict_tools=True)
    await model.complete([Message("user", "x")], TOOLS)
    await model.aclose()
    tool = replay.bodies[0]["tools"][0]
    assert tool["strict"] is True
    assert tool["input_schema"]["additionalProperties"] is False
    assert tool["input_schema"]["properties"]["filters"]["additionalProperties"] is False


def sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


async def test_streaming_text_and_tool_input_deltas() -> None:
    message = {**TOOL_USE, "content": [], "stop_reason": None}
    message["usage"] = {**TOOL_USE["usage"], "output_tokens": 1}
    events = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "me look."}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_01", "name": "sales_invoice__list", "input": {}},
        },
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"custo'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 'mer": "Acme"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 42}},
        {"type": "message_stop"},
    ]  # fmt: skip
    replay = Replay((200, sse(events), {}))
    model = model_with(replay)
    deltas = [d async for d in model.stream([Message("user", "x")], TOOLS)]
    await model.aclose()
    assert [d.text for d in deltas[:-1]] == ["Let ", "me look."]
    done = deltas[-1].done
    assert done is not None
    assert done.content == "Let me look."
    assert [(c.name, json.loads(c.arguments)) for c in done.tool_calls] == [
        ("sales_invoice.list", {"customer": "Acme"})
    ]
    assert (done.usage.cached_tokens, done.usage.completion_tokens) == (2048, 42)
    assert done.finish_reason == "tool_calls"
    assert replay.bodies[0]["stream"] is True


def error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


@pytest.mark.parametrize(
    ("answer", "expected", "check"),
    [
        (
            (429, error("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), {"retry-after": "12"}),
            ModelRateLimited,
            lambda e: e.retry_after == 12,
        ),
        (
            (400, error("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), {}),
            ModelContextTooLong,
            lambda e: "210000" in e.detail,
        ),
        (
            (401, error("authentication_error", "invalid x-api-key"), {}),
            ModelAuthError,
            lambda e: e.status == 401,
        ),
        ((529, error("overloaded_error", "Overloaded"), {}), ModelUnavailable, lambda e: e.status == 529),
    ],
)  # fmt: skip
async def test_api_errors_map_to_the_model_error_family(
    answer: tuple[int, Any, dict[str, str]],
    expected: type[Exception],
    check: Callable[[Any], bool],
) -> None:
    model = model_with(Replay(answer))
    with pytest.raises(expected) as caught:
        await model.complete([Message("user", "x")])
    await model.aclose()
    assert check(caught.value)
