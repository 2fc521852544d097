"""An OpenAI-compatible chat server for provider tests: real HTTP on a loopback port, answers
from a script, and the real API's rules enforced (see ``_fake_rules``).

    server = FakeOpenAIServer(api_key="test-key", context_limit=4000)
    server.enqueue(FakeReply.call("customer.list", {"limit": 5}), FakeReply.text("Done."))
    with server.running() as url:  # url ends in /v1, ready for base_url
        ...
    server.requests  # the JSON bodies it was sent

It serves ``/v1/chat/completions`` and Azure's ``/openai/deployments/{name}/chat/completions``
(which also requires ``api-version`` and an ``api-key`` header).

``quirks`` imitate what self-hosted servers do (see ``QUIRKS``):

    FakeOpenAIServer(quirks={"text_calls_tagged", "no_tool_role", "no_usage"})
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from erp_agent.models import _fake_rules as rules
from erp_agent.models._names import encode
from erp_agent.models.base import ChatModel, Message, ToolCall

Responder = Callable[[dict[str, Any]], Awaitable["FakeReply"]]

QUIRKS = {
    # The model's tool calls come back written in the content, not as tool_calls (a server
    # without a tool-call parser for the model): as Hermes/Qwen tags, or as fenced JSON.
    "text_calls_tagged": "tool calls written as <tool_call>{json}</tool_call> in the content",
    "text_calls_fenced": "tool calls written as a fenced ```json block in the content",
    # llama.cpp/vLLM chat templates of many open models: no 'tool' role, roles must alternate.
    "no_tool_role": "messages with role 'tool' are refused (HTTP 500, the template's error)",
    # Streaming with tools: calls are not streamed as tool_calls but written in the text.
    "no_streamed_tool_calls": "a streamed answer carries its tool calls as <tool_call> text",
    "no_usage": "no usage in answers, and no usage chunk when streaming",
    "no_stream_options": "stream_options is refused as an unknown argument (HTTP 400)",
    "no_tool_choice": "tool_choice is refused as an unknown argument (HTTP 400)",
}


@dataclass(frozen=True)
class FakeToolCall:
    name: str
    arguments: str  # JSON text
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")


@dataclass(frozen=True)
class FakeReply:
    """One scripted answer: text and/or tool calls with usage, or an HTTP error."""

    content: str | None = None
    tool_calls: tuple[FakeToolCall, ...] = ()
    prompt_tokens: int | None = None  # None: counted from the request
    completion_tokens: int | None = None  # None: counted from the answer
    cached_tokens: int = 0
    status: int = 200
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (to provoke client timeouts)
    cut_after: int | None = None  # close the connection after this many chunks (or body bytes)

    @classmethod
    def text(
        cls,
        content: str,
        *,
        cached_tokens: int = 0,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
    ) -> FakeReply:
        return cls(
            content=content,
            cached_tokens=cached_tokens,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    @classmethod
    def call(
        cls, name: str, arguments: dict[str, Any] | str, *, id: str | None = None
    ) -> FakeReply:
        return cls.calls((name, arguments, id))

    @classmethod
    def calls(cls, *calls: tuple[str, dict[str, Any] | str, str | None]) -> FakeReply:
        made = []
        for name, arguments, call_id in calls:
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            made.append(FakeToolCall(name, text, call_id) if call_id else FakeToolCall(name, text))
        return cls(tool_calls=tuple(made))

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0) -> FakeReply:
        return cls(
            status=429,
            error=rules.error("Rate limit reached for requests.", code="rate_limit_exceeded"),
            headers={"retry-after": f"{retry_after:g}"},
        )

    @classmethod
    def server_error(cls, status: int = 500) -> FakeReply:
        body = {"error": {"message": "The server had an error.", "type": "server_error"}}
        return cls(status=status, error=body)

    @classmethod
    def slow(cls, delay: float, then: FakeReply | None = None) -> FakeReply:
        return dataclasses.replace(then or cls(content="(late)"), delay=delay)


@dataclass(frozen=True)
class FakeRequest:
    path: str
    headers: dict[str, str]
    query: dict[str, str]
    body: dict[str, Any]


class FakeOpenAIServer:
    def __init__(
        self,
        *,
        api_key: str = "test-key",
        context_limit: int = 16_000,
        model: str = "fake-model",
        quirks: frozenset[str] | set[str] = frozenset(),
        responder: Responder | None = None,
        listed_window: int | None = None,
    ) -> None:
        unknown = set(quirks) - set(QUIRKS)
        if unknown:
            raise ValueError(f"unknown quirks {sorted(unknown)}; known: {sorted(QUIRKS)}")
        self.api_key = api_key
        self.context_limit = context_limit
        self.model = model
        self.quirks = frozenset(quirks)
        self.responder = responder  # answers when the script is empty (see ``serving``)
        # What ``/v1/models`` says of the model's window (``context_length``, as OpenRouter
        # and Together list it); None: the model is listed without one (as OpenAI does).
        self.listed_window = listed_window
        self.model_lists = 0  # GET /v1/models requests (kept apart from ``requests``)
        self.requests: list[FakeRequest] = []
        self._script: deque[FakeReply] = deque()
        self._lock = threading.Lock()  # the test thread scripts while the server thread answers

    def enqueue(self, *replies: FakeReply) -> None:
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        """Forget the script and the recorded requests (one server can serve many tests)."""
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route(
                    "/openai/deployments/{deployment}/chat/completions",
                    self._chat,
                    methods=["POST"],
                ),
            ]
        )

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a free loopback port; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
        handle = _start(self.app())
        try:
            yield f"{handle.url}/v1"
        finally:
            handle.stop()

    async def _models(self, request: Request) -> Response:
        self.model_lists += 1
        problem = self._authorise(request)
        if problem is not None:
            return JSONResponse(problem, status_code=401)
        entry: dict[str, Any] = {"id": self.model, "object": "model", "owned_by": "fake"}
        if self.listed_window is not None:
            entry["context_length"] = self.listed_window
        return JSONResponse({"object": "list", "data": [entry]})

    async def _chat(self, request: Request) -> Response:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            body = None
        self.requests.append(
            FakeRequest(
                request.url.path,
                dict(request.headers),
                dict(request.query_params),
                body if isinstance(body, dict) else {},
            )
        )
        problem = self._authorise(request) or rules.check_request(body)
        if problem is not None:
            status = 401 if problem["error"]["code"] == "invalid_api_key" else 400
            return JSONResponse(problem, status_code=status)
        assert isinstance(body, dict)
        refused = self._quirk_refusal(body)
        if refused is not None:
            return refused
        tokens = rules.count_tokens(body)
        if tokens > self.context_limit:
            return JSONResponse(rules.context_error(self.context_limit, tokens), status_code=400)
        with self._lock:
            reply = self._script.popleft() if self._script else None
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        if reply is None and self.responder is not None:
            reply = await self.responder(body)
        if reply is None and limit == 1:
            # A connection test (one token): answered like a real server, script or not.
            reply = FakeReply.text("ok", completion_tokens=1)
        if reply is None:
            return JSONResponse(rules.error("The fake server's script is empty."), status_code=400)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.status != 200:
            return JSONResponse(reply.error, status_code=reply.status, headers=reply.headers)
        usage = None if "no_usage" in self.quirks else _usage(reply, tokens)
        if body.get("stream"):
            if "no_streamed_tool_calls" in self.quirks:
                reply = _as_text(reply, "text_calls_tagged")
            reply = self._written_calls(reply)
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = _chunks(reply, self.model, usage if include_usage else None)
            if reply.cut_after is not None:
                chunks = _cut(chunks, reply.cut_after)
            return StreamingResponse(chunks, media_type="text/event-stream")
        answer = _completion(self._written_calls(reply), self.model, usage)
        if reply.cut_after is not None:
            return _Truncated(json.dumps(answer).encode()[: reply.cut_after])
        return JSONResponse(answer)

    def _written_calls(self, reply: FakeReply) -> FakeReply:
        for style in ("text_calls_tagged", "text_calls_fenced"):
            if style in self.quirks:
                return _as_text(reply, style)
        return reply

    def _quirk_refusal(self, body: dict[str, Any]) -> Response | None:
        if "no_tool_choice" in self.quirks and "tool_choice" in body:
            problem = rules.error("Unrecognized request argument supplied: tool_choice")
            return JSONResponse(problem, status_code=400)
        if "no_stream_options" in self.quirks and "stream_options" in body:
            problem = rules.error("Unrecognized request argument supplied: stream_options")
            return JSONResponse(problem, status_code=400)
        if "no_tool_role" in self.quirks:
            template = rules.template_roles(body["messages"])
            if template is not None:
                return JSONResponse(template, status_code=500)
        return None

    def _authorise(self, request: Request) -> dict[str, Any] | None:
        if request.url.path.startswith("/openai/"):
            if "api-version" not in request.query_params:
                return rules.error("Missing required query parameter: api-version")
            given = request.headers.get("api-key", "")
        else:
            given = request.headers.get("authorization", "").removeprefix("Bearer ")
        return None if given == self.api_key else rules.auth_error(given)


def _usage(reply: FakeReply, prompt_tokens: int) -> dict[str, Any]:
    answer = (reply.content or "") + "".join(c.arguments for c in reply.tool_calls)
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_tokens
    completion = (
        reply.completion_tokens
        if reply.completion_tokens is not None
        else math.ceil(len(answer) / 4)
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": reply.cached_tokens},
    }


def _finish(reply: FakeReply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def _completion(reply: FakeReply, model: str, usage: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    answer = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
    }
    return answer if usage is None else {**answer, "usage": usage}


async def _chunks(reply: FakeReply, model: str, usage: dict[str, Any] | None) -> AsyncIterator[str]:
    """SSE as OpenAI sends it: role first, text in pieces, each tool call's id and name then its
    arguments in fragments, the finish reason, then (if asked) a usage chunk with no choices."""
    head: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion.chunk",
    }
    head |= {"created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        extra = {"usage": None} if usage is not None else {}
        return f"data: {json.dumps({**head, 'choices': [choice], **extra})}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.content or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        function = {"name": call.name, "arguments": ""}
        yield chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": function}]})  # fmt: skip
        for piece in _pieces(call.arguments):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _finish(reply))
    if usage is not None:
        yield f"data: {json.dumps({**head, 'choices': [], 'usage': usage})}\n\n"
    yield "data: [DONE]\n\n"


def _as_text(reply: FakeReply, style: str) -> FakeReply:
    """The reply with its tool calls written into the content, as such servers return them."""
    if not reply.tool_calls:
        return reply
    blocks = []
    for call in reply.tool_calls:
        body = f'{{"name": "{call.name}", "arguments": {call.arguments}}}'
        blocks.append(
            f"<tool_call>\n{body}\n</tool_call>"
            if style == "text_calls_tagged"
            else f"```json\n{body}\n```"
        )
    content = "\n".join(p for p in (reply.content, *blocks) if p)
    return dataclasses.replace(reply, content=content, tool_calls=())


async def _cut(chunks: AsyncIterator[str], after: int) -> AsyncIterator[str]:
    """The first ``after`` chunks, then the connection drops (no [DONE], no final chunk)."""
    sent = 0
    async for chunk in chunks:
        if sent == after:
            raise ConnectionResetError("the fake server closes the stream midway")
        sent += 1
        yield chunk


class _Truncated(Response):
    """A body that promises more bytes than it sends: the client sees the connection close."""

    def __init__(self, partial: bytes) -> None:
        super().__init__(partial, media_type="application/json")
        self.headers["content-length"] = str(len(partial) + 100)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body, "more_body": True})
        raise ConnectionResetError("the fake server closes the answer midway")


def _pieces(text: str, size: int = 7) -> list[str]:
    size = max(size, len(text) // 2000)  # a huge answer in fewer, longer pieces (fast tests)
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass
class _Running:
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _start(app: Starlette, host: str = "127.0.0.1") -> _Running:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="fake-openai")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"fake OpenAI server did not start on {host}:{port}")
        time.sleep(0.02)
    return _Running(f"http://{host}:{port}", server, thread)


def serving(model: ChatModel) -> Responder:
    """A responder that lets ``model`` answer each request, as if it were served behind an
    OpenAI-compatible endpoint (used to check a qualification run end to end without weights)."""

    async def respond(body: dict[str, Any]) -> FakeReply:
        tools = [_ours(t) for t in body.get("tools") or ()]
        messages: list[Message] = []
        called: dict[str, str] = {}  # tool_call_id → tool: the wire sends no name with a result
        for wire in body["messages"]:
            message = _message(wire)
            called |= {c.id: c.name for c in message.tool_calls}
            if message.role == "tool":
                message = dataclasses.replace(message, name=called.get(message.tool_call_id or ""))
            messages.append(message)
        completion = await model.complete(messages, tools)
        calls = tuple(
            FakeToolCall(encode(c.name), c.arguments, c.id) for c in completion.tool_calls
        )
        return FakeReply(content=completion.content, tool_calls=calls)

    return respond


def _ours(tool: dict[str, Any]) -> dict[str, Any]:
    function = dict(tool.get("function") or {})
    function["name"] = str(function.get("name", "")).replace("__", ".")
    return {"type": "function", "function": function}


def _message(wire: dict[str, Any]) -> Message:
    content = wire.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    calls = tuple(
        ToolCall(c["id"], c["function"]["name"].replace("__", "."), c["function"]["arguments"])
        for c in wire.get("tool_calls") or ()
    )
    return Message(wire["role"], content, calls, tool_call_id=wire.get("tool_call_id"))
