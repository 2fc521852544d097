"""Self-hosted servers' quirks, each imitated by a mode of the fake OpenAI server, over real HTTP:
the model adapter turns them into what the engine expects, or into one clear error."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from erp_agent.config import ModelSettings
from erp_agent.errors import ModelOutputInvalid, ModelUnavailable
from erp_agent.models.base import Message, StreamDelta, ToolCall
from erp_agent.models.fake_server import QUIRKS, FakeOpenAIServer, FakeReply
from erp_agent.models.openai_compatible import OpenAICompatibleModel
from erp_agent.models.replies import MAX_REPLY_CHARS

pytestmark = pytest.mark.anyio

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "customer.list",
            "description": "List customers.",
            "parameters": {"type": "object", "properties": {"limit": {"type": "integer"}}},
        },
    }
]
ASK = [Message("system", "You help."), Message("user", "Five customers, please.")]
Serve = Callable[..., tuple[FakeOpenAIServer, OpenAICompatibleModel]]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start a fake server with the given quirks; a model pointed at it."""
    with ExitStack() as stack:

        def start(
            *quirks: str, **settings: object
        ) -> tuple[FakeOpenAIServer, OpenAICompatibleModel]:
            server = FakeOpenAIServer(api_key="k", quirks=set(quirks))
            url = stack.enter_context(server.running())
            table = {"model": "openai-compatible:local", "base_url": url, "api_key": "k"}
            return server, OpenAICompatibleModel(ModelSettings.model_validate(table | settings))

        yield start


def test_every_quirk_is_named_and_an_unknown_one_refused() -> None:
    assert {"text_calls_tagged", "text_calls_fenced", "no_tool_role", "no_usage"} <= set(QUIRKS)
    with pytest.raises(ValueError, match="unknown quirks"):
        FakeOpenAIServer(quirks={"no_such_quirk"})


@pytest.mark.parametrize("style", ["text_calls_tagged", "text_calls_fenced"])
@pytest.mark.parametrize("name", ["customer.list", "customer__list"])
async def test_a_tool_call_written_as_text_becomes_a_real_call(
    serve: Serve, style: str, name: str
) -> None:
    fake, model = serve(style)
    fake.enqueue(FakeReply.call(name, {"limit": 5}))
    completion = await model.complete(ASK, TOOLS)
    assert fake.requests[0].body["messages"][-1]["content"] == "Five customers, please."
    assert [(c.name, json.loads(c.arguments)) for c in completion.tool_calls] == [
        ("customer.list", {"limit": 5})
    ]
    assert not completion.content  # the raw JSON is not left as an answer
    assert completion.finish_reason == "tool_calls"
    await model.aclose()


async def test_an_unreadable_text_call_is_asked_again_once(serve: Serve) -> None:
    fake, model = serve()
    broken = '<tool_call>{"name": "customer.list", "arguments": {"limit": 5}</tool_call>'
    fake.enqueue(FakeReply.text(broken), FakeReply.call("customer__list", {"limit": 5}))
    completion = await model.complete(ASK, TOOLS)
    assert [c.name for c in completion.tool_calls] == ["customer.list"]
    second = fake.requests[1].body["messages"]
    assert second[-2] == {"role": "assistant", "content": broken}
    assert "could not be read" in second[-1]["content"]
    assert "not valid" in second[-1]["content"]  # says what was wrong
    assert completion.usage.prompt_tokens > 0  # both requests' usage is counted

    fake.reset()
    fake.enqueue(FakeReply.text(broken), FakeReply.text(broken))
    with pytest.raises(ModelOutputInvalid) as raised:
        await model.complete(ASK, TOOLS)
    assert "could not be read" in str(raised.value)
    assert "{" not in str(raised.value)  # no raw model JSON in the user's message
    assert len(fake.requests) == 2  # asked once, not in a loop
    await model.aclose()


async def test_an_empty_answer_is_asked_again_then_a_clear_error(serve: Serve) -> None:
    fake, model = serve()
    fake.enqueue(FakeReply.text(""), FakeReply.text("There are 12 customers."))
    completion = await model.complete(ASK, TOOLS)
    assert completion.content == "There are 12 customers."
    assert "empty" in fake.requests[1].body["messages"][-1]["content"]
    fake.reset()
    fake.enqueue(FakeReply.text(""), FakeReply.text("  "))
    with pytest.raises(ModelOutputInvalid, match="empty answer"):
        await model.complete(ASK, TOOLS)
    await model.aclose()


async def test_a_two_megabyte_reply_is_refused_not_shown(serve: Serve) -> None:
    fake, model = serve()
    fake.enqueue(FakeReply.text('{"rows": [' + "1," * 1_000_000 + "1]}"))
    with pytest.raises(ModelOutputInvalid) as raised:
        await model.complete(ASK, TOOLS)
    message = str(raised.value)
    assert f"{MAX_REPLY_CHARS:,}" in message
    assert "narrower question" in message
    assert len(message) < 400
    await model.aclose()


async def test_a_server_without_the_tool_role_gets_delimited_results(serve: Serve) -> None:
    fake, model = serve("no_tool_role")
    call = ToolCall("call_1", "customer.list", '{"limit": 2}')
    conversation = [
        *ASK,
        Message("assistant", None, (call,)),
        Message("tool", '{"status": "ok", "rows": 2}', tool_call_id="call_1", name="customer.list"),
    ]
    fake.enqueue(FakeReply.text("Two customers."), FakeReply.text("Still two."))
    completion = await model.complete(conversation, TOOLS)
    assert completion.content == "Two customers."
    refused, accepted = fake.requests[0].body, fake.requests[1].body
    assert any(m["role"] == "tool" for m in refused["messages"])
    roles = [m["role"] for m in accepted["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert (
        '<tool_call>{"name": "customer__list", "arguments": {"limit": 2}}</tool_call>'
        in (accepted["messages"][2]["content"])
    )
    result = accepted["messages"][3]["content"]
    assert result.startswith('<tool_result name="customer.list" id="call_1">')
    assert '{"status": "ok", "rows": 2}' in result
    # Learned once: the next call goes in the accepted form straight away.
    await model.complete(conversation, TOOLS)
    assert len(fake.requests) == 3
    await model.aclose()


async def test_tool_role_off_in_the_settings_never_sends_it(serve: Serve) -> None:
    fake, model = serve("no_tool_role", tool_role=False)
    call = ToolCall("call_1", "customer.list", "{}")
    fake.enqueue(FakeReply.text("Done."))
    conversation = [
        *ASK,
        Message("assistant", None, (call,)),
        Message("tool", "{}", tool_call_id="call_1"),
    ]
    await model.complete(conversation, TOOLS)
    assert len(fake.requests) == 1
    await model.aclose()


async def _streamed(model: OpenAICompatibleModel) -> tuple[str, StreamDelta]:
    text, done = "", None
    async for delta in model.stream(ASK, TOOLS):
        text += delta.text
        done = delta if delta.done is not None else done
    assert done is not None
    assert done.done is not None
    return text, done


async def test_streamed_tool_calls_written_as_text_are_not_shown(serve: Serve) -> None:
    fake, model = serve("no_streamed_tool_calls")
    fake.enqueue(
        FakeReply(
            content="Let me look that up.",
            tool_calls=FakeReply.call("customer.list", {"limit": 3}).tool_calls,
        )
    )
    shown, done = await _streamed(model)
    assert done.done is not None
    assert [c.name for c in done.done.tool_calls] == ["customer.list"]
    assert shown.strip() == "Let me look that up."
    await model.aclose()


async def test_no_usage_chunk_and_no_usage_are_estimated(serve: Serve) -> None:
    fake, model = serve("no_usage")
    fake.enqueue(FakeReply.text("Twelve customers."), FakeReply.text("Twelve customers."))
    completion = await model.complete(ASK, TOOLS)
    assert completion.usage.prompt_tokens > 0
    assert completion.usage.completion_tokens > 0
    shown, done = await _streamed(model)
    assert shown == "Twelve customers."
    assert done.done is not None
    assert done.done.usage.prompt_tokens > 0
    await model.aclose()


async def test_a_server_refusing_stream_options_streams_without_them(serve: Serve) -> None:
    fake, model = serve("no_stream_options")
    fake.enqueue(FakeReply.text("Hello."), FakeReply.text("Again."))
    shown, _ = await _streamed(model)
    assert shown == "Hello."
    assert "stream_options" in fake.requests[0].body
    assert "stream_options" not in fake.requests[1].body
    await _streamed(model)
    assert len(fake.requests) == 3  # remembered
    await model.aclose()


async def test_tool_choice_is_never_sent(serve: Serve) -> None:
    fake, model = serve("no_tool_choice")
    fake.enqueue(FakeReply.call("customer__list", {}), FakeReply.text("Hello."))
    await model.complete(ASK, TOOLS)
    await _streamed(model)
    assert all("tool_choice" not in r.body for r in fake.requests)
    await model.aclose()


async def test_a_stream_closed_midway_is_a_clear_error(serve: Serve) -> None:
    fake, model = serve()
    fake.enqueue(FakeReply(content="The total revenue this year is", cut_after=3))
    with pytest.raises(ModelUnavailable, match="broke off"):
        await _streamed(model)
    await model.aclose()


async def test_an_answer_cut_midway_is_a_clear_error(serve: Serve) -> None:
    fake, model = serve()
    fake.enqueue(FakeReply(content="The total revenue this year is 5.", cut_after=40))
    with pytest.raises(ModelUnavailable) as raised:
        await model.complete(ASK, TOOLS)
    assert "not responding" in str(raised.value)
    await model.aclose()


def test_llama_cpp_reports_cached_prompt_tokens_in_its_timings() -> None:
    from openai.types.chat import ChatCompletion

    from erp_agent.models._names import NameMap
    from erp_agent.models.openai_compatible import _completion

    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "local",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 2, "total_tokens": 902},
        "timings": {"cache_n": 850, "prompt_n": 50},
    }
    completion = _completion(ChatCompletion.model_validate(body), NameMap([]))
    assert completion.usage.cached_tokens == 850
