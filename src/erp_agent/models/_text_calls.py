"""Tool calls a model wrote as text instead of through the tool-calling API.

Open-weight models behind servers without (or with a mismatched) tool-call parser answer with
the call in their content: a fenced JSON object, Hermes/Qwen ``<tool_call>`` tags, Llama's
``<|python_tag|>``, Mistral's ``[TOOL_CALLS]``, or a bare JSON object. Shown to the user, that
is raw JSON instead of an answer; read here, it becomes a real tool call that goes through the
gateway like any other.

Only call-shaped JSON counts (a name plus arguments); a JSON answer the user asked for is left
alone. A call that cannot be read is reported (``malformed``) so the model can be asked again.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from erp_agent.models._names import NameMap, encode
from erp_agent.models.base import ToolCall

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"```[ \t]*([A-Za-z_]*)[ \t]*\n(.*?)(?:\n```|$)", re.S)
_PREFIXED = re.compile(r"(?:<\|python_tag\|>|\[TOOL_CALLS\])\s*(.*)$", re.S)
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_NAME_KEYS = ("name", "tool", "tool_name", "function")
# The start of every form above, for holding back streamed text until it is clear.
MARKERS = ("<tool_call>", "```", "<|python_tag|>", "[TOOL_CALLS]")


@dataclass
class TextCalls:
    calls: list[ToolCall] = field(default_factory=list)
    prose: str = ""  # the content without the calls
    malformed: str | None = None  # why an attempted call could not be read


def extract(content: str | None, offered: Iterable[str]) -> TextCalls:
    """The tool calls written in ``content``; names may be ours (``customer.list``) or the wire
    form (``customer__list``). A name that was not offered is kept as written: the engine's
    guards refuse it by name and the model can correct itself."""
    text = content or ""
    names = _Names(offered)
    for pattern in (_TAG, _PREFIXED):
        blocks = list(pattern.finditer(text))
        if blocks:
            return _from_blocks(text, blocks, names, always_calls=True)
    fences = [m for m in _FENCE.finditer(text) if _looks_like_call(m.group(2))]
    if fences:
        return _from_blocks(text, fences, names, always_calls=False, group=2)
    stripped = text.strip()
    if stripped[:1] in "{[" and _looks_like_call(stripped):
        found = _parse(stripped, names)
        if isinstance(found, list):
            return TextCalls(found, "")
        return TextCalls(malformed=found) if _claims_call(stripped) else TextCalls(prose=text)
    return TextCalls(prose=text)


def _from_blocks(
    text: str, blocks: list[re.Match[str]], names: _Names, *, always_calls: bool, group: int = 1
) -> TextCalls:
    calls: list[ToolCall] = []
    for block in blocks:
        found = _parse(block.group(group), names)
        if isinstance(found, str):
            if always_calls or _claims_call(block.group(group)):
                return TextCalls(malformed=found)
            return TextCalls(prose=text)  # a fenced block that is not a call after all
        calls.extend(found)
    prose = text
    for block in reversed(blocks):
        prose = prose[: block.start()] + prose[block.end() :]
    return TextCalls(calls, prose.strip())


def _looks_like_call(text: str) -> bool:
    return any(f'"{k}"' in text for k in _NAME_KEYS) and (
        any(f'"{k}"' in text for k in _ARG_KEYS) or '"function"' in text
    )


def _claims_call(text: str) -> bool:
    return '"name"' in text or '"function"' in text


def _parse(payload: str, names: _Names) -> list[ToolCall] | str:
    """The calls in one JSON payload, or why it cannot be read."""
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as exc:
        return f"the JSON of the tool call is not valid ({exc.msg} at character {exc.pos})"
    if isinstance(data, dict) and isinstance(data.get("tool_calls"), list):
        data = data["tool_calls"]
    items = data if isinstance(data, list) else [data]
    calls: list[ToolCall] = []
    for item in items:
        call = _call(item, names)
        if isinstance(call, str):
            return call
        calls.append(call)
    return calls or "the tool call names no tool"


def _call(item: Any, names: _Names) -> ToolCall | str:
    if not isinstance(item, dict):
        return "a tool call must be a JSON object with a name and arguments"
    if isinstance(item.get("function"), dict):  # the API's own shape, written out
        item = item["function"]
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    if not name:
        return "the tool call names no tool"
    arguments: Any = next((item[k] for k in _ARG_KEYS if k in item), {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return f"the arguments of {name} are not valid JSON ({exc.msg})"
    if not isinstance(arguments, dict):
        return f"the arguments of {name} must be a JSON object"
    return ToolCall(f"call_{uuid.uuid4().hex[:16]}", names.resolve(name), json.dumps(arguments))


class _Names:
    def __init__(self, offered: Iterable[str]) -> None:
        self.ours = set(offered)
        self.wire = NameMap(self.ours)

    def resolve(self, name: str) -> str:
        name = name.strip().removeprefix("functions.")
        if name in self.ours:
            return name
        decoded = self.wire.decode(encode(name))
        return decoded if decoded in self.ours else name
