"""Which chat model a command uses: ``--model``, else the configured one, else the offline planner."""

from __future__ import annotations

from erp_agent.config import ModelSettings, Settings
from erp_agent.errors import ConfigError
from erp_agent.models.base import ChatModel
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime

PROVIDERS = ("openai", "azure", "anthropic")


def model_for(runtime: Runtime, spec: str | None) -> ChatModel:
    """``offline`` or ``provider:model`` (the key is read from PROVIDER_API_KEY)."""
    # Provider SDKs are imported only when one is used (seconds saved on an offline start).
    if spec is None:
        configured = runtime.settings.reasoning_model
        if configured is None:
            return offline(runtime)
        from erp_agent.models.registry import build_model

        return build_model(configured)
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
