"""Every provider example in docs/configuration.md loads and builds a model; every model setting
is documented."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from erp_agent.config import ModelSettings, Settings
from erp_agent.models.registry import build_model

pytestmark = pytest.mark.anyio
DOC = Path(__file__).parents[2] / "docs" / "configuration.md"


def provider_examples() -> list[tuple[str, str]]:
    text = DOC.read_text()
    section = text[text.index("## Model providers") : text.index("## Errors the user may see")]
    found = []
    for part in section.split("\n### ")[1:]:
        title, _, body = part.partition("\n")
        found += [(title.strip(), toml) for toml in re.findall(r"```toml\n(.*?)```", body, re.S)]
    return found


def test_the_doc_covers_every_provider_the_brief_names() -> None:
    titles = {title for title, _ in provider_examples()}
    assert titles == {
        "LM Studio and any other OpenAI-compatible server",
        "OpenAI",
        "Azure OpenAI",
        "OpenRouter",
        "DeepSeek",
        "vLLM",
        "Ollama",
        "llama.cpp server",
        "Anthropic",
    }


@pytest.mark.parametrize(("title", "body"), provider_examples(), ids=lambda v: v.split("\n")[0])
async def test_each_example_builds_a_model(
    title: str, body: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tomllib.loads(body)["reasoning_model"]
    if "api_key_env" in table:
        monkeypatch.setenv(table["api_key_env"], "sk-from-env")
    settings = ModelSettings.model_validate(table)
    model = build_model(settings)
    assert settings.model in model.profile.name
    await model.aclose()


def test_every_model_setting_is_documented() -> None:
    text = DOC.read_text()
    for name in ModelSettings.model_fields:
        assert f"`<task>_model.{name}`" in text, name
    for name in ("tokens_per_minute", "monthly_token_budget"):
        assert f"`{name}`" in text, name


def test_environment_form_from_the_doc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_AGENT_REASONING_MODEL__MODEL", "gpt-5.5")
    monkeypatch.setenv("ERP_AGENT_REASONING_MODEL__API_KEY_ENV", "OPENAI_API_KEY")
    monkeypatch.setenv(
        "ERP_AGENT_VISION_MODEL",
        '{"provider": "anthropic", "model": "claude-sonnet-5-5", "api_key_env": "ANTHROPIC_API_KEY"}',
    )
    settings = Settings()
    assert settings.reasoning_model is not None
    assert settings.reasoning_model.api_key_env == "OPENAI_API_KEY"
    assert settings.vision_model is not None
    assert settings.vision_model.provider == "anthropic"
