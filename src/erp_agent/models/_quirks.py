"""What some OpenAI-compatible servers do not accept, and the request that works instead.

- No ``tool`` role (llama.cpp's and vLLM's chat templates for many open models): tool results go
  as one user message with delimited results; the assistant's calls are written in its content
  as ``<tool_call>`` blocks, the form those models are trained to read. Consecutive messages of
  one role are merged, since such templates also insist that roles alternate.
- No ``stream_options``: streaming without asking for a usage chunk.

Each is recognised from the server's error, so nobody has to know their server's quirks in
advance; ``ModelSettings.tool_role = false`` skips the first attempt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from erp_agent.errors import ModelError
from erp_agent.models._names import encode
from erp_agent.models.base import Message

RESULT_OPEN = '<tool_result name="{name}" id="{id}">'
RESULT_CLOSE = "</tool_result>"


# What chat templates (via llama.cpp, vLLM, Ollama) say when they cannot render a tool turn.
_ROLE_REFUSALS = (
    "roles must alternate",
    "unsupported role",
    "unknown role",
    "invalid role",
    "role tool",
    "role 'tool' is not",
    "tool role",
    "only user and assistant",
    "only user, assistant",
)


def refuses_tool_role(error: ModelError) -> bool:
    """A 4xx/5xx whose words say the server's template cannot take the messages' roles (not a
    malformed conversation, which OpenAI also describes in terms of roles)."""
    if error.status is None or error.status < 400:
        return False
    text = error.detail.lower()
    return any(phrase in text for phrase in _ROLE_REFUSALS)


def refuses_stream_options(error: ModelError) -> bool:
    return error.status == 400 and "stream_options" in f"{error.detail}".lower()


def without_tool_role(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The chat-completions messages for a server without the tool role."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            opened = RESULT_OPEN.format(name=message.name or "", id=message.tool_call_id or "")
            text = f"{opened}\n{message.content or ''}\n{RESULT_CLOSE}"
            _append(out, "user", text)
        elif message.role == "assistant" and message.tool_calls:
            blocks = [
                "<tool_call>"
                + json.dumps({"name": encode(c.name), "arguments": _arguments(c.arguments)})
                + "</tool_call>"
                for c in message.tool_calls
            ]
            _append(out, "assistant", "\n".join(p for p in (message.content, *blocks) if p))
        else:
            wire = message.to_openai()
            if isinstance(wire.get("content"), list):  # images: keep the message as it is
                out.append(wire)
            else:
                _append(out, message.role, message.content or "")
    return out


def _append(out: list[dict[str, Any]], role: str, text: str) -> None:
    last = out[-1] if out else None
    if last is not None and last["role"] == role and isinstance(last.get("content"), str):
        last["content"] = f"{last['content']}\n\n{text}"
    else:
        out.append({"role": role, "content": text})


def _arguments(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError:
        return text
