"""Which chat model a command uses: ``--model`` (with ``--base-url``), else the configured one,
else the offline planner.

A model named on the command line goes into the settings before the runtime is built, so it
gets what a configured model gets: its timeout, retries, the rate gate and the usage ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from erp_agent.config import Settings, with_model
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


def configure(settings: Settings, model: str | None, base_url: str | None = None) -> Settings:
    """``settings`` with the reasoning model ``--model``/``--base-url`` name (unchanged for
    none or ``offline``). The key is checked now, with the variable to set, rather than at the
    first question."""
    if model is None or model == OFFLINE:
        if base_url:
            raise ConfigError("--base-url needs --model PRESET:NAME (e.g. ollama:qwen2.5:7b).")
        return settings
    if split(model) is None:
        raise ConfigError(
            f"--model {model!r} is not understood. Use --model offline, or PRESET:NAME with "
            f"PRESET one of {', '.join(PRESETS)} (e.g. --model openai:gpt-4.1, or --model "
            "openai-compatible:NAME --base-url http://HOST:PORT/v1)."
        )
    # The key by reference (ERP_AGENT_MODEL_API_KEY_ENV) goes with the model named here too.
    configured = with_model(
        settings, model, base_url=base_url, api_key_env=settings.model_api_key_env
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
