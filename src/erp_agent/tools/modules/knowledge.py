"""``knowledge.search``: passages from the knowledge base, with the titles to cite."""

from __future__ import annotations

import asyncio
from typing import Any

from erp_agent.retrieval.knowledge import KnowledgeBase, cite
from erp_agent.tools.base import Args, Effect, Shape, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj

MODULE = "knowledge"

DESCRIPTION = (
    "Search the knowledge base: how standard ERP processes work (selling and purchase cycles, "
    "approvals, stock movements, period closing, leave, payroll, document status, cancel and "
    "amend). Returns passages with the source to cite as 'title > section'. Use for how/why/"
    "what-does-this-mean questions, not for data: figures come from records, reports and "
    "aggregate tools."
)

PROMPT_RULES = (
    "When you explain a process from knowledge.search, say only what the passages say and cite "
    "each passage you used by its source, e.g. (Source: Selling cycle > Sales invoice). If no "
    "passage answers, say so rather than guessing."
)


def tools(kb: KnowledgeBase, *, modules: list[str] | None = None) -> list[Tool]:
    """The knowledge tools over ``kb``; ``modules`` lists valid values for the module filter."""
    module_schema: dict[str, Any] = {
        "type": "string",
        "description": "Only passages of this module (e.g. selling, buying, stock, accounting, hr).",
    }
    if modules:
        module_schema["enum"] = sorted(modules)

    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        passages = await asyncio.to_thread(
            kb.search,
            str(args["query"]),
            module=args.get("module"),
            limit=int(args.get("limit", 5)),
        )
        if not passages:
            return {"passages": [], "message": "No passage in the knowledge base matches."}
        return {"passages": cite(passages)}

    return [
        Tool(
            name="knowledge.search",
            description=DESCRIPTION,
            parameters=obj(
                {
                    "query": {"type": "string", "minLength": 2, "description": "The question."},
                    "module": module_schema,
                    "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
                },
                ["query"],
            ),
            effect=Effect.READ,
            module=MODULE,
            run=run,
            prompt_rules=PROMPT_RULES,
            action="search",
            shape=Shape.PASSAGES,
        )
    ]
