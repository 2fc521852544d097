"""The shipped test doubles, and the guard that keeps tests away from real providers."""

from __future__ import annotations

import json

import httpx
import pytest
from pydantic import SecretStr

from erp_agent.config import ModelSettings
from erp_agent.errors import ModelRateLimited, ModelRequestBlocked
from erp_agent.models.anthropic import AnthropicModel
from erp_agent.models.base import Message, Usage
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply
from erp_agent.models.openai_compatible import OpenAICompatibleModel
from erp_agent.models.resilience import ResilientModel
from erp_agent.models.testing import FakeClock, ScriptedModel, block_real_providers

pytestmark = pytest.mark.anyio
TOOL = {"type": "function", "function": {"name": "customer.list", "parameters": {}}}


async def test_scripted_model_replies_in_order_and_records_what_it_was_sent() -> None:
    model = ScriptedModel(
        ScriptedModel.call("customer.list", {"limit": 5}, id="call_1"),
        ScriptedModel.reply("You have 5 customers.", usage=Usage(prompt_tokens=10)),
    )
    first = await model.complete([Message("user", "How many?")], [TOOL], temperature=0)
    assert first.tool_calls[0].name == "customer.list"
    assert json.loads(first.tool_calls[0].arguments) == {"limit": 5}
    history = [
        Message("user", "How many?"),
        first.as_message(),
        Message("tool", "[...]", tool_call_id="call_1"),
    ]
    second = await model.complete(history, [TOOL])
    assert second.content == "You have 5 customers."
    assert second.usage.prompt_tokens == 10
    assert model.requests[0].tool_names == ["customer.list"]
    assert model.requests[0].temperature == 0
    assert model.requests[1].last.tool_call_id == "call_1"
    assert model.remaining == 0


async def test_scripted_model_raises_scripted_errors_and_fails_loudly_when_empty() -> None:
    model = ScriptedModel(ModelRateLimited(retry_after=1)).then(ScriptedModel.reply("ok"))
    with pytest.raises(ModelRateLimited):
        await model.complete([Message("user", "a")])
    assert (await model.complete([Message("user", "b")])).content == "ok"
    with pytest.raises(AssertionError, match="no step left for call 3"):
        await model.complete([Message("user", "c")])


async def test_scripted_model_parallel_calls_malformed_arguments_and_streaming() -> None:
    model = ScriptedModel(
        ScriptedModel.calls(("a.x", {"n": 1}), ("b.y", {"n": 2}), id="c"),
        ScriptedModel.call("a.x", '{"n": '),
        ScriptedModel.reply("three little words"),
    )
    parallel = await model.complete([Message("user", "go")])
    assert [(c.id, c.name) for c in parallel.tool_calls] == [("c_0", "a.x"), ("c_1", "b.y")]
    assert (await model.complete([Message("user", "go")])).tool_calls[0].arguments == '{"n": '
    deltas = [d async for d in model.stream([Message("user", "go")])]
    assert [d.text for d in deltas[:-1]] == ["three ", "little ", "words "]
    assert deltas[-1].done is not None


async def test_scripted_model_drives_retries_through_the_resilient_wrapper() -> None:
    clock = FakeClock()
    inner = ScriptedModel(ModelRateLimited(retry_after=4), ScriptedModel.reply("ok"))
    model = ResilientModel(inner, clock=clock, rand=lambda: 0.0)
    assert (await model.complete([Message("user", "x")])).content == "ok"
    assert clock.sleeps == [4.0]


async def test_a_request_to_a_real_provider_fails_under_the_guard() -> None:
    openai_model = OpenAICompatibleModel(
        ModelSettings(model="gpt-4.1", api_key=SecretStr("sk-test"))  # default: api.openai.com
    )
    claude = AnthropicModel(
        ModelSettings(provider="anthropic", model="claude-x", api_key=SecretStr("sk-test"))
    )
    with block_real_providers() as blocked:
        with pytest.raises(ModelRequestBlocked, match=r"https://api\.openai\.com"):
            await openai_model.complete([Message("user", "hi")])
        with pytest.raises(ModelRequestBlocked, match=r"api\.anthropic\.com"):
            await claude.complete([Message("user", "hi")])
        async with httpx.AsyncClient() as client:
            with pytest.raises(ModelRequestBlocked, match="not a loopback address"):
                await client.get("https://openrouter.ai/api/v1/models")
        with httpx.Client() as client, pytest.raises(ModelRequestBlocked):
            client.get("https://api.deepseek.com/v1/models")
    assert len(blocked.urls) == 4
    assert blocked.urls[0] == "https://api.openai.com/v1/chat/completions"
    await openai_model.aclose()
    await claude.aclose()


async def test_the_guard_lets_loopback_through_and_is_undone_on_exit() -> None:
    # The suite-wide autouse guard is already active: exiting this one restores *that*.
    before = httpx.AsyncHTTPTransport.handle_async_request
    server = FakeOpenAIServer()
    server.enqueue(FakeReply.text("local"))
    with server.running() as url, block_real_providers() as blocked:
        model = OpenAICompatibleModel(
            ModelSettings(model="m", base_url=url, api_key=SecretStr("test-key"))
        )
        assert (await model.complete([Message("user", "hi")])).content == "local"
        await model.aclose()
    assert blocked.urls == []
    assert httpx.AsyncHTTPTransport.handle_async_request is before
