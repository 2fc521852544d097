"""OpenAICompatibleModel against the fake OpenAI server, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from openai.types.completion_usage import CompletionUsage
from pydantic import SecretStr

from erp_agent.config import ModelSettings, Settings
from erp_agent.errors import ConfigError, ModelAuthError
from erp_agent.models.base import Message, StreamDelta
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply
from erp_agent.models.openai_compatible import OpenAICompatibleModel, _usage
from erp_agent.models.registry import ModelRegistry
from erp_agent.models.usage import InMemoryUsageLedger

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


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[FakeOpenAIServer, str]]:
    server = FakeOpenAIServer(api_key="test-key")
    with server.running() as url:
        yield server, url


@pytest.fixture
def fake(running: tuple[FakeOpenAIServer, str]) -> FakeOpenAIServer:
    running[0].reset()
    return running[0]


@pytest.fixture
def url(running: tuple[FakeOpenAIServer, str]) -> str:
    return running[1]


def settings(url: str, **extra: object) -> ModelSettings:
    return ModelSettings.model_validate(
        {"model": "gpt-test", "base_url": url, "api_key": SecretStr("test-key"), **extra}
    )


async def test_text_completion_with_cached_prompt_tokens(fake: FakeOpenAIServer, url: str) -> None:
    fake.enqueue(
        FakeReply.text("Hello.", prompt_tokens=1200, completion_tokens=3, cached_tokens=1024)
    )
    model = OpenAICompatibleModel(settings(url))
    completion = await model.complete([Message("system", "Be brief."), Message("user", "Hi")])
    await model.aclose()
    assert completion.content == "Hello."
    assert completion.tool_calls == []
    assert completion.finish_reason == "stop"
    assert (completion.usage.prompt_tokens, completion.usage.cached_tokens) == (1200, 1024)
    assert completion.usage.completion_tokens == 3
    sent = fake.requests[0]
    assert sent.body["model"] == "gpt-test"
    assert sent.headers["authorization"] == "Bearer test-key"
    assert "tools" not in sent.body


async def test_tool_call_round_trip_keeps_our_dotted_names(
    fake: FakeOpenAIServer, url: str
) -> None:
    # Dotted names are invalid on the wire: the fake server rejects them as OpenAI does.
    fake.enqueue(
        FakeReply.call("customer__list", {"limit": 5}, id="call_1"), FakeReply.text("Five.")
    )
    model = OpenAICompatibleModel(settings(url))
    first = await model.complete([Message("user", "Customers?")], TOOLS)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("call_1", "customer.list", {"limit": 5})
    ]
    assert first.finish_reason == "tool_calls"
    history = [
        Message("user", "Customers?"),
        first.as_message(),
        Message("tool", '["C1"]', tool_call_id="call_1", name="customer.list"),
    ]
    second = await model.complete(history, TOOLS)
    await model.aclose()
    assert second.content == "Five."
    wire = fake.requests[1].body
    assert wire["tools"][0]["function"]["name"] == "customer__list"
    assert wire["messages"][1]["tool_calls"][0]["function"]["name"] == "customer__list"
    assert wire["messages"][2] == {"role": "tool", "content": '["C1"]', "tool_call_id": "call_1"}


async def test_streaming_assembles_text_and_tool_call_deltas(
    fake: FakeOpenAIServer, url: str
) -> None:
    arguments = {"limit": 25, "filters": {"territory": "North", "status": "Active"}}
    fake.enqueue(
        FakeReply.text("Streaming works well enough.", cached_tokens=64),
        FakeReply.calls(
            ("customer__list", arguments, "call_a"), ("customer__list", {"limit": 1}, "call_b")
        ),
    )
    model = OpenAICompatibleModel(settings(url))
    deltas = [d async for d in model.stream([Message("user", "Hi")])]
    texts = [d.text for d in deltas if d.text]
    assert len(texts) > 1
    assert "".join(texts) == "Streaming works well enough."
    done = deltas[-1].done
    assert done is not None
    assert done.content == "Streaming works well enough."
    assert done.usage.cached_tokens == 64
    assert done.usage.prompt_tokens > 0
    assert fake.requests[0].body["stream_options"] == {"include_usage": True}

    deltas = [d async for d in model.stream([Message("user", "List")], TOOLS)]
    await model.aclose()
    done = deltas[-1].done
    assert done is not None
    assert done.content is None
    assert [(c.id, c.name, json.loads(c.arguments)) for c in done.tool_calls] == [
        ("call_a", "customer.list", arguments),
        ("call_b", "customer.list", {"limit": 1}),
    ]
    assert done.finish_reason == "tool_calls"
    assert done.usage.completion_tokens > 0


async def test_stream_without_usage_option(fake: FakeOpenAIServer, url: str) -> None:
    # Some older servers reject stream_options; the setting turns it off.
    fake.enqueue(FakeReply.text("ok"))
    model = OpenAICompatibleModel(settings(url, stream_usage=False))
    deltas: list[StreamDelta] = [d async for d in model.stream([Message("user", "Hi")])]
    await model.aclose()
    assert "stream_options" not in fake.requests[0].body
    assert deltas[-1].done is not None
    assert deltas[-1].done.content == "ok"


async def test_strict_tools_close_every_object(fake: FakeOpenAIServer, url: str) -> None:
    fake.enqueue(FakeReply.text("ok"))
    model = OpenAICompatibleModel(settings(url, strict_tools=True))
    await model.complete([Message("user", "Hi")], TOOLS)
    await model.aclose()
    function = fake.requests[0].body["tools"][0]["function"]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False
    assert "additionalProperties" not in TOOLS[0]["function"]["parameters"]  # type: ignore[index]


async def test_azure_deployment_path_api_version_and_key_header(
    fake: FakeOpenAIServer, url: str
) -> None:
    fake.enqueue(FakeReply.text("from azure"))
    azure = settings(
        url.removesuffix("/v1"), provider="azure", deployment="gpt4o-prod", api_version="2024-10-21"
    )
    model = OpenAICompatibleModel(azure)
    completion = await model.complete([Message("user", "Hi")])
    await model.aclose()
    assert completion.content == "from azure"
    sent = fake.requests[0]
    assert sent.path == "/openai/deployments/gpt4o-prod/chat/completions"
    assert sent.query["api-version"] == "2024-10-21"
    assert sent.headers["api-key"] == "test-key"


async def test_answer_limit_uses_the_parameter_each_server_knows(
    fake: FakeOpenAIServer, url: str
) -> None:
    fake.enqueue(FakeReply.text("a"), FakeReply.text("b"))
    compatible = OpenAICompatibleModel(settings(url))
    await compatible.complete([Message("user", "Hi")], max_tokens=50)
    azure = OpenAICompatibleModel(
        settings(url.removesuffix("/v1"), provider="azure", deployment="d", api_version="v")
    )
    await azure.complete([Message("user", "Hi")], max_tokens=60)
    await compatible.aclose()
    await azure.aclose()
    assert fake.requests[0].body["max_tokens"] == 50
    assert "max_completion_tokens" not in fake.requests[0].body
    assert fake.requests[1].body["max_completion_tokens"] == 60
    assert "max_tokens" not in fake.requests[1].body


def test_cached_tokens_from_servers_that_report_them_their_own_way() -> None:
    deepseek = CompletionUsage.model_validate(
        {
            "prompt_tokens": 100,
            "completion_tokens": 5,
            "total_tokens": 105,
            "prompt_cache_hit_tokens": 64,
            "prompt_cache_miss_tokens": 36,
        }
    )
    assert _usage(deepseek).cached_tokens == 64
    bare = CompletionUsage.model_validate(
        {
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "total_tokens": 2,
            "prompt_tokens_details": None,
        }
    )
    assert _usage(bare).cached_tokens == 0


def test_azure_without_endpoint_says_what_to_set() -> None:
    with pytest.raises(ConfigError, match="api_version"):
        OpenAICompatibleModel(ModelSettings(provider="azure", model="m", base_url="https://x"))


async def test_key_by_reference_is_read_from_the_named_variable(
    fake: FakeOpenAIServer, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "test-key")
    fake.enqueue(FakeReply.text("ok"))
    model = OpenAICompatibleModel(
        ModelSettings(model="m", base_url=url, api_key_env="FAKE_PROVIDER_KEY")
    )
    assert (await model.complete([Message("user", "Hi")])).content == "ok"
    await model.aclose()
    monkeypatch.delenv("FAKE_PROVIDER_KEY")
    with pytest.raises(ConfigError, match="FAKE_PROVIDER_KEY"):
        OpenAICompatibleModel(
            ModelSettings(model="m", base_url=url, api_key_env="FAKE_PROVIDER_KEY")
        )


async def test_runtime_switch_of_url_model_and_key_without_restart(
    fake: FakeOpenAIServer, url: str
) -> None:
    second = FakeOpenAIServer(api_key="second-key")
    ledger = InMemoryUsageLedger()
    registry = ModelRegistry(ledger=ledger)
    await registry.configure("reasoning", settings(url))
    model = registry.model("reasoning", org="acme")
    fake.enqueue(FakeReply.text("first"))
    assert (await model.complete([Message("user", "Hi")])).content == "first"

    with second.running() as second_url:
        # A wrong key is reported as an admin problem, and nothing is retried.
        await registry.configure(
            "reasoning", settings(second_url, model="other-model", api_key=SecretStr("wrong"))
        )
        with pytest.raises(ModelAuthError, match="administrator"):
            await model.complete([Message("user", "Hi")])
        assert len(second.requests) == 1

        await registry.configure(
            "reasoning", settings(second_url, model="other-model", api_key=SecretStr("second-key"))
        )
        second.enqueue(FakeReply.text("second"))
        # The same handle, taken before the switch, now talks to the new endpoint.
        assert (await model.complete([Message("user", "Hi")])).content == "second"
        assert second.requests[-1].body["model"] == "other-model"
        assert registry.settings("reasoning") is not None
    assert len(fake.requests) == 1
    assert ledger.calls == {"fake-model": 2}
    await registry.aclose()


async def test_unconfigured_task_says_how_to_configure() -> None:
    with pytest.raises(ConfigError, match="ERP_AGENT_VISION_MODEL__MODEL"):
        ModelRegistry().model("vision", org="acme")


async def test_registry_from_settings_shares_one_rate_gate(
    fake: FakeOpenAIServer, url: str
) -> None:
    app_settings = Settings(
        reasoning_model=settings(url),
        vision_model=settings(url, model="vision-model"),
        tokens_per_minute=60_000,
        monthly_token_budget=1_000_000,
    )
    registry = ModelRegistry.from_settings(app_settings)
    fake.enqueue(FakeReply.text("r"), FakeReply.text("v"))
    assert (
        await registry.model("reasoning", org="acme").complete([Message("user", "a")])
    ).content == "r"
    vision = registry.model("vision", org="acme")
    assert (await vision.complete([Message("user", "b")])).content == "v"
    assert vision.gate is registry.gate is not None
    assert vision.monthly_token_budget == 1_000_000
    assert [r.body["model"] for r in fake.requests] == ["gpt-test", "vision-model"]
    await registry.aclose()
