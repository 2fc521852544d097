"""Tool definitions: our OpenAI function-tool shape, encoded names, optional strict mode."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from erp_agent.errors import ConfigError
from erp_agent.models._names import encode


@dataclass(frozen=True)
class ToolSpec:
    name: str  # ours, e.g. "customer.list"
    wire_name: str
    description: str
    parameters: dict[str, Any]


def tool_specs(tools: Sequence[dict[str, Any]], *, strict: bool = False) -> list[ToolSpec]:
    """Read tool definitions in the OpenAI function shape (``Tool.schema()``)."""
    specs = []
    for tool in tools:
        function = tool.get("function")
        if tool.get("type") != "function" or not isinstance(function, dict):
            raise ConfigError(f"tool definition must be an OpenAI function tool, got {tool!r}")
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        specs.append(
            ToolSpec(
                name=function["name"],
                wire_name=encode(function["name"]),
                description=function.get("description", ""),
                parameters=strict_schema(parameters) if strict else parameters,
            )
        )
    return specs


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy where every object forbids unknown keys, as strict tool modes require."""
    out = copy.deepcopy(schema)
    _close_objects(out)
    return out


def _close_objects(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object":
            node.setdefault("additionalProperties", False)
        for value in node.values():
            _close_objects(value)
    elif isinstance(node, list):
        for item in node:
            _close_objects(item)


# Bounds the gateway checks anyway: a small model gains little from reading them.
_COMPACT_DROPS = ("title", "examples", "minLength", "maxLength", "uniqueItems")
# Words whose full stop ends no sentence ("(e.g. branch = Kisumu)").
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "incl.", "excl.", "approx.", "no.", "cf.")


def first_sentence(text: str) -> str:
    """``text`` up to the end of its first sentence: a full stop (or ! ?) followed by a space
    or the end, outside brackets, not after an abbreviation ("e.g.") and not inside a name
    ("metrics.query", "2.5")."""
    depth = 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char in ".!?" and depth == 0:
            after = text[i + 1 : i + 2]
            if after and not after.isspace():
                continue
            if text[i - 2 : i + 1] == "..." or text[: i + 1].lower().endswith(_ABBREVIATIONS):
                continue
            return text[: i + 1]
    return text.strip()


def compact(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition for a small context window: each description (the tool's and its
    parameters') cut to its first sentence, without titles, examples and length bounds. Every
    name, type, enum and required field stays, so a call is made right the first time; the
    gateway still checks each call against the full schema."""
    out = copy.deepcopy(tool)
    function = out.get("function", out)
    function["description"] = first_sentence(str(function.get("description", "")))
    _strip(function.get("parameters"))
    return out


def _strip(schema: Any) -> None:
    """Shorten the prose of one JSON schema node, then of its sub-schemas (never a property
    that happens to be called "description")."""
    if isinstance(schema, list):
        for item in schema:
            _strip(item)
        return
    if not isinstance(schema, dict):
        return
    for key in _COMPACT_DROPS:
        schema.pop(key, None)
    if isinstance(schema.get("description"), str):
        schema["description"] = first_sentence(schema["description"])
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            for sub in value.values():
                _strip(sub)
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            _strip(value)
