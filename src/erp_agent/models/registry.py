"""Which model serves which task, replaceable while the process runs.

An administrator changes a provider, model or key; ``configure`` builds the new client and swaps
it in with one assignment. Calls already running finish on the old client, which is closed when
the last of them returns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from erp_agent.config import ModelSettings, Settings
from erp_agent.errors import ConfigError
from erp_agent.models.base import ChatModel, Completion, Message, ModelProfile, StreamDelta
from erp_agent.models.limits import Clock, RateGate, TokenRateGate
from erp_agent.models.resilience import ResilientModel, RetryPolicy, UsageEvent
from erp_agent.models.usage import BudgetCheck, InMemoryUsageLedger, UsageLedger

TASKS = ("reasoning", "vision")  # embeddings: Settings.retrieval

ModelFactory = Callable[[ModelSettings], ChatModel]


def build_model(settings: ModelSettings) -> ChatModel:
    # Each SDK takes seconds to import: load only the configured provider's.
    if settings.provider == "anthropic":
        from erp_agent.models.anthropic import AnthropicModel

        return AnthropicModel(settings)
    from erp_agent.models.openai_compatible import OpenAICompatibleModel

    return OpenAICompatibleModel(settings)


@dataclass
class _Lease:
    model: ChatModel
    in_flight: int = 0
    retired: bool = False


class ModelSlot(ChatModel):
    """A stable handle on whichever model currently serves a task."""

    def __init__(self, model: ChatModel, settings: ModelSettings | None = None) -> None:
        self._lease = _Lease(model)
        self.settings = settings
        self.profile = model.profile

    @property
    def current(self) -> ChatModel:
        return self._lease.model

    async def replace(self, model: ChatModel, settings: ModelSettings | None = None) -> None:
        old, self._lease, self.settings = self._lease, _Lease(model), settings
        self.profile = model.profile
        old.retired = True
        if old.in_flight == 0:
            await old.model.aclose()

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        lease = self._take()
        try:
            return await lease.model.complete(
                messages, tools, temperature=temperature, max_tokens=max_tokens
            )
        finally:
            await self._give_back(lease)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        lease = self._take()
        try:
            async for delta in lease.model.stream(
                messages, tools, temperature=temperature, max_tokens=max_tokens
            ):
                yield delta
        finally:
            await self._give_back(lease)

    async def prepare(self) -> ModelProfile:
        lease = self._take()
        try:
            profile = await lease.model.prepare()
        finally:
            await self._give_back(lease)
        if lease is self._lease:
            self.profile = profile
        return profile

    async def aclose(self) -> None:
        self._lease.retired = True
        await self._lease.model.aclose()

    def _take(self) -> _Lease:
        lease = self._lease
        lease.in_flight += 1
        return lease

    async def _give_back(self, lease: _Lease) -> None:
        lease.in_flight -= 1
        if lease.retired and lease.in_flight == 0:
            await lease.model.aclose()


class ModelRegistry:
    """Models per task, with the process-wide rate gate and monthly budget."""

    def __init__(
        self,
        *,
        factory: ModelFactory = build_model,
        gate: RateGate | None = None,
        ledger: UsageLedger | None = None,
        monthly_token_budget: int | None = None,
        budget: BudgetCheck | None = None,
        on_usage: Callable[[UsageEvent], None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._factory = factory
        self._slots: dict[str, ModelSlot] = {}
        self.gate = gate
        # A ledger only where no store counts usage (the runtime sets ``budget``, the one check).
        if ledger is None and monthly_token_budget is not None and budget is None:
            ledger = InMemoryUsageLedger()
        self.ledger = ledger
        self.monthly_token_budget = monthly_token_budget
        self.budget = budget  # when set, the one budget check (the store's), instead of the ledger
        self.on_usage = on_usage
        self.clock = clock

    def count_in(self, budget: BudgetCheck) -> None:
        """Check every call against ``budget`` (the store's) and keep no ledger of this process's
        own: usage is counted where the budget reads it."""
        self.budget = budget
        self.ledger = None

    @classmethod
    def from_settings(
        cls, settings: Settings, *, factory: ModelFactory = build_model
    ) -> ModelRegistry:
        registry = cls(
            factory=factory,
            gate=TokenRateGate(settings.tokens_per_minute) if settings.tokens_per_minute else None,
            monthly_token_budget=settings.monthly_token_budget,
        )
        for task in TASKS:
            model_settings: ModelSettings | None = getattr(settings, f"{task}_model")
            if model_settings is not None:
                registry._slots[task] = ModelSlot(factory(model_settings), model_settings)
        return registry

    def build(self, settings: ModelSettings) -> ChatModel:
        """A client for ``settings`` that serves nothing yet (e.g. to be tried first)."""
        return self._factory(settings)

    async def configure(
        self, task: str, settings: ModelSettings, model: ChatModel | None = None
    ) -> None:
        """Serve ``task`` with ``model`` (default: one built from ``settings``) from the next
        call on."""
        model = model or self._factory(settings)
        slot = self._slots.get(task)
        if slot is None:
            self._slots[task] = ModelSlot(model, settings)
        else:
            await slot.replace(model, settings)

    def settings(self, task: str) -> ModelSettings | None:
        slot = self._slots.get(task)
        return slot.settings if slot else None

    def slot(self, task: str) -> ModelSlot:
        slot = self._slots.get(task)
        if slot is None:
            variable = f"ERP_AGENT_{task.upper()}_MODEL"
            raise ConfigError(
                f"No model is configured for {task!r}. Set {variable}__MODEL (and "
                f"{variable}__BASE_URL, {variable}__API_KEY_ENV) or {variable} as JSON; "
                "see docs/configuration.md."
            )
        return slot

    def model(self, task: str, *, org: str) -> ResilientModel:
        """The model for ``task`` as ``org`` uses it: timeout, retries, rate gate and budget.
        Cheap: take one per turn. Timeout and retries follow the task's current settings."""
        slot = self.slot(task)
        settings = slot.settings
        return ResilientModel(
            slot,
            org=org,
            timeout=settings.timeout if settings else 60.0,
            retry=RetryPolicy(max_retries=settings.max_retries) if settings else None,
            gate=self.gate,
            ledger=self.ledger,
            monthly_token_budget=self.monthly_token_budget,
            budget=self.budget,
            on_usage=self.on_usage,
            clock=self.clock,
            timeout_setting=f"ERP_AGENT_{task.upper()}_MODEL__TIMEOUT",
        )

    async def aclose(self) -> None:
        for slot in self._slots.values():
            await slot.aclose()
