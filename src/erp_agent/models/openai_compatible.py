"""Any OpenAI-compatible chat endpoint (OpenAI, Azure OpenAI, OpenRouter, DeepSeek, vLLM, Ollama,
llama.cpp's server) through the official ``openai`` SDK.

The SDK's own retries are off (``max_retries=0``): ``ResilientModel`` retries, so that the rate
gate, the budget and the usage ledger see every attempt.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import httpx
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
from erp_agent.errors import ConfigError, ModelError, ModelUnavailable
from erp_agent.models import replies
from erp_agent.models._errors import map_sdk_error
from erp_agent.models._fit import fit
from erp_agent.models._names import NameMap, encode
from erp_agent.models._quirks import refuses_stream_options, refuses_tool_role, without_tool_role
from erp_agent.models._schemas import tool_specs
from erp_agent.models._stream_text import TextGate
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
            supports_prompt_cache=True,  # OpenAI caches long prefixes; vLLM, llama.cpp reuse them
            context_window=settings.window,
            strict_tool_schemas=settings.strict_tools,
        )
        self._client = _client(settings, http_client)
        # Learned from the server's refusals (see _quirks), then kept for this client.
        self.tool_role = settings.tool_role is not False
        self.stream_usage = settings.stream_usage
        # A window not set is read once from the endpoint's model list (``prepare``).
        self._window_known = settings.context_window is not None or not _lists_models(settings)

    async def prepare(self) -> ModelProfile:
        if not self._window_known:
            self._window_known = True
            found = await listed_window(self._client, self.settings.model)
            if found is not None:
                self.profile = replace(self.profile, context_window=found)
        return self.profile

    def _fit(self, tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return fit(tools, self.profile.context_window, self.settings.compact_tools)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        await self.prepare()
        tools = self._fit(tools)
        names, wire_tools = self._tools(tools)

        async def once(request: Sequence[Message]) -> Completion:
            response = await self._create(request, wire_tools, temperature, max_tokens)
            return _completion(cast("ChatCompletion", response), names)

        return await replies.settle(await once(messages), messages, tools, once)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        await self.prepare()
        tools = self._fit(tools)
        names, wire_tools = self._tools(tools)
        assembler = _StreamAssembler(names, model=self.settings.model)
        # Text that may be a tool call written out is held back until the answer is complete.
        gate = TextGate(enabled=bool(tools))
        chunks = cast(
            "openai.AsyncStream[ChatCompletionChunk]",
            await self._create(messages, wire_tools, temperature, max_tokens, stream=True),
        )
        try:
            async for chunk in chunks:
                shown = gate.feed(assembler.add(chunk))
                if shown:
                    yield StreamDelta(text=shown)
                if assembler.size > replies.MAX_REPLY_CHARS:
                    await chunks.close()  # a runaway answer: stop reading it now
                    replies.check_size(assembler.completion())
        except (openai.OpenAIError, httpx2.HTTPError, httpx.HTTPError) as exc:
            raise _broke_off(f"{type(exc).__name__}: {exc}") from exc
        if not assembler.finished:
            raise _broke_off("the stream ended without a finish reason")

        async def once(request: Sequence[Message]) -> Completion:
            response = await self._create(request, wire_tools, temperature, max_tokens)
            return _completion(cast("ChatCompletion", response), names)

        completion = await replies.settle(assembler.completion(), messages, tools, once)
        rest = gate.rest(completion)
        if rest:
            yield StreamDelta(text=rest)
        yield StreamDelta(done=completion)

    async def _create(
        self,
        messages: Sequence[Message],
        wire_tools: list[Any],
        temperature: float | None,
        max_tokens: int | None,
        *,
        stream: bool = False,
    ) -> ChatCompletion | openai.AsyncStream[ChatCompletionChunk]:
        """One request. A server that refuses the tool role or ``stream_options`` is asked
        again in the form it takes, and the form is kept for later calls."""
        legacy_limit, limit = self._limits(max_tokens)
        while True:
            # The request body as the server reads it. Sent through the client's own ``post``
            # (auth, timeouts, error mapping, SSE parsing as in ``create``), which skips the
            # SDK's walk of every typed parameter: with 26 tool schemas and a long history that
            # walk took about a third of a turn's CPU, and our dicts are already wire-shaped.
            body: dict[str, Any] = {"model": self.settings.model, "messages": self._wire(messages)}
            if wire_tools:
                body["tools"] = wire_tools
            if temperature is not None:
                body["temperature"] = temperature
            if legacy_limit is not None:
                body["max_tokens"] = legacy_limit
            if limit is not None:
                body["max_completion_tokens"] = limit
            if stream:
                body["stream"] = True
                if self.stream_usage:
                    body["stream_options"] = {"include_usage": True}
            try:
                return await self._client.post(
                    "/chat/completions",
                    body=body,
                    options={"security": {"bearer_auth": True}},
                    cast_to=ChatCompletion,
                    stream=stream,
                    stream_cls=openai.AsyncStream[ChatCompletionChunk],
                )
            except openai.OpenAIError as exc:
                error = map_sdk_error(exc)
                if not isinstance(error, ModelError):
                    raise error from exc
                if self.tool_role and _has_tool_turns(messages) and refuses_tool_role(error):
                    self.tool_role = False
                    continue
                if stream and self.stream_usage and refuses_stream_options(error):
                    self.stream_usage = False
                    continue
                raise error from exc
            except (httpx2.HTTPError, httpx.HTTPError) as exc:
                raise ModelUnavailable(detail=f"{type(exc).__name__}: {exc}") from exc

    def _wire(self, messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
        if self.tool_role:
            return wire_messages(messages)
        return cast("list[ChatCompletionMessageParam]", without_tool_role(messages))

    async def aclose(self) -> None:
        await self._client.close()

    def _limits(self, max_tokens: int | None) -> tuple[int | None, int | None]:
        """(max_tokens, max_completion_tokens), None for not sent: OpenAI's own API and Azure
        refuse the first for reasoning models; other compatible servers know only the first."""
        if max_tokens is None:
            return None, None
        if self.settings.provider == "azure" or self.settings.base_url is None:
            return None, max_tokens
        return max_tokens, None

    def _tools(self, tools: Sequence[dict[str, Any]]) -> tuple[NameMap, list[Any]]:
        specs = tool_specs(tools, strict=self.settings.strict_tools)
        wire = wire_tools(tools, strict=self.settings.strict_tools)
        return NameMap(s.name for s in specs), cast("list[ChatCompletionToolUnionParam]", wire)


def wire_tools(tools: Sequence[dict[str, Any]], *, strict: bool = False) -> list[dict[str, Any]]:
    """The tools array as the server receives it: tool names encoded for the wire."""
    wire = []
    for spec in tool_specs(tools, strict=strict):
        function: dict[str, Any] = {
            "name": spec.wire_name,
            "description": spec.description,
            "parameters": spec.parameters,
        }
        if strict:
            function["strict"] = True
        wire.append({"type": "function", "function": function})
    return wire


def wire_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """Our messages in the chat-completions shape, tool names encoded for the wire."""
    out = []
    for message in messages:
        wire = message.to_openai()
        for call in wire.get("tool_calls", ()):
            call["function"]["name"] = encode(call["function"]["name"])
        out.append(wire)
    return cast("list[ChatCompletionMessageParam]", out)


# Where model lists say how many tokens a model reads: OpenRouter and Together
# (context_length), vLLM (max_model_len), LM Studio (max_context_length), LiteLLM-style
# gateways (context_window, max_input_tokens), OpenRouter's provider entry.
_WINDOW_KEYS = ("context_length", "max_model_len", "max_context_length", "context_window",
                "max_input_tokens")  # fmt: skip
LIST_TIMEOUT = 5.0  # seconds for the model list; without an answer the default window holds


def _lists_models(settings: ModelSettings) -> bool:
    """Whether the endpoint may list its models' windows: any compatible server or gateway
    (OpenAI's own API and Azure list none)."""
    return settings.provider == "openai" and settings.base_url is not None


async def listed_window(client: openai.AsyncOpenAI, model: str) -> int | None:
    """The context window the endpoint's ``/models`` gives ``model``, or None (not listed,
    no answer, not a model list)."""
    try:
        body = await client.with_options(timeout=LIST_TIMEOUT, max_retries=0).get(
            "/models", cast_to=object
        )
    except (openai.OpenAIError, httpx2.HTTPError, httpx.HTTPError):
        return None
    entries = body.get("data") if isinstance(body, dict) else body
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") == model:
            return _window_of(entry)
    return None


def _window_of(entry: dict[str, Any]) -> int | None:
    places = [entry, entry.get("top_provider"), entry.get("meta"), entry.get("model_info")]
    for place in places:
        if not isinstance(place, dict):
            continue
        for key in _WINDOW_KEYS:
            value = place.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def _broke_off(detail: str) -> ModelUnavailable:
    return ModelUnavailable(
        "The AI model's answer broke off before it was complete (the server closed the "
        "connection). Please try again.",
        detail=f"stream ended early: {detail}",
    )


def _has_tool_turns(messages: Sequence[Message]) -> bool:
    return any(m.role == "tool" or m.tool_calls for m in messages)


def _client(settings: ModelSettings, http_client: httpx2.AsyncClient | None) -> openai.AsyncOpenAI:
    key = settings.key() or _NO_KEY
    common: dict[str, Any] = {
        "api_key": key,
        # A little longer than ResilientModel's own limit, whose message names the setting.
        "timeout": settings.timeout + 5,
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


def _usage(usage: CompletionUsage | None, extra: dict[str, Any] | None = None) -> Usage:
    if usage is None:
        return Usage()
    # Servers other than OpenAI's omit the details or send null for the count; DeepSeek
    # reports cache hits in a field of its own, llama.cpp in its timings (prompt tokens
    # reused from the slot's cache).
    cached = getattr(usage.prompt_tokens_details, "cached_tokens", None) or 0
    if not cached and usage.model_extra:
        cached = int(usage.model_extra.get("prompt_cache_hit_tokens") or 0)
    timings = (extra or {}).get("timings")
    if not cached and isinstance(timings, dict):
        cached = int(timings.get("cache_n") or 0)
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
        usage=_usage(response.usage, response.model_extra),
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
        self._size = 0

    def add(self, chunk: ChatCompletionChunk) -> str:
        self._model = chunk.model or self._model
        if chunk.usage is not None:  # the final chunk (stream_options.include_usage)
            self._usage = _usage(chunk.usage, chunk.model_extra)
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
        self._size += len(text) + sum(
            len(part.function.arguments or "")
            for choice in chunk.choices
            for part in choice.delta.tool_calls or ()
            if part.function is not None
        )
        return text

    @property
    def finished(self) -> bool:
        return bool(self._finish)

    @property
    def size(self) -> int:
        return self._size

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
