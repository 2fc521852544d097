"""What the fake OpenAI server checks in a request, with the real API's error texts and codes.

Each check returns an OpenAI-shaped error body, or None when the request passes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def error(message: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }


def count_tokens(body: dict[str, Any]) -> int:
    """A stand-in tokenizer: one token per four characters of the messages and tools JSON."""
    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
    return math.ceil(len(text) / 4)


def check_request(body: object) -> dict[str, Any] | None:
    if not isinstance(body, dict):
        return error("We could not parse the JSON body of your request.")
    if not isinstance(body.get("model"), str):
        return error("you must provide a model parameter", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return error("'messages' must contain at least one message.", param="messages")
    return check_tools(body.get("tools", [])) or check_messages(messages)


def check_tools(tools: object) -> dict[str, Any] | None:
    if not isinstance(tools, list):
        return error("'tools' must be an array.", param="tools")
    for i, tool in enumerate(tools):
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            return error(
                f"Invalid 'tools[{i}].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                code="invalid_value",
                param=f"tools[{i}].function.name",
            )
    return None


def check_messages(messages: list[Any]) -> dict[str, Any] | None:
    """Roles are known; every tool message answers a tool call of the assistant message just
    before it; every tool call of an assistant message is answered before anything else."""
    pending: dict[str, int] = {}  # tool_call_id → index of the assistant message that made it
    answered: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            return error(
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                "'function', 'tool', and 'developer'.",
                code="invalid_value",
                param=f"messages[{i}].role",
            )
        assert isinstance(message, dict)
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending or call_id in answered:
                return error(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            answered.add(call_id)
            continue
        unanswered = [c for c in pending if c not in answered]
        if unanswered:
            return _missing_results(pending[unanswered[0]], unanswered)
        pending, answered = {}, set()
        for call in (message.get("tool_calls") or ()) if role == "assistant" else ():
            pending[call.get("id")] = i
    unanswered = [c for c in pending if c not in answered]
    return _missing_results(pending[unanswered[0]], unanswered) if unanswered else None


def _missing_results(index: int, ids: list[str]) -> dict[str, Any]:
    return error(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids),
        param=f"messages.[{index}].role",
    )


def context_error(limit: int, tokens: int) -> dict[str, Any]:
    return error(
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages.",
        code="context_length_exceeded",
        param="messages",
    )


def auth_error(key: str) -> dict[str, Any]:
    shown = f"{key[:3]}…{key[-4:]}" if len(key) > 8 else "***"
    return error(f"Incorrect API key provided: {shown}.", code="invalid_api_key")


def template_roles(messages: list[Any]) -> dict[str, Any] | None:
    """What a chat template without a tool role says (llama.cpp and vLLM pass the template's
    own exception on): only system first, then user and assistant, alternating."""
    roles = [m.get("role") for m in messages if isinstance(m, dict)]
    while roles and roles[0] == "system":
        roles.pop(0)
    expected = "user"
    for role in roles:
        if role != expected:
            return {
                "error": {
                    "code": 500,
                    "message": "Conversation roles must alternate user/assistant/user/assistant/"
                    f"... (got role '{role}')",
                    "type": "server_error",
                }
            }
        expected = "assistant" if role == "user" else "user"
    return None
