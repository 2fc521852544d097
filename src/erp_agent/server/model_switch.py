"""The model provider the server asks once per turn, switchable by an administrator.

``offline`` serves the no-LLM planner (or any local model given at start); the other providers
go through the model registry, so rate limits, retries, the usage ledger and budgets apply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from erp_agent.calls.session import Session
from erp_agent.config import ModelSettings
from erp_agent.errors import ConfigError, ModelError
from erp_agent.models.base import ChatModel, Message
from erp_agent.models.presets import split

if TYPE_CHECKING:
    from erp_agent.models.registry import ModelRegistry

OFFLINE = "offline"
TASK = "reasoning"
PROBE_SECONDS = 20.0


class ModelProvider(Protocol):
    """The provider function: which model serves this session's next turn."""

    def __call__(self, session: Session) -> ChatModel: ...


# The model settings an administrator may set beside the endpoint (checked as the model's
# own settings are, with one line naming a bad one).
TUNING = ("context_window", "timeout", "max_retries", "compact_tools", "max_output_tokens")


class ModelChoice(BaseModel):
    """What an administrator sets. ``api_key`` is write-only: omitted, the current key stays.
    ``model`` may carry a preset (``openai-compatible:gpt-5.5``). Settings left out take their
    defaults for the endpoint (a context window from its model list, or 128k hosted / 8k
    self-hosted)."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    provider: str = Field(OFFLINE, pattern="^(offline|openai|azure|anthropic)$")
    model: str = ""
    base_url: str | None = None
    api_key: SecretStr | None = None
    context_window: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    compact_tools: bool | None = None
    max_output_tokens: int | None = None

    def tuning(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in TUNING if getattr(self, k) is not None}


class ModelSwitch:
    def __init__(
        self,
        local: Callable[[], ChatModel],
        *,
        registry: ModelRegistry | None = None,
        local_name: str = OFFLINE,
    ) -> None:
        self._local = local
        self._local_model: ChatModel | None = None
        self.local_name = local_name
        self._registry = registry
        configured = registry.settings(TASK) if registry is not None else None
        self.provider = configured.provider if configured is not None else OFFLINE
        # What the environment or settings file chose, to go back to from the admin console.
        self.configured = configured
        self.source = "environment"  # or "admin console" once an administrator sets it

    @property
    def registry(self) -> ModelRegistry:
        if self._registry is None:
            # Imported on first use: the provider SDKs take seconds to import on a slow machine,
            # and an offline demo never needs them.
            from erp_agent.models.registry import ModelRegistry

            self._registry = ModelRegistry()
        return self._registry

    def __call__(self, session: Session) -> ChatModel:
        if self.provider == OFFLINE:
            if self._local_model is None:
                self._local_model = self._local()
            return self._local_model
        return self.registry.model(TASK, org=session.org)

    def describe(self) -> dict[str, Any]:
        """The current choice without the key: only whether one is set."""
        if self.provider == OFFLINE:
            return {
                "provider": OFFLINE,
                "model": self.local_name,
                "base_url": None,
                "key_set": False,
            }
        settings = self._settings()
        profile = self.registry.slot(TASK).profile
        return {
            "provider": settings.provider,
            "model": settings.model,
            "preset": settings.preset,
            "base_url": settings.base_url,
            "key_set": settings.api_key is not None or bool(settings.api_key_env),
            **{k: getattr(settings, k) for k in TUNING},
            # What is in force: the window set, else the endpoint's list's, else the default.
            "window_in_use": profile.context_window,
        }

    async def use_configured(self) -> None:
        """Back to the environment's (or settings file's) model."""
        if self.configured is None:
            self.provider = OFFLINE
        else:
            await self.registry.configure(TASK, self.configured)
            self.provider = self.configured.provider
        self.source = "environment"

    async def switch(self, choice: ModelChoice, *, probe: bool = True) -> None:
        """Serve the next turns with ``choice``; with ``probe``, only once it has answered a
        one-token call (ConfigError, naming what failed, otherwise: nothing changes)."""
        if choice.provider == OFFLINE:
            self.provider = OFFLINE
            self.source = "admin console"
            return
        if not choice.model:
            raise ConfigError(f"Name the model to use with provider {choice.provider}.")
        previous = self.registry.settings(TASK)
        key = choice.api_key
        same_endpoint = previous is not None and (previous.provider, previous.base_url) == (
            choice.provider,
            choice.base_url or None,
        )
        if key is None and previous is not None and same_endpoint:
            key = previous.api_key  # a key is never sent to another endpoint than its own
        table: dict[str, Any] = {
            "model": choice.model,
            "base_url": choice.base_url or None,
            "api_key": key,
            **choice.tuning(),
        }
        if not split(choice.model):  # a preset names the protocol itself
            table["provider"] = choice.provider  # validated by ModelChoice's pattern
        try:
            settings = ModelSettings.model_validate(table)
        except ValidationError as exc:
            raise ConfigError(_one_line(exc)) from None
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        model = self.registry.build(settings)
        if probe:
            await try_model(model, settings)
        await self.registry.configure(TASK, settings, model)
        self.provider = settings.provider
        self.source = "admin console"

    def _settings(self) -> ModelSettings:
        settings = self.registry.settings(TASK)
        if settings is None:
            raise ConfigError("No reasoning model is configured.")
        return settings

    async def aclose(self) -> None:
        if self._registry is not None:
            await self._registry.aclose()
        if self._local_model is not None:
            await self._local_model.aclose()


def _one_line(exc: ValidationError) -> str:
    """The first problem of the model's settings, naming the setting."""
    first = exc.errors()[0] if exc.errors() else None
    if first is None:
        return str(exc)
    where = ".".join(str(p) for p in first.get("loc", ())) or "model"
    value = first.get("input")
    got = f" (got {value!r})" if isinstance(value, (str, int, float)) else ""
    return f"{where}: {str(first.get('msg', exc)).removeprefix('Value error, ')}{got}."


async def try_model(model: ChatModel, settings: ModelSettings) -> None:
    """One call of one token; the model is closed if it fails."""
    where = settings.base_url or f"the {settings.provider} default endpoint"
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            await model.complete([Message("user", "Reply with OK.")], max_tokens=1)
    except (ModelError, TimeoutError, ConfigError) as exc:
        await model.aclose()
        reason = str(exc) if not isinstance(exc, TimeoutError) else "no answer in time"
        raise ConfigError(
            f"The model {settings.model} at {where} did not answer a test call ({reason}). "
            "Nothing was changed: check the base URL, the model name and the key."
        ) from exc
