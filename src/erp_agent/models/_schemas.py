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


# Compact schemas list an enum of at most this many values (statuses, operators, directions);
# a longer one (metric, field, entity names) is left to the gateway, which validates every call
# against the full schema and answers a wrong value with the whole list.
MAX_COMPACT_ENUM = 12
TRIMMED_ENUM = "one of {n} names; a wrong one is answered with the list"
# Bounds the gateway checks anyway: a small model gains little from reading them.
_COMPACT_DROPS = ("description", "title", "examples", "minLength", "maxLength", "uniqueItems")


def compact(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool definition for a small context window: the tool's description cut to its first
    sentence, parameters without their descriptions, titles, examples and length bounds, and
    long enums trimmed (names, types, short enums and required fields stay, so calls remain
    valid; the gateway still checks each call against the full schema)."""
    out = copy.deepcopy(tool)
    function = out.get("function", out)
    description = str(function.get("description", ""))
    function["description"] = description.split(". ")[0].rstrip(".") + "." if description else ""
    _strip(function.get("parameters"))
    return out


def _strip(schema: Any) -> None:
    """Drop the prose of one JSON schema node, then of its sub-schemas (never a property that
    happens to be called "description")."""
    if isinstance(schema, list):
        for item in schema:
            _strip(item)
        return
    if not isinstance(schema, dict):
        return
    for key in _COMPACT_DROPS:
        schema.pop(key, None)
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) > MAX_COMPACT_ENUM:
        del schema["enum"]
        schema["description"] = TRIMMED_ENUM.format(n=len(enum))
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            for sub in value.values():
                _strip(sub)
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            _strip(value)
