"""What a model is taken to read follows its endpoint, not its prefix: a hosted or proxied
model (``openai-compatible:NAME`` at any gateway) gets full tool schemas and the window its
model list gives; a self-hosted preset gets 8k and compact schemas unless its list says more.
Every model setting goes with ``--model``, and a bad one is refused in one line naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from erp_agent.assembly import configure
from erp_agent.cli import app as cli_app
from erp_agent.config import ModelSettings, load_settings
from erp_agent.errors import ConfigError
from erp_agent.models._fit import fit, tool_tokens
from erp_agent.models._schemas import compact, first_sentence
from erp_agent.models.base import Message
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply
from erp_agent.models.openai_compatible import OpenAICompatibleModel

pytestmark = pytest.mark.anyio

METRICS = [f"metric_{i}" for i in range(40)]
TOOL = {
    "type": "function",
    "function": {
        "name": "metrics.query",
        "description": "The exact tool for business figures (e.g. revenue by month, overdue "
        "receivables). Pick the metric whose definition fits.",
        "parameters": {
            "type": "object",
            "properties": {
                "metric": {"type": "string", "enum": METRICS, "description": "Which one. More."},
                "group_by": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            },
            "required": ["metric"],
        },
    },
}


def _model(spec: str, url: str, **extra: Any) -> OpenAICompatibleModel:
    table = {"model": spec, "base_url": url, "api_key": SecretStr("k"), **extra}
    return OpenAICompatibleModel(ModelSettings.model_validate(table))


async def _sent_tools(server: FakeOpenAIServer, model: OpenAICompatibleModel) -> list[Any]:
    server.enqueue(FakeReply.text("ok"))
    try:
        await model.complete([Message("user", "hi")], [TOOL])
    finally:
        await model.aclose()
    return list(server.requests[-1].body["tools"])


async def test_a_hosted_gateway_gets_full_schemas_and_its_listed_window() -> None:
    """openai-compatible:NAME is any hosted endpoint: the window its model list gives (here
    200k, as OpenRouter lists context_length), and tool schemas sent whole."""
    server = FakeOpenAIServer(api_key="k", model="gpt-5.5", listed_window=200_000)
    with server.running() as url:
        model = _model("openai-compatible:gpt-5.5", url)
        assert model.profile.context_window == 128_000  # the hosted default, until it is read
        assert (await model.prepare()).context_window == 200_000
        sent = await _sent_tools(server, model)
    assert sent[0]["function"]["description"] == TOOL["function"]["description"]
    assert sent[0]["function"]["parameters"]["properties"]["metric"]["enum"] == METRICS
    assert server.model_lists == 1  # read once, not at every request


async def test_a_self_hosted_preset_is_compact_but_keeps_every_enum() -> None:
    server = FakeOpenAIServer(api_key="k", model="qwen")  # lists the model, no window
    with server.running() as url:
        model = _model("vllm:qwen", url)
        assert (await model.prepare()).context_window == 8192
        sent = await _sent_tools(server, model)
    function = sent[0]["function"]
    # Cut at the sentence's end, never inside "(e.g. …)".
    assert function["description"] == (
        "The exact tool for business figures (e.g. revenue by month, overdue receivables)."
    )
    properties = function["parameters"]["properties"]
    assert properties["metric"]["enum"] == METRICS  # a model calls it right the first time
    assert properties["metric"]["description"] == "Which one."
    assert properties["group_by"]["items"]["enum"] == ["a", "b"]


async def test_the_list_may_raise_a_self_hosted_window() -> None:
    server = FakeOpenAIServer(api_key="k", model="qwen", listed_window=32_768)
    with server.running() as url:
        model = _model("vllm:qwen", url)
        assert (await model.prepare()).context_window == 32_768
        sent = await _sent_tools(server, model)
    assert sent[0]["function"]["description"] == TOOL["function"]["description"]  # 32k: full
    assert sent[0]["function"]["parameters"] == TOOL["function"]["parameters"]


async def test_a_window_set_is_not_read_from_the_list() -> None:
    server = FakeOpenAIServer(api_key="k", model="m", listed_window=200_000)
    with server.running() as url:
        model = _model("openai-compatible:m", url, context_window=16_000)
        assert (await model.prepare()).context_window == 16_000
        await model.aclose()
    assert server.model_lists == 0


def test_defaults_follow_the_endpoint() -> None:
    def window(spec: str, url: str | None = None) -> int:
        return ModelSettings.model_validate({"model": spec, "base_url": url}).window

    assert window("openai-compatible:anthropic/claude", "https://openrouter.ai/api/v1") == 128_000
    assert window("openai:gpt-5.5") == 128_000
    assert window("ollama:qwen2.5:7b") == 8192
    assert window("llamacpp:local") == 8192
    hosted = ModelSettings.model_validate(
        {"model": "openai-compatible:x", "base_url": "https://g/v1"}
    )
    assert hosted.timeout == 60.0
    assert not hosted.local
    assert ModelSettings.model_validate({"model": "vllm:x"}).timeout == 300.0


def test_compact_cuts_prose_at_sentence_ends() -> None:
    assert first_sentence("Totals (e.g. by month). Then more.") == "Totals (e.g. by month)."
    assert (
        first_sentence("Use metrics.query for figures. Other.") == "Use metrics.query for figures."
    )
    assert first_sentence("Figures: revenue, billed... and more. Next.") == (
        "Figures: revenue, billed... and more."
    )
    assert compact(TOOL)["function"]["parameters"]["properties"]["metric"]["enum"] == METRICS


def test_the_tools_sent_only_grow_with_the_tools_offered() -> None:
    """What is sent depends on the tools alone: a longer conversation never drops one, and a
    tool appended never changes what was sent before it."""
    tools = [{**TOOL, "function": {**TOOL["function"], "name": f"t.n{i}"}} for i in range(40)]
    window = 8192
    for n in range(1, len(tools)):
        assert fit(tools[: n + 1], window)[: len(fit(tools[:n], window))] == fit(tools[:n], window)
    kept = fit(tools, window)
    assert sum(tool_tokens(t) for t in kept) <= window // 2
    assert fit(tools, 128_000) == tools


def test_every_model_setting_goes_with_the_model_named_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ERP_AGENT_REASONING_MODEL__TIMEOUT", "120")
    monkeypatch.setenv("ERP_AGENT_MODEL_CONTEXT_WINDOW", "64000")
    settings = configure(
        None, "openai-compatible:gpt-5.5", "http://127.0.0.1:9/v1", ["max_retries=1"]
    )
    model = settings.reasoning_model
    assert model is not None
    assert (model.model, model.timeout, model.context_window, model.max_retries) == (
        "gpt-5.5",
        120.0,
        64000,
        1,
    )
    # The same settings beside ERP_AGENT_MODEL, without a command line.
    monkeypatch.setenv("ERP_AGENT_MODEL", "ollama:qwen3:14b")
    env = load_settings().reasoning_model
    assert env is not None
    assert (env.model, env.timeout, env.context_window) == (
        "qwen3:14b",
        120.0,
        64000,
    )


@pytest.mark.parametrize(
    ("env", "args", "named"),
    [
        (
            {"ERP_AGENT_REASONING_MODEL__CONTEXT_WINDOW": "abc"},
            [],
            "ERP_AGENT_REASONING_MODEL__CONTEXT_WINDOW",
        ),
        ({"ERP_AGENT_MODEL_TIMEOUT": "-1"}, [], "ERP_AGENT_MODEL_TIMEOUT"),
        ({}, ["--model-setting", "context_window=big"], "--model-setting context_window"),
        ({}, ["--model-setting", "colour=red"], "--model-setting 'colour=red'"),
    ],
)
def test_a_bad_model_setting_is_refused_in_one_line_naming_it(
    env: dict[str, str], args: list[str], named: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        cli_app,
        [
            "ask", "hi", "--as", "admin@demo.local", "--model", "openai-compatible:m",
            "--base-url", "http://127.0.0.1:9/v1", *args,
        ],
        env={"ERP_AGENT_DATA_DIR": str(tmp_path), "ERP_AGENT_PASSWORD": "x", **env},
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "ValidationError" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert named in lines[0], result.output


def test_settings_beside_no_model_say_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_AGENT_REASONING_MODEL__TIMEOUT", "120")
    with pytest.raises(ConfigError, match=r"no model is named.*ERP_AGENT_MODEL"):
        load_settings()


def test_the_fake_server_lists_its_model() -> None:
    server = FakeOpenAIServer(api_key="k", model="m", listed_window=1000)
    app = server.app()
    from starlette.testclient import TestClient

    listed = TestClient(app).get("/v1/models", headers={"authorization": "Bearer k"}).json()
    assert json.dumps(listed["data"][0]) == json.dumps(
        {"id": "m", "object": "model", "owned_by": "fake", "context_length": 1000}
    )
