"""Anthropic's Messages API through the official ``anthropic`` SDK (SDK retries off, as for
OpenAI: ``ResilientModel`` retries). Translation lives in ``_anthropic_wire``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic
import httpx2
from anthropic.types import (
    InputJSONDelta,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    TextDelta,
    ToolUseBlock,
)

from erp_agent.config import ModelSettings
from erp_agent.models._anthropic_wire import (
    STOP_REASONS,
    completion_from_anthropic,
    to_anthropic,
    tools_to_anthropic,
    usage_from_anthropic,
)
from erp_agent.models._errors import map_sdk_error
from erp_agent.models._names import NameMap
from erp_agent.models._schemas import tool_specs
from erp_agent.models.base import (
    ChatModel,
    Completion,
    Message,
    ModelProfile,
    StreamDelta,
    ToolCall,
    Usage,
)


class AnthropicModel(ChatModel):
    def __init__(
        self, settings: ModelSettings, *, http_client: httpx2.AsyncClient | None = None
    ) -> None:
        self.settings = settings
        self.profile = ModelProfile(
            name=f"anthropic:{settings.model}",
            supports_prompt_cache=True,
            supports_temperature=False,
            context_window=settings.window,
            strict_tool_schemas=settings.strict_tools,
        )
        self._client = anthropic.AsyncAnthropic(
            api_key=settings.key(),
            base_url=settings.base_url,
            timeout=settings.timeout,
            max_retries=0,
            default_headers=settings.headers or None,
            http_client=http_client,
        )

    def request(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        max_tokens: int | None = None,
    ) -> tuple[NameMap, dict[str, Any]]:
        """The keyword arguments for ``messages.create`` (public so tests can inspect them)."""
        specs = tool_specs(tools, strict=self.settings.strict_tools)
        system, wire = to_anthropic(messages)
        params: dict[str, Any] = {
            "model": self.settings.model,
            "messages": wire,
            "max_tokens": max_tokens or self.settings.max_output_tokens,
        }
        if system:
            params["system"] = system
        if specs:
            params["tools"] = tools_to_anthropic(specs, strict=self.settings.strict_tools)
        # No temperature: the current Messages API (and SDK) dropped sampling parameters, so
        # the profile says so and a caller's value is ignored rather than refused.
        return NameMap(s.name for s in specs), params

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        names, params = self.request(messages, tools, max_tokens)
        try:
            response = await self._client.messages.create(**params)
        except anthropic.AnthropicError as exc:
            raise map_sdk_error(exc) from exc
        return completion_from_anthropic(response, names)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        names, params = self.request(messages, tools, max_tokens)
        texts: list[str] = []
        calls: dict[int, tuple[str, str, list[str]]] = {}  # block index → id, name, JSON parts
        usage, model, reason = Usage(), self.settings.model, ""
        try:
            events = await self._client.messages.create(**params, stream=True)
            async for event in events:
                if isinstance(event, RawMessageStartEvent):
                    usage, model = usage_from_anthropic(event.message.usage), event.message.model
                elif isinstance(event, RawContentBlockStartEvent):
                    block = event.content_block
                    if isinstance(block, ToolUseBlock):
                        calls[event.index] = (block.id, block.name, [])
                elif isinstance(event, RawContentBlockDeltaEvent):
                    if isinstance(event.delta, TextDelta):
                        texts.append(event.delta.text)
                        yield StreamDelta(text=event.delta.text)
                    elif isinstance(event.delta, InputJSONDelta):
                        calls[event.index][2].append(event.delta.partial_json)
                elif isinstance(event, RawMessageDeltaEvent):
                    reason = event.delta.stop_reason or reason
                    usage.completion_tokens = event.usage.output_tokens  # cumulative
        except anthropic.AnthropicError as exc:
            raise map_sdk_error(exc) from exc
        tool_calls = [
            ToolCall(id, names.decode(name), _arguments(parts))
            for _, (id, name, parts) in sorted(calls.items())
        ]
        completion = Completion(
            "".join(texts) or None, tool_calls, usage, model, STOP_REASONS.get(reason, reason)
        )
        yield StreamDelta(done=completion)

    async def aclose(self) -> None:
        await self._client.close()


def _arguments(parts: list[str]) -> str:
    # A tool with no input streams no JSON at all; the SDK's non-streamed form would give {}.
    text = "".join(parts)
    return text if text.strip() else json.dumps({})
