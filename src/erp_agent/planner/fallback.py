"""FallbackModel: the configured model, with the offline planner taking over when the provider
is down, rate-limited or timing out — the user still gets an answer, labelled as such."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from erp_agent.errors import ModelRateLimited, ModelTimeout, ModelUnavailable
from erp_agent.models.base import ChatModel, Completion, Message, StreamDelta
from erp_agent.planner.answer import OFFLINE_NOTE

FALLBACK_ERRORS = (ModelUnavailable, ModelRateLimited, ModelTimeout)


class FallbackModel(ChatModel):
    def __init__(self, primary: ChatModel, offline: ChatModel) -> None:
        self.primary = primary
        self.offline = offline
        self.profile = primary.profile

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        try:
            return await self.primary.complete(
                messages, tools, temperature=temperature, max_tokens=max_tokens
            )
        except FALLBACK_ERRORS:
            return await self._offline(messages, tools)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        """The primary's stream; the planner takes over only before any text was shown."""
        shown = False
        try:
            async for delta in self.primary.stream(
                messages, tools, temperature=temperature, max_tokens=max_tokens
            ):
                shown = shown or bool(delta.text)
                yield delta
            return
        except FALLBACK_ERRORS:
            if shown:
                raise
        completion = await self._offline(messages, tools)
        if completion.content:
            yield StreamDelta(text=completion.content)
        yield StreamDelta(done=completion)

    async def _offline(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> Completion:
        completion = await self.offline.complete(messages, tools)
        if completion.content and not completion.tool_calls:
            completion = replace(completion, content=f"{completion.content}\n\n{OFFLINE_NOTE}")
        return completion

    async def aclose(self) -> None:
        await self.primary.aclose()
        await self.offline.aclose()
