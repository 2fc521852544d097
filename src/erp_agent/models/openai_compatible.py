"""Any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI, OpenRouter, DeepSeek, vLLM, Ollama,
llama.cpp's server) through the official ``openai`` SDK.

The SDK's own retries are off (``max_retries=0``): ``ResilientModel`` retries, so that the rate
gate, the budget and the usage ledger see every attempt.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx2
import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessageParam,
    ChatCompletionToolUnionParam,
)
from openai.types.completion_usage import CompletionUsage

from erp_agent.config import ModelSettings
from erp_agent.errors import ConfigError
from erp_agent.models._errors import map_sdk_error
from erp_agent.models._names import NameMap, encode
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

# Local servers (Ollama, llama.cpp, vLLM) need no key, but the SDK refuses to start without one
# and would otherwise read OPENAI_API_KEY from the environment, sending it to a foreign host.
_NO_KEY = "no-key"


class OpenAICompatibleModel(ChatModel):
    def __init__(
        self, settings: ModelSettings, *, http_client: httpx2.AsyncClient | None = None
    ) -> None:
        self.settings = settings
        self.profile = ModelProfile(
            name=f"{settings.provider}:{settings.model}",
            supports_prompt_cache=True,  # OpenAI caches long prefixes automatically
            context_window=settings.context_window,
            strict_tool_schemas=settings.strict_tools,
        )
        self._client = _client(settings, http_client)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        names, wire_tools = self._tools(tools)
        legacy_limit, limit = self._limits(max_tokens)
        try:
            response: ChatCompletion = await self._client.chat.completions.create(
                model=self.settings.model,
                messages=wire_messages(messages),
                tools=wire_tools or openai.omit,
                temperature=openai.omit if temperature is None else temperature,
                max_tokens=legacy_limit,
                max_completion_tokens=limit,
            )
        except openai.OpenAIError as exc:
            raise map_sdk_error(exc) from exc
        return _completion(response, names)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        names, wire_tools = self._tools(tools)
        legacy_limit, limit = self._limits(max_tokens)
        assembler = _StreamAssembler(names, model=self.settings.model)
        try:
            chunks = await self._client.chat.completions.create(
                model=self.settings.model,
                messages=wire_messages(messages),
                tools=wire_tools or openai.omit,
                temperature=openai.omit if temperature is None else temperature,
                max_tokens=legacy_limit,
                max_completion_tokens=limit,
                stream=True,
                stream_options=(
                    {"include_usage": True} if self.settings.stream_usage else openai.omit
                ),
            )
            async for chunk in chunks:
                text = assembler.add(chunk)
                if text:
                    yield StreamDelta(text=text)
        except openai.OpenAIError as exc:
            raise map_sdk_error(exc) from exc
        yield StreamDelta(done=assembler.completion())

    async def aclose(self) -> None:
        await self._client.close()

    def _limits(self, max_tokens: int | None) -> tuple[int | openai.Omit, int | openai.Omit]:
        """(max_tokens, max_completion_tokens): OpenAI's own API and Azure refuse the first for
        reasoning models; other compatible servers know only the first."""
        if max_tokens is None:
            return openai.omit, openai.omit
        if self.settings.provider == "azure" or self.settings.base_url is None:
            return openai.omit, max_tokens
        return max_tokens, openai.omit

    def _tools(self, tools: Sequence[dict[str, Any]]) -> tuple[NameMap, list[Any]]:
        specs = tool_specs(tools, strict=self.settings.strict_tools)
        wire = []
        for spec in specs:
            function: dict[str, Any] = {
                "name": spec.wire_name,
                "description": spec.description,
                "parameters": spec.parameters,
            }
            if self.settings.strict_tools:
                function["strict"] = True
            wire.append({"type": "function", "function": function})
        return NameMap(s.name for s in specs), cast("list[ChatCompletionToolUnionParam]", wire)


def wire_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """Our messages in the chat-completions shape, tool names encoded for the wire."""
    out = []
    for message in messages:
        wire = message.to_openai()
        for call in wire.get("tool_calls", ()):
            call["function"]["name"] = encode(call["function"]["name"])
        out.append(wire)
    return cast("list[ChatCompletionMessageParam]", out)


def _client(settings: ModelSettings, http_client: httpx2.AsyncClient | None) -> openai.AsyncOpenAI:
    key = settings.key() or _NO_KEY
    common: dict[str, Any] = {
        "api_key": key,
        "timeout": settings.timeout,
        "max_retries": 0,
        "default_headers": settings.headers or None,
        "http_client": http_client,
    }
    if settings.provider == "azure":
        if not settings.base_url or not settings.api_version:
            raise ConfigError(
                "An Azure OpenAI model needs base_url (https://RESOURCE.openai.azure.com) and "
                "api_version (for example 2024-10-21); see docs/configuration.md."
            )
        return openai.AsyncAzureOpenAI(
            azure_endpoint=settings.base_url,
            azure_deployment=settings.deployment,
            api_version=settings.api_version,
            **common,
        )
    return openai.AsyncOpenAI(base_url=settings.base_url, **common)


def _usage(usage: CompletionUsage | None) -> Usage:
    if usage is None:
        return Usage()
    # Servers other than OpenAI's omit the details or send null for the count; DeepSeek
    # reports cache hits in a field of its own.
    cached = getattr(usage.prompt_tokens_details, "cached_tokens", None) or 0
    if not cached and usage.model_extra:
        cached = int(usage.model_extra.get("prompt_cache_hit_tokens") or 0)
    return Usage(
        prompt_tokens=usage.prompt_tokens,
        cached_tokens=cached,
        completion_tokens=usage.completion_tokens,
    )


def _completion(response: ChatCompletion, names: NameMap) -> Completion:
    choice = response.choices[0]
    calls = [
        ToolCall(call.id, names.decode(call.function.name), call.function.arguments)
        for call in choice.message.tool_calls or ()
        if call.type == "function"
    ]
    return Completion(
        content=choice.message.content,
        tool_calls=calls,
        usage=_usage(response.usage),
        model=response.model,
        # Typed as always set, but compatible servers send null (the SDK does not validate).
        finish_reason=cast("str | None", choice.finish_reason) or "",
    )


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _StreamAssembler:
    """Puts streamed deltas back together: text pieces, and tool calls whose id and name come in
    the first delta of their index and whose JSON arguments arrive in fragments."""

    def __init__(self, names: NameMap, *, model: str) -> None:
        self._names = names
        self._text: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._usage = Usage()
        self._model = model
        self._finish = ""

    def add(self, chunk: ChatCompletionChunk) -> str:
        self._model = chunk.model or self._model
        if chunk.usage is not None:  # the final chunk (stream_options.include_usage)
            self._usage = _usage(chunk.usage)
        text = ""
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text += delta.content
            for part in delta.tool_calls or ():
                call = self._calls.setdefault(part.index, _PartialCall())
                call.id = part.id or call.id
                if part.function is not None:
                    call.name = part.function.name or call.name
                    call.arguments.append(part.function.arguments or "")
            if choice.finish_reason:
                self._finish = choice.finish_reason
        self._text.append(text)
        return text

    def completion(self) -> Completion:
        calls = [
            ToolCall(c.id, self._names.decode(c.name), "".join(c.arguments))
            for _, c in sorted(self._calls.items())
        ]
        return Completion(
            content="".join(self._text) or None,
            tool_calls=calls,
            usage=self._usage,
            model=self._model,
            finish_reason=self._finish,
        )
