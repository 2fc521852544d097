"""Test doubles for code that uses a ChatModel, and the guard that keeps tests off real providers.

model = ScriptedModel(
    ScriptedModel.call("customer.list", {"limit": 5}),
    ScriptedModel.reply("You have 5 customers."),
)
...
assert model.requests[0].tool_names == ["customer.list"]
"""

from __future__ import annotations

import ipaddress
import json
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import httpx
import httpx2

from erp_agent.errors import ModelRequestBlocked
from erp_agent.models.base import (
    ChatModel,
    Completion,
    Message,
    ModelProfile,
    StreamDelta,
    ToolCall,
    Usage,
)

# A step may also be a function of the messages so far: it can read a result id a tool returned.
Step = Completion | BaseException | Callable[[Sequence[Message]], Completion]


@dataclass(frozen=True)
class ScriptedRequest:
    """What one call to a ScriptedModel was sent."""

    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...]
    temperature: float | None
    max_tokens: int | None

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]

    @property
    def last(self) -> Message:
        return self.messages[-1]


class ScriptedModel(ChatModel):
    """Answers with scripted steps in order (a Completion, or an exception to raise) and records
    every request. Running out of steps fails the test with the conversation so far."""

    def __init__(self, *steps: Step, profile: ModelProfile | None = None) -> None:
        self.profile = profile or ModelProfile(name="scripted")
        self._steps: deque[Step] = deque(steps)
        self.requests: list[ScriptedRequest] = []

    def then(self, *steps: Step) -> ScriptedModel:
        self._steps.extend(steps)
        return self

    @property
    def remaining(self) -> int:
        return len(self._steps)

    @staticmethod
    def reply(text: str, *, usage: Usage | None = None) -> Completion:
        return Completion(text, usage=usage or Usage(), model="scripted", finish_reason="stop")

    @staticmethod
    def call(
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        id: str | None = None,
        text: str | None = None,
        usage: Usage | None = None,
    ) -> Completion:
        """A completion calling one tool; ``arguments`` as a dict, or raw (maybe malformed) JSON."""
        return ScriptedModel.calls((name, arguments or {}), id=id, text=text, usage=usage)

    @staticmethod
    def calls(
        *calls: tuple[str, dict[str, Any] | str],
        id: str | None = None,
        text: str | None = None,
        usage: Usage | None = None,
    ) -> Completion:
        """A completion calling several tools at once (parallel tool calls)."""
        made = [
            ToolCall(
                f"{id}_{i}" if id and len(calls) > 1 else id or f"call_{uuid.uuid4().hex[:10]}",
                name,
                args if isinstance(args, str) else json.dumps(args),
            )
            for i, (name, args) in enumerate(calls)
        ]
        return Completion(text, made, usage or Usage(), "scripted", "tool_calls")

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        self.requests.append(
            ScriptedRequest(tuple(messages), tuple(tools), temperature, max_tokens)
        )
        if not self._steps:
            seen = "\n".join(f"  {m.role}: {m.content!r}" for m in messages)
            raise AssertionError(
                f"ScriptedModel has no step left for call {len(self.requests)}; "
                f"add one with .then(...). It was sent:\n{seen}"
            )
        step = self._steps.popleft()
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            return step(messages)
        return step

    @staticmethod
    def last_result_id(messages: Sequence[Message]) -> str:
        """The result_id of the newest tool result (for a step that displays it)."""
        for message in reversed(messages):
            if message.role == "tool" and message.content and '"result_id"' in message.content:
                return str(json.loads(message.content)["result_id"])
        raise AssertionError("no tool result with a result_id in the conversation")

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
        for word in (completion.content or "").split(" "):  # word by word, like a real stream
            if word:
                yield StreamDelta(text=word + " ")
        yield StreamDelta(done=completion)


class Recording(ChatModel):
    """Another model, with every request kept as sent (what a prefix cache would see)."""

    def __init__(self, inner: ChatModel, *, routed: bool = False) -> None:
        """``routed``: sent the tools routing picks even when ``inner`` reads every tool (the
        planner standing in for a paid model, to measure what such a model is sent)."""
        self.inner = inner
        self.routed = routed
        self.profile = self._as_sent(inner.profile)
        self.requests: list[tuple[list[Message], list[dict[str, Any]]]] = []

    def _as_sent(self, profile: ModelProfile) -> ModelProfile:
        return replace(profile, reads_every_tool=False) if self.routed else profile

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        self.requests.append((list(messages), list(tools)))
        return await self.inner.complete(messages, tools)

    async def prepare(self) -> ModelProfile:
        self.profile = self._as_sent(await self.inner.prepare())
        return self.profile


class FakeClock:
    """A clock for the rate gate and retries: ``sleep`` advances time at once and is recorded."""

    def __init__(self, start: float = 0.0) -> None:
        self.time = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.time += seconds


# --- the guard against real providers -------------------------------------------------------


@dataclass
class BlockedRequests:
    """URLs a guarded block tried to reach; a fixture can fail the test if any are listed."""

    urls: list[str] = field(default_factory=list)


def is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_R = TypeVar("_R")


@contextmanager
def block_real_providers(allow_hosts: Iterable[str] = ()) -> Iterator[BlockedRequests]:
    """While active, any real HTTP request (httpx or httpx2, which the openai and anthropic SDKs
    use) to a host that is not loopback raises ModelRequestBlocked. Mock transports (httpx's or
    httpx2's MockTransport) are not network and pass untouched."""
    allowed = set(allow_hosts)
    blocked = BlockedRequests()

    def check(request: httpx.Request | httpx2.Request) -> None:
        host = request.url.host
        if host in allowed or is_loopback(host):
            return
        blocked.urls.append(str(request.url))
        raise ModelRequestBlocked(
            f"A test tried to reach {request.url.scheme}://{host}, which is not a loopback "
            "address. Tests must not call real model providers: use "
            "erp_agent.models.testing.ScriptedModel or erp_agent.models.fake_server."
        )

    def sync(original: Callable[[Any, Any], _R]) -> Callable[[Any, Any], _R]:
        def handle(transport: Any, request: Any) -> _R:
            check(request)
            return original(transport, request)

        return handle

    def async_(
        original: Callable[[Any, Any], Awaitable[_R]],
    ) -> Callable[[Any, Any], Awaitable[_R]]:
        async def handle(transport: Any, request: Any) -> _R:
            check(request)
            return await original(transport, request)

        return handle

    targets: list[tuple[type[Any], str, Callable[[Any], Any]]] = [
        (httpx.HTTPTransport, "handle_request", sync),
        (httpx.AsyncHTTPTransport, "handle_async_request", async_),
        (httpx2.HTTPTransport, "handle_request", sync),
        (httpx2.AsyncHTTPTransport, "handle_async_request", async_),
    ]
    originals = [(cls, name, cls.__dict__[name]) for cls, name, _ in targets]
    for cls, name, wrap in targets:
        setattr(cls, name, wrap(cls.__dict__[name]))
    try:
        yield blocked
    finally:
        for cls, name, original in reversed(originals):
            setattr(cls, name, original)
