"""Which chat model a command uses: ``--model`` (with ``--base-url``), else the configured one,
else the offline planner.

A model named on the command line goes into the settings before the runtime is built, so it
gets what a configured model gets: its timeout, retries, the rate gate and the usage ledger.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from erp_agent.config import ENDPOINT_FIELDS, ModelSettings, Settings, load_settings
from erp_agent.errors import ConfigError
from erp_agent.models.presets import PRESETS, split

if TYPE_CHECKING:  # the runtime and the planner load in seconds: only when a command runs
    from erp_agent.models.base import ChatModel
    from erp_agent.runtime import Runtime
    from erp_agent.server import ModelSwitch

OFFLINE = "offline"

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="offline, or PRESET:NAME — openai:, anthropic:, azure:, ollama:, vllm:, llamacpp:, "
        "lmstudio:, openai-compatible: (with --base-url); default: the configured model.",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="The model server's address, e.g. http://localhost:11434/v1 (wins over a preset's).",
    ),
]


ModelSettingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model-setting",
        help="A setting of the model --model names, NAME=VALUE (repeatable): context_window, "
        "timeout, max_retries, compact_tools, max_output_tokens, strict_tools, … (see "
        "docs/configuration.md, Model providers).",
    ),
]
TUNABLE = tuple(n for n in ModelSettings.model_fields if n not in ENDPOINT_FIELDS)


def model_options(given: Sequence[str] | None) -> dict[str, str]:
    """``--model-setting NAME=VALUE`` pairs, each name checked (values are checked with the
    model's settings)."""
    out: dict[str, str] = {}
    for item in given or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in TUNABLE:
            raise ConfigError(
                f"--model-setting {item!r}: give NAME=VALUE with NAME one of {', '.join(TUNABLE)}."
            )
        out[name] = value.strip()
    return out


def configure(
    settings: Settings | None,
    model: str | None,
    base_url: str | None = None,
    options: Sequence[str] | None = None,
) -> Settings:
    """The settings (``settings``, or loaded now) with the reasoning model ``--model`` /
    ``--base-url`` / ``--model-setting`` name (unchanged for none or ``offline``). A model
    named here takes every other model setting configured (timeout, window, retries…) with
    it. The key is checked now, with the variable to set, rather than at the first
    question."""
    chosen = model_options(options)
    if model is None or model == OFFLINE:
        if base_url:
            raise ConfigError("--base-url needs --model PRESET:NAME (e.g. ollama:qwen2.5:7b).")
        if chosen:
            raise ConfigError("--model-setting needs --model PRESET:NAME (e.g. ollama:qwen2.5:7b).")
        return settings if settings is not None else load_settings()
    if split(model) is None:
        raise ConfigError(
            f"--model {model!r} is not understood. Use --model offline, or PRESET:NAME with "
            f"PRESET one of {', '.join(PRESETS)} (e.g. --model openai:gpt-4.1, or --model "
            "openai-compatible:NAME --base-url http://HOST:PORT/v1)."
        )
    # ERP_AGENT_MODEL_API_KEY_ENV and the other model settings go with the model named here.
    loaded = load_settings(model=model, base_url=base_url, options=chosen)
    configured = (
        loaded
        if settings is None
        else settings.model_copy(update={"reasoning_model": loaded.reasoning_model})
    )
    assert configured.reasoning_model is not None
    configured.reasoning_model.key()
    return configured


def model_for(runtime: Runtime, spec: str | None) -> ChatModel:
    """The model a terminal command uses. ``spec`` other than offline was put in the runtime's
    settings by ``configure``: it is served without falling back to the planner, so a failing
    endpoint says so instead of being answered by something else."""
    if spec is None:
        # The configured model with retries, rate gate and budget, or the offline planner.
        return runtime.default_model()
    if spec == OFFLINE:
        return offline(runtime)
    return runtime.models.model("reasoning", org="default")


def offline(runtime: Runtime) -> ChatModel:
    from erp_agent.planner import OfflinePlanner

    return OfflinePlanner(runtime.catalog, runtime.connector.name)


def describe(settings: Settings) -> str:
    configured = settings.reasoning_model
    return f"{configured.provider}:{configured.model}" if configured else OFFLINE


def model_switch(runtime: Runtime, model: str | None) -> ModelSwitch:
    """What the server asks for a turn's model. A model named with ``--model`` (already in the
    runtime's settings, see ``configure``) or the configured one serves first, and an admin may
    switch providers at run time; ``--model offline`` serves the planner."""
    from erp_agent.server import ModelSwitch

    configured = runtime.models.settings("reasoning") is not None
    registry = runtime.models if model != OFFLINE and configured else None
    return ModelSwitch(
        lambda: offline(runtime),
        registry=registry,
        local_name="offline-planner",
    )
