"""One way to name any model endpoint: ``PRESET:MODEL``.

``ollama:qwen2.5:7b`` means "the OpenAI-compatible server Ollama runs, at its default local
address, serving qwen2.5:7b". A base URL given beside it wins over the preset's address, so
``openai-compatible:NAME`` plus a base URL reaches any server that speaks chat completions.

This module holds data only (no settings, no SDK), so the settings object can read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Preset:
    provider: str  # the wire protocol (config.ModelProvider)
    base_url: str | None  # None: the provider's public API, or (needs_url) none at all
    api_key_env: str | None = None  # where the key is read from when none is named
    local: bool = False  # a self-hosted server: slower answers, smaller context by default
    needs_url: bool = False


# Ports are each server's documented default.
PRESETS: dict[str, Preset] = {
    "openai": Preset("openai", None, "OPENAI_API_KEY"),
    "azure": Preset("azure", None, "AZURE_OPENAI_API_KEY"),
    "anthropic": Preset("anthropic", None, "ANTHROPIC_API_KEY"),
    # Any hosted endpoint or gateway (OpenRouter, Together, a company's proxy to GPT or Claude):
    # hosted defaults, and its model list says the real context window.
    "openai-compatible": Preset("openai", None, needs_url=True),
    "ollama": Preset("openai", "http://localhost:11434/v1", local=True),
    "vllm": Preset("openai", "http://localhost:8000/v1", local=True),
    "llamacpp": Preset("openai", "http://localhost:8080/v1", local=True),
    "lmstudio": Preset("openai", "http://localhost:1234/v1", local=True),
}

# What a self-hosted server gets unless the settings say otherwise: time for a CPU-bound model
# to answer, and (unless its model list says more) an 8k context, Ollama's and many GGUF
# builds' default. A hosted endpoint that does not list its window is taken to read 128k.
LOCAL_DEFAULTS: dict[str, Any] = {"timeout": 300.0}
LOCAL_WINDOW = 8192
HOSTED_WINDOW = 128_000
LOCAL_TURN_SECONDS = 600.0  # a turn's deadline when the reasoning model is self-hosted


def split(spec: str) -> tuple[str, str] | None:
    """(preset, model) when ``spec`` starts with a known preset, else None (``qwen3:14b`` is a
    model name with a tag, not a preset)."""
    head, sep, name = spec.partition(":")
    if sep and head in PRESETS and name:
        return head, name
    return None


def apply(data: dict[str, Any]) -> dict[str, Any]:
    """Model settings as given (``model`` may carry a preset) → explicit settings. Values given
    explicitly win over the preset's; a preset named in ``preset`` works the same way."""
    spec = data.get("model")
    found = split(spec) if isinstance(spec, str) else None
    name = data.get("preset")
    if found is not None:
        name, data = found[0], {**data, "model": found[1]}
    if not name:
        return data
    preset = PRESETS.get(str(name))
    if preset is None:
        known = ", ".join(PRESETS)
        raise ValueError(f"unknown model preset {name!r}; use one of {known}")
    out = {**data, "preset": name}
    out.setdefault("provider", preset.provider)
    if out.get("base_url") is None and preset.base_url is not None:
        out["base_url"] = preset.base_url
    if preset.needs_url and not out.get("base_url"):
        raise ValueError(
            f"{name}:{out.get('model')} needs a base URL: give --base-url URL, "
            "ERP_AGENT_MODEL_BASE_URL, or base_url in the model settings "
            "(for example http://localhost:8000/v1)"
        )
    explicit_key = out.get("api_key") is not None or out.get("api_key_env")
    # A key is read by default only for a provider's public API, never sent to another host.
    if not explicit_key and preset.api_key_env and out.get("base_url") is None:
        out["api_key_env"] = preset.api_key_env
    if preset.local:
        for key, value in LOCAL_DEFAULTS.items():
            out.setdefault(key, value)
    return out


def is_local(preset: str | None) -> bool:
    found = PRESETS.get(preset or "")
    return bool(found and found.local)
