"""The ChatModel interface: messages and tool definitions in, content or tool calls out.

The messages follow the OpenAI chat shape (role system/user/assistant/tool; an assistant
message may carry tool_calls; each tool message answers one tool_call_id), which every provider
adapter translates to and from.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, exactly as the model produced it (may be malformed)


@dataclass(frozen=True)
class Message:
    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # for role == "tool"
    name: str | None = None  # the tool's name, for role == "tool"
    cache_breakpoint: bool = False  # the stable prefix ends here (providers that support caching)
    images: tuple[str, ...] = ()  # data: URLs (image/png;base64) sent with a user message

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.images:
            out["content"] = [
                {"type": "text", "text": self.content or ""},
                *({"type": "image_url", "image_url": {"url": url}} for url in self.images),
            ]
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


@dataclass
class Usage:
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cache_write_tokens: int = 0  # prompt tokens written to the provider's cache (Anthropic)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.cached_tokens + other.cached_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Completion:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str = ""

    def as_message(self) -> Message:
        return Message("assistant", self.content, tuple(self.tool_calls))


@dataclass(frozen=True)
class StreamDelta:
    """A piece of a streamed completion: text, or (at the end) the whole Completion."""

    text: str = ""
    done: Completion | None = None


@dataclass(frozen=True)
class ModelProfile:
    """What a provider/model can do; the engine reads flags here instead of isinstance checks."""

    name: str
    supports_tools: bool = True
    supports_streaming: bool = True
    supports_prompt_cache: bool = False
    supports_temperature: bool = True  # False: a temperature passed to complete() is ignored
    context_window: int = 128_000
    strict_tool_schemas: bool = False
    # Reads every tool it is offered at no cost (a planner in process, not a paid context):
    # routing's narrowing saves it nothing and only hides the tool a question needed.
    reads_every_tool: bool = False


class ChatModel(ABC):
    """One method a provider must write: ``complete``. Streaming has a default built on it."""

    profile: ModelProfile

    @abstractmethod
    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion: ...

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamDelta]:
        completion = await self.complete(
            messages, tools, temperature=temperature, max_tokens=max_tokens
        )
        if completion.content:
            yield StreamDelta(text=completion.content)
        yield StreamDelta(done=completion)

    async def prepare(self) -> ModelProfile:
        """The profile, once the endpoint has said what it knows of itself (a provider may
        read its context window from the endpoint's model list here, once). Cheap after the
        first call; the engine awaits it before a turn's first request."""
        return self.profile

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
