"""Our OpenAI-shaped messages and tools ↔ Anthropic's Messages API.

- System messages go to the separate ``system`` parameter, as text blocks.
- An assistant message's tool calls become ``tool_use`` blocks; tool messages become
  ``tool_result`` blocks, and consecutive ones share one user message (the API wants every result
  of a turn in the user message right after it, and roles to alternate).
- Prompt caching: ``cache_control`` goes on the last system block (tools + system are the stable
  prefix) and on the last block of each message marked ``cache_breakpoint``, at most four in all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from anthropic.types import Message as AnthropicMessage
from anthropic.types import TextBlock, ToolUseBlock
from anthropic.types import Usage as AnthropicUsage

from erp_agent.models._names import NameMap, encode
from erp_agent.models._schemas import ToolSpec
from erp_agent.models.base import Completion, Message, ToolCall, Usage

MAX_BREAKPOINTS = 4  # the API's limit
EPHEMERAL = {"type": "ephemeral"}
STOP_REASONS = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}

# A content block of the Anthropic Messages API (a response block is ``results.blocks.Block``).
WireBlock = dict[str, Any]


def to_anthropic(messages: Sequence[Message]) -> tuple[list[WireBlock], list[dict[str, Any]]]:
    """(system blocks, messages) for ``messages.create``."""
    system: list[WireBlock] = []
    out: list[dict[str, Any]] = []
    marks: list[WireBlock] = []  # blocks that end a message marked cache_breakpoint
    for message in messages:
        if message.role == "system":
            # The API has no mid-conversation system turn; all system text joins the prefix.
            if message.content:
                system.append({"type": "text", "text": message.content})
            continue
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
        if message.cache_breakpoint:
            marks.append(blocks[-1])
    if system:
        marks = [system[-1], *marks[-(MAX_BREAKPOINTS - 1) :]]
    for block in marks[-MAX_BREAKPOINTS:]:
        block["cache_control"] = dict(EPHEMERAL)
    return system, out


def _blocks(message: Message) -> tuple[str, list[WireBlock]]:
    if message.role == "tool":
        result = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content or "",
        }
        return "user", [result]
    blocks: list[WireBlock] = []
    for url in message.images:
        media, _, data = url.removeprefix("data:").partition(";base64,")
        blocks.append(
            {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
        )
    if message.content:  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": encode(call.name), "input": _input(call)}
        )
    return message.role, blocks


def _input(call: ToolCall) -> dict[str, Any]:
    """tool_use.input must be an object. Malformed arguments (which the gateway already refused)
    are kept as text so the model still sees what it sent."""
    try:
        value = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {"_unparsed_arguments": call.arguments}
    return value if isinstance(value, dict) else {"_unparsed_arguments": call.arguments}


def tools_to_anthropic(specs: Sequence[ToolSpec], *, strict: bool) -> list[dict[str, Any]]:
    tools = []
    for spec in specs:
        tool: dict[str, Any] = {
            "name": spec.wire_name,
            "description": spec.description,
            "input_schema": spec.parameters,
        }
        if strict:
            tool["strict"] = True
        tools.append(tool)
    return tools


def usage_from_anthropic(usage: AnthropicUsage) -> Usage:
    """Anthropic counts cache reads and writes apart from input_tokens; ours includes them."""
    read = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    return Usage(
        prompt_tokens=usage.input_tokens + read + written,
        cached_tokens=read,
        completion_tokens=usage.output_tokens,
        cache_write_tokens=written,
    )


def completion_from_anthropic(message: AnthropicMessage, names: NameMap) -> Completion:
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    calls = [
        ToolCall(b.id, names.decode(b.name), json.dumps(b.input))
        for b in message.content
        if isinstance(b, ToolUseBlock)
    ]
    reason = message.stop_reason or ""
    return Completion(
        content="".join(texts) or None,
        tool_calls=calls,
        usage=usage_from_anthropic(message.usage),
        model=message.model,
        finish_reason=STOP_REASONS.get(reason, reason),
    )
