"""The self-hosted examples in docs/configuration.md, run as written against the demo ERP and a
fake OpenAI server listening where the command says (its port swapped for a free one), in the
quirk modes such servers have. Figures are checked against the ERP's REST API."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from rest_truth import RestERP
from typer.testing import CliRunner

from erp_agent.cli import app as cli_app
from erp_agent.config import Settings
from erp_agent.errors import ModelTimeout
from erp_agent.models.base import Message
from erp_agent.models.fake_server import FakeOpenAIServer, FakeReply
from erp_agent.models.presets import PRESETS
from erp_agent.models.registry import ModelRegistry

DOC = Path(__file__).parents[2] / "docs" / "configuration.md"
QUESTION = "How many customers are there?"
# Each documented server, in the modes it is known for when its tool-call parser is off.
SERVERS: dict[str, set[str]] = {
    "Ollama": {"text_calls_fenced", "no_stream_options"},
    "vLLM": {"text_calls_tagged", "no_usage", "no_tool_choice"},
    "llama.cpp server": {"no_tool_role", "text_calls_tagged", "no_usage"},
    "LM Studio and any other OpenAI-compatible server": set(),
}
_LOCAL = re.compile(r"http://localhost:\d+/v1")


def documented_command(title: str) -> str:
    text = DOC.read_text()
    section = text.split(f"\n### {title}\n", 1)[1].split("\n### ", 1)[0]
    lines = re.findall(r"```sh\n(.*?)\n```", section, re.S)
    commands = [line for line in lines if "erp-agent ask" in line]
    assert len(commands) == 1, f"{title}: one erp-agent command expected, found {commands}"
    return commands[0]


def as_run(command: str, url: str) -> tuple[dict[str, str], list[str]]:
    """(environment, arguments) of the documented command, its model server moved to ``url``."""
    words = shlex.split(_LOCAL.sub(url, command))
    env = {}
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "erp-agent"
    return env, words[1:]


def customers(erp_url: str) -> int:
    rest = RestERP(erp_url, "admin@demo.local")
    try:
        return len(rest.rows("Customer", []))
    finally:
        rest.close()


@pytest.fixture
def base_env(demo_erp: Any, tmp_path: Path) -> dict[str, str]:
    return {
        "ERP_AGENT_ERP_URL": demo_erp.url,
        "ERP_AGENT_PASSWORD": "demo",
        "ERP_AGENT_DATA_DIR": str(tmp_path),
        "COLUMNS": "200",
    }


@pytest.mark.parametrize("title", SERVERS)
def test_the_documented_command_answers_through_the_gateway(
    title: str, base_env: dict[str, str], demo_erp: Any
) -> None:
    command = documented_command(title)
    key = "secret-key" if "API_KEY_ENV" in command else "no-key"
    server = FakeOpenAIServer(api_key=key, quirks=SERVERS[title], context_limit=8192)
    server.enqueue(
        FakeReply.call("customer.count", {}),  # the dotted name: written as text by most modes
        FakeReply.text("That is every customer on record."),
    )
    with server.running() as url:
        env, args = as_run(command, url)
        result = CliRunner().invoke(
            cli_app, args, env={**base_env, **env, "MY_SERVER_KEY": "secret-key"}
        )
    assert result.exit_code == 0, result.output
    assert "That is every customer on record." in result.output
    assert "customer.count" not in result.output
    assert "<tool_call>" not in result.output
    first, second = server.requests[0].body, server.requests[-1].body
    assert "customer__count" in [t["function"]["name"] for t in first["tools"]]
    assert "tool_choice" not in first
    # The call ran through the gateway: its result, from the ERP, went back to the model.
    result_text = json.dumps(second["messages"][-1]["content"])
    assert f"{customers(demo_erp.url)}" in re.findall(r"\d+", result_text)
    if "no_tool_role" in SERVERS[title]:
        assert all(m["role"] != "tool" for m in second["messages"])


def test_the_documented_presets_are_the_shipped_ones() -> None:
    text = DOC.read_text()
    table = text[text.index("| preset | server |") :].split("\n\n", 1)[0]
    for name, preset in PRESETS.items():
        row = next(line for line in table.splitlines() if f"`{name}:`" in line)
        if preset.base_url:
            assert f"`{preset.base_url}`" in row, name


def test_a_slow_model_stops_the_turn_with_the_setting_to_raise(base_env: dict[str, str]) -> None:
    server = FakeOpenAIServer(api_key="no-key")
    server.enqueue(FakeReply.slow(3.0, FakeReply.text("late")))
    with server.running() as url:
        result = CliRunner().invoke(
            cli_app,
            ["ask", QUESTION, "--as", "admin@demo.local", "--model", "ollama:slow"],
            env={**base_env, "ERP_AGENT_MODEL_BASE_URL": url, "ERP_AGENT_TURN_DEADLINE": "1"},
        )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "I stopped after 1 seconds while waiting for the AI model" in text
    assert "ERP_AGENT_TURN_DEADLINE" in text
    assert "ran out of time" not in text


@pytest.mark.anyio
async def test_a_model_timeout_names_its_setting() -> None:
    server = FakeOpenAIServer(api_key="no-key")
    server.enqueue(*[FakeReply.slow(2.0, FakeReply.text("late"))] * 2)
    with server.running() as url:
        table = {"model": "llamacpp:m", "base_url": url, "timeout": 0.5, "max_retries": 1}
        registry = ModelRegistry.from_settings(Settings(reasoning_model=table))
        model = registry.model("reasoning", org="acme")
        try:
            with pytest.raises(ModelTimeout) as raised:
                await model.complete([Message("user", QUESTION)])
        finally:
            await registry.aclose()
    assert "did not answer within 0.5 seconds" in str(raised.value)
    assert "ERP_AGENT_REASONING_MODEL__TIMEOUT" in str(raised.value)


def test_command_line_model_errors_are_one_line(base_env: dict[str, str]) -> None:
    runner = CliRunner()
    ask = ["ask", QUESTION, "--as", "admin@demo.local"]
    no_url = runner.invoke(cli_app, [*ask, "--model", "openai-compatible:m"], env=base_env)
    assert no_url.exit_code == 1
    assert "needs a base URL" in no_url.output
    assert "--base-url" in no_url.output
    unknown = runner.invoke(cli_app, [*ask, "--model", "gpt"], env=base_env)
    assert unknown.exit_code == 1
    assert "PRESET:NAME" in unknown.output
    stray = runner.invoke(cli_app, [*ask, "--base-url", "http://localhost:1/v1"], env=base_env)
    assert stray.exit_code == 1
    assert "--base-url needs --model" in stray.output


BROKEN_CALL = '<tool_call>{"name": "customer.count", "arguments": {</tool_call>'


@pytest.mark.parametrize(
    ("replies", "shown"),
    [
        ([FakeReply.text(BROKEN_CALL)] * 2, "could not be read, even when asked again"),
        ([FakeReply.text("")] * 2, "returned an empty answer twice"),
        ([FakeReply.text("7" * 2_000_000)], "characters long, more than the 200,000"),
    ],
    ids=["unreadable call", "empty answer", "2 MB reply"],
)
def test_unusable_model_output_ends_the_turn_with_a_clear_message(
    base_env: dict[str, str], replies: list[FakeReply], shown: str
) -> None:
    server = FakeOpenAIServer(api_key="no-key")
    server.enqueue(*replies)
    with server.running() as url:
        result = CliRunner().invoke(
            cli_app,
            [
                "ask",
                QUESTION,
                "--as",
                "admin@demo.local",
                "--model",
                "llamacpp:m",
                "--base-url",
                url,
            ],
            env=base_env,
        )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert shown in text
    assert "{" not in text
    assert "7777777" not in text
    assert server.remaining == 0


@pytest.mark.parametrize(
    ("first", "quirks"),
    [
        (FakeReply.call("payroll.run", {}), {"text_calls_tagged"}),
        (FakeReply.call("customer.count", '{"filters": '), set()),
    ],
    ids=["unknown tool written as text", "malformed arguments of a real call"],
)
def test_a_bad_call_is_answered_to_the_model_and_the_turn_goes_on(
    base_env: dict[str, str], first: FakeReply, quirks: set[str]
) -> None:
    server = FakeOpenAIServer(api_key="no-key", quirks=quirks)
    server.enqueue(first, FakeReply.text("I could not do that; here is what I can do."))
    with server.running() as url:
        result = CliRunner().invoke(
            cli_app,
            ["ask", QUESTION, "--as", "admin@demo.local", "--model", "vllm:m", "--base-url", url],
            env=base_env,
        )
    assert result.exit_code == 0, result.output
    assert "I could not do that" in result.output
    answered = json.dumps(server.requests[1].body["messages"][-1])
    assert "not offered" in answered or "not valid JSON" in answered
