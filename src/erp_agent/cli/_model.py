"""Which chat model a command uses: ``--model``, else the configured one, else the offline planner."""

from __future__ import annotations

from typing import TYPE_CHECKING

from erp_agent.config import ModelSettings, Settings
from erp_agent.errors import ConfigError
from erp_agent.models.base import ChatModel
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime

if TYPE_CHECKING:
    from erp_agent.server import ModelSwitch

PROVIDERS = ("openai", "azure", "anthropic")


def model_for(runtime: Runtime, spec: str | None) -> ChatModel:
    """``offline`` or ``provider:model`` (the key is read from PROVIDER_API_KEY)."""
    # Provider SDKs are imported only when one is used (seconds saved on an offline start).
    if spec is None:
        # The configured model with retries, rate gate and budget, or the offline planner.
        return runtime.default_model()
    if spec == "offline":
        return offline(runtime)
    provider, _, name = spec.partition(":")
    if provider not in PROVIDERS or not name:
        raise ConfigError(
            f"--model {spec!r} is not understood. Use --model offline, or provider:model with "
            f"provider one of {', '.join(PROVIDERS)} (e.g. --model openai:gpt-4.1)."
        )
    settings = ModelSettings(
        provider=provider,  # checked against PROVIDERS above
        model=name,
        api_key_env=f"{provider.upper()}_API_KEY",
    )
    settings.key()  # fail now, with the variable to set, rather than at the first question
    from erp_agent.models.registry import build_model

    return build_model(settings)


def offline(runtime: Runtime) -> ChatModel:
    return OfflinePlanner(runtime.catalog, runtime.connector.name)


def describe(settings: Settings) -> str:
    configured = settings.reasoning_model
    return f"{configured.provider}:{configured.model}" if configured else "offline"


def model_switch(runtime: Runtime, model: str | None) -> ModelSwitch:
    """What the server asks for a turn's model. ``--model`` fills the local slot; without it the
    configured model (if any) serves first, and an admin may switch providers at run time."""
    from erp_agent.server import ModelSwitch

    registry = runtime.models if model is None and runtime.models.settings("reasoning") else None
    return ModelSwitch(
        lambda: model_for(runtime, model or "offline"),
        registry=registry,
        local_name=model or "offline-planner",
    )
