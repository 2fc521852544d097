"""The fake OpenAI server refuses what the real API refuses, in the real API's error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply

AUTH = {"authorization": "Bearer test-key"}
CALL = {"id": "call_1", "type": "function", "function": {"name": "a_b", "arguments": "{}"}}


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[FakeOpenAIServer, str]]:
    server = FakeOpenAIServer(api_key="test-key", context_limit=200)
    with server.running() as url:
        yield server, url


@pytest.fixture
def post(running: tuple[FakeOpenAIServer, str]) -> Iterator[Any]:
    server, url = running
    server.reset()
    server.enqueue(*[FakeReply.text("ok")] * 5)
    with httpx.Client(base_url=url) as client:

        def send(messages: list[dict[str, Any]], **body: Any) -> httpx.Response:
            headers = body.pop("headers", AUTH)
            payload = {"model": "m", "messages": messages, **body}
            return client.post("/chat/completions", json=payload, headers=headers)

        yield send


def assert_openai_error(response: httpx.Response, status: int, text: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert text in error["message"]
    return error


def test_a_valid_tool_exchange_passes(post: Any) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "[]"},
        {"role": "user", "content": "and?"},
    ]
    assert post(messages).status_code == 200


def test_tool_message_without_a_preceding_tool_call_is_rejected(post: Any) -> None:
    response = post([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x"}])
    error = assert_openai_error(response, 400, "must be a response to a preceeding message")
    assert error["param"] == "messages.[1].role"


def test_tool_result_for_an_older_turn_is_rejected(post: Any) -> None:
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "[]"},
        {"role": "user", "content": "again"},
        {"role": "tool", "tool_call_id": "call_1", "content": "[]"},
    ]
    assert_openai_error(post(messages), 400, "must be a response to a preceeding message")


def test_tool_calls_not_all_answered_are_rejected(post: Any) -> None:
    second = {**CALL, "id": "call_2"}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL, second]},
        {"role": "tool", "tool_call_id": "call_1", "content": "[]"},
        {"role": "user", "content": "next"},
    ]
    error = assert_openai_error(post(messages), 400, "did not have response messages: call_2")
    assert error["param"] == "messages.[1].role"
    # ... also when the unanswered call is the last message.
    assert_openai_error(post(messages[:2]), 400, "did not have response messages: call_1, call_2")


def test_unknown_role_is_rejected(post: Any) -> None:
    error = assert_openai_error(post([{"role": "robot", "content": "x"}]), 400, "'robot'")
    assert (error["code"], error["param"]) == ("invalid_value", "messages[0].role")


def test_tool_names_outside_the_wire_pattern_are_rejected(post: Any) -> None:
    tools = [{"type": "function", "function": {"name": "customer.list", "parameters": {}}}]
    response = post([{"role": "user", "content": "x"}], tools=tools)
    assert_openai_error(response, 400, "does not match pattern")


def test_wrong_key_is_401(post: Any) -> None:
    response = post([{"role": "user", "content": "x"}], headers={"authorization": "Bearer nope"})
    assert assert_openai_error(response, 401, "Incorrect API key")["code"] == "invalid_api_key"


def test_prompt_over_the_limit_is_context_length_exceeded(post: Any) -> None:
    response = post([{"role": "user", "content": "x" * 1000}])
    error = assert_openai_error(response, 400, "maximum context length is 200 tokens")
    assert error["code"] == "context_length_exceeded"


def test_rate_limit_and_server_errors_on_demand(
    running: tuple[FakeOpenAIServer, str], post: Any
) -> None:
    server = running[0]
    server.reset()
    server.enqueue(FakeReply.rate_limited(2.5), FakeReply.server_error(503))
    first = post([{"role": "user", "content": "x"}])
    assert first.status_code == 429
    assert first.headers["retry-after"] == "2.5"
    assert post([{"role": "user", "content": "x"}]).status_code == 503
    assert_openai_error(post([{"role": "user", "content": "x"}]), 400, "script is empty")


def test_stream_sends_tool_call_deltas_and_a_final_usage_chunk(
    running: tuple[FakeOpenAIServer, str], post: Any
) -> None:
    server = running[0]
    server.reset()
    server.enqueue(FakeReply.call("a_b", {"query": "north territory"}, id="call_9"))
    response = post(
        [{"role": "user", "content": "x"}], stream=True, stream_options={"include_usage": True}
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in response.text.splitlines() if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    calls = [c["choices"][0]["delta"].get("tool_calls") for c in chunks if c["choices"]]
    fragments = [c[0] for c in calls if c]
    assert fragments[0]["id"] == "call_9"
    assert fragments[0]["function"]["name"] == "a_b"
    assert "".join(f["function"]["arguments"] for f in fragments) == '{"query": "north territory"}'
    assert len(fragments) > 2  # the arguments really arrive in pieces
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] > 0
