"""The OpenAI-compatible API: ``/v1/models`` and ``/v1/chat/completions`` (streaming and not),
so existing chat UIs (Open WebUI, LibreChat, anything that speaks the OpenAI API) use erp-agent
as a "model". Authentication is a per-user API key as the bearer token.

The whole agent answers: the same engine turn as the web app, with the user's tools and the
ERP's permissions. The response is the turn's blocks as markdown (tables with links, charts as
their figures, proposals with a confirm link: nothing is written from here). A chat client
sends the whole conversation each time; its turns are matched to our stored conversation, so
follow-ups ("and last year?") work as in the web app.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from erp_agent.calls.session import Session
from erp_agent.channels.faults import logged, user_message
from erp_agent.channels.markdown import blocks_markdown
from erp_agent.engine.response import TurnResponse
from erp_agent.errors import ChannelError, ErpAgentError
from erp_agent.events import Event, EventBus, TextDelta
from erp_agent.server.blocks import for_web
from erp_agent.server.failures import RETRY_AFTER_SECONDS
from erp_agent.server.routes._deps import State
from erp_agent.server.routes.chat import check_budget
from erp_agent.server.state import ServerState
from erp_agent.server.streaming import run_and_record

MODEL_ID = "erp-agent"
KEEPALIVE_SECONDS = 15.0
CONVERSATIONS_KEPT = 10_000
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")

router = APIRouter(prefix="/v1", tags=["openai-compatible"])


class ApiError(Exception):
    """An error in the OpenAI API's own shape: {"error": {"message", "type", "code"}}."""

    def __init__(self, status: int, message: str, kind: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.code = status, message, kind, code

    def response(self) -> JSONResponse:
        body = {
            "error": {"message": self.message, "type": self.kind, "param": None, "code": self.code}
        }
        headers = (
            {"WWW-Authenticate": "Bearer"}
            if self.status == 401
            else {"Retry-After": RETRY_AFTER_SECONDS}
            if self.status == 503
            else None
        )
        return JSONResponse(body, status_code=self.status, headers=headers)


class ChatMessage(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    model: str = MODEL_ID
    messages: list[ChatMessage] = Field(min_length=1, max_length=500)
    stream: bool = False
    # Not OpenAI's: name the conversation explicitly (otherwise it is matched by its messages).
    conversation_id: str | None = Field(default=None, max_length=100)


async def key_session(request: Request, state: State) -> Session:
    header = request.headers.get("authorization", "")
    scheme, _, key = header.partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise ApiError(401, "Send your erp-agent API key as 'Authorization: Bearer <key>'.", "invalid_request_error", "invalid_api_key")  # fmt: skip
    try:
        return await state.keys.session(key)
    except ChannelError as exc:
        raise ApiError(401, str(exc), "invalid_request_error", "invalid_api_key") from exc
    except ErpAgentError as exc:  # the ERP or the store failing while the key is resolved
        raise api_fault(exc, "resolving an API key") from exc


def api_fault(exc: BaseException, where: str) -> ApiError:
    """``exc`` as the OpenAI API says an error: the ERP's or the store's state in words, with
    the status that fits (502 not the ERP's API, 503 unreachable, 504 too slow)."""
    found = logged(exc, where)
    kind = "invalid_request_error" if found.status < 500 else "server_error"
    return ApiError(found.status, found.message, kind, found.kind)


KeySession = Annotated[Session, Depends(key_session)]


@router.get("/models", summary="The one model: erp-agent")
async def models(_: KeySession) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "erp-agent"}],
    }


@router.post(
    "/chat/completions",
    summary="Ask erp-agent (OpenAI chat completions; stream=true for SSE chunks)",
    response_model=None,
)
async def chat_completions(
    body: ChatRequest, request: Request, session: KeySession, state: State
) -> JSONResponse | StreamingResponse:
    if body.model != MODEL_ID:
        raise ApiError(404, f"The model {body.model!r} does not exist; use {MODEL_ID!r}.", "invalid_request_error", "model_not_found")  # fmt: skip
    message = _text(body.messages[-1])
    if body.messages[-1].role != "user" or not message.strip():
        raise ApiError(400, "The last message must be the user's, with text.", "invalid_request_error")  # fmt: skip
    if len(message) > 8000:
        raise ApiError(400, "The message is longer than 8,000 characters.", "invalid_request_error")  # fmt: skip
    await check_budget(state, session.org)
    threads: Threads = request.app.state.openai_threads
    conversation = body.conversation_id or threads.find(session.id, body.messages[:-1])
    web_url = state.runtime.settings.public_url or str(request.base_url)
    completion_id = f"chatcmpl-{secrets.token_urlsafe(12)}"
    if body.stream:
        return StreamingResponse(
            _stream(
                state,
                threads,
                session,
                body.messages,
                message,
                conversation,
                completion_id,
                web_url,
            ),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    try:
        response = await run_and_record(state, session, message, conversation, EventBus())
    except Exception as exc:
        raise api_fault(exc, "a chat completion") from exc
    text = _answer(response, web_url)
    threads.remember(session.id, [*body.messages, ChatMessage(role="assistant", content=text)], response.conversation_id)  # fmt: skip
    return JSONResponse(
        {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL_ID,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(response),
        },
        headers={"X-Conversation-Id": response.conversation_id},
    )


async def _stream(
    state: ServerState,
    threads: Threads,
    session: Session,
    messages: Sequence[ChatMessage],
    message: str,
    conversation: str | None,
    completion_id: str,
    web_url: str,
) -> AsyncIterator[str]:
    """The model's text as it arrives; then whatever the finished turn adds (tables, charts,
    proposals, or the corrected answer when the figure check changed it)."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    bus = EventBus()
    bus.subscribe(queue.put_nowait)
    task = state.keep(run_and_record(state, session, message, conversation, bus))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    yield _chunk(completion_id, {"role": "assistant", "content": ""})
    streamed: list[str] = []
    while True:
        try:
            event = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
        except TimeoutError:
            yield ": keepalive\n\n"
            continue
        if event is None:
            break
        if isinstance(event, TextDelta) and event.text:
            streamed.append(event.text)
            yield _chunk(completion_id, {"content": event.text})
    try:
        response = task.result()
    except Exception as exc:
        yield _chunk(completion_id, {"content": f"\n\n{user_message(exc)}"}, finish="stop")
        yield "data: [DONE]\n\n"
        return
    text = _answer(response, web_url)
    sent = "".join(streamed)
    rest = _rest(text, sent)
    if rest:
        yield _chunk(completion_id, {"content": rest})
    threads.remember(session.id, [*messages, ChatMessage(role="assistant", content=sent + rest)], response.conversation_id)  # fmt: skip
    yield _chunk(completion_id, {}, finish="stop", usage=_usage(response))
    yield "data: [DONE]\n\n"


def _rest(text: str, sent: str) -> str:
    """What the client still needs after the streamed text: the blocks after the answer, or
    the whole answer again when the finished one is not what streamed (a corrected figure)."""
    if not sent.strip():
        return text
    answer, _, after = text.partition("\n\n\u200b")
    if " ".join(_LINK.sub(r"\1", answer).split()) == " ".join(sent.split()):
        return f"\n\n{after}" if after else ""
    return "\n\n---\n\n" + text.replace("\n\n\u200b", "\n\n")


def _answer(response: TurnResponse, web_url: str) -> str:
    blocks = for_web(response.blocks)
    first, others = blocks[:1], blocks[1:]
    # A zero-width marker separates the model's answer from the blocks after it (see _rest).
    head = blocks_markdown(first, web_url=web_url)
    tail = blocks_markdown(others, web_url=web_url)
    return f"{head}\n\n\u200b{tail}" if tail else head


def _chunk(
    completion_id: str, delta: dict[str, Any], *, finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> str:  # fmt: skip
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body, default=str)}\n\n"


def _usage(response: TurnResponse) -> dict[str, int]:
    prompt, completion = response.usage.prompt_tokens, response.usage.completion_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    parts = message.content or []
    return "\n".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


class Threads:
    """A chat client resends the whole conversation each time: the messages before the new
    one identify the conversation they continue (kept for the most recent ones)."""

    def __init__(self) -> None:
        self._by_digest: OrderedDict[str, str] = OrderedDict()

    @staticmethod
    def _digest(session_id: str, messages: Sequence[ChatMessage]) -> str:
        said = [
            (m.role, " ".join(_text(m).split()))
            for m in messages
            if m.role in ("user", "assistant")
        ]
        return hashlib.sha256(json.dumps([session_id, said]).encode()).hexdigest()

    def find(self, session_id: str, earlier: Sequence[ChatMessage]) -> str | None:
        if not any(m.role == "assistant" for m in earlier):
            return None
        return self._by_digest.get(self._digest(session_id, earlier))

    def remember(self, session_id: str, messages: Sequence[ChatMessage], conversation: str) -> None:
        self._by_digest[self._digest(session_id, messages)] = conversation
        while len(self._by_digest) > CONVERSATIONS_KEPT:
            self._by_digest.popitem(last=False)
