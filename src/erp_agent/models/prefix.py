"""What a self-hosted server's prefix cache can reuse between two requests.

vLLM and llama.cpp reuse the cached state of the longest unchanged prefix of the prompt text
the chat template makes of a request. The template of Qwen2.5 and the Hermes tool format (most
open models that call tools) lays it out as: the first system message, then every tool schema,
then the other messages. So the tools array sits before the whole conversation: a tool added,
removed or reordered invalidates everything after the change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from erp_agent.models.base import Message
from erp_agent.models.openai_compatible import wire_messages, wire_tools


def hermes_prompt(messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> str:
    """The prompt text a Qwen2.5 (Hermes) chat template makes of the request."""
    wire = cast("list[dict[str, Any]]", wire_messages(messages))
    first = wire[0]["content"] if wire and wire[0]["role"] == "system" else ""
    schemas = "\n".join(json.dumps(t, ensure_ascii=False) for t in wire_tools(tools))
    out = [f"<|im_start|>system\n{first}\n\n# Tools\n<tools>\n{schemas}\n</tools><|im_end|>"]
    for message in wire[1:] if first else wire:
        text = str(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            text += f"\n<tool_call>\n{json.dumps(call['function'])}\n</tool_call>"
        role = "user" if message["role"] == "tool" else message["role"]
        if message["role"] == "tool":
            text = f"<tool_response>\n{text}\n</tool_response>"
        out.append(f"<|im_start|>{role}\n{text}<|im_end|>")
    return "\n".join(out) + "\n<|im_start|>assistant\n"


def shared_prefix(a: str, b: str) -> int:
    """Characters at the start of ``a`` and ``b`` that are the same."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def prefix_share(before: str, after: str) -> float:
    """The share of ``after`` that is an unchanged prefix of ``before``: what a prefix cache
    holding ``before`` spares the server from reading again."""
    return shared_prefix(before, after) / len(after) if after else 1.0
