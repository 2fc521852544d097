"""tools.search: the model finds any permitted tool by describing what it needs.

The engine enables the tools it returns for the rest of the turn.
"""

from __future__ import annotations

import re
from typing import Any

from erp_agent.tools.base import Args, Effect, Shape, Tool, ToolContext, ToolRegistry

_WORD = re.compile(r"[a-z0-9]+")
MAX_HITS = 8


def _words(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(text.lower())}


def search_tool(registry: ToolRegistry) -> Tool:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        wanted = _words(str(args["query"]))
        scored = []
        for tool in registry:
            if tool.name not in ctx.session.allowed_tools or tool.name == "tools.search":
                continue
            name_words = _words(tool.name.replace("_", " ").replace(".", " "))
            score = 3 * len(wanted & name_words) + len(wanted & _words(tool.description))
            if score:
                scored.append((score, tool.name, tool.description))
        scored.sort(key=lambda s: (-s[0], s[1]))
        hits = [{"name": n, "description": d[:300]} for _, n, d in scored[:MAX_HITS]]
        return {
            "tools": hits,
            "note": "These tools are now available for the rest of this turn."
            if hits
            else "No permitted tool matches; say what you cannot do.",
        }

    return Tool(
        "tools.search",
        "Find a tool you were not given: describe what you need (e.g. 'expense claims by "
        "employee', 'approve purchase order'). Returns matching tools you may use, and enables "
        "them for the rest of this turn.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 2, "maxLength": 200}},
            "required": ["query"],
            "additionalProperties": False,
        },
        Effect.READ,
        "tools",
        run=run,
        action="search",
        shape=Shape.TOOL_SEARCH,
    )
