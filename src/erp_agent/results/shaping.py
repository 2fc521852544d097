"""Result shaping, the same for every channel (the loop, MCP, the OpenAI-compatible API, the
relay): what the calling model sees of a gateway outcome, and what is shown to the user.

Each tool declares its shape (``tools.base.Shape``); nothing here or in a channel looks at tool
names. A result is stored under an id owned by the user; the model sees all of a small one and
an exact summary and a page of a big one (``model_view``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, cast

from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.metrics.drill import DrillTotal, total_refs
from erp_agent.results.blocks import (
    Block,
    Citation,
    CitationsBlock,
    choices_block,
    proposal_block,
)
from erp_agent.results.model_view import for_model
from erp_agent.results.render import definition_of
from erp_agent.results.store import ResultStore
from erp_agent.tools.base import Definition, Shape, ToolRegistry

SHOWN = "Shown to the user."


class ShapedDefinition(Definition):
    """A result's definition as a turn reports it (the API's and the CLI's ``--json``): with
    the stored result's id and each total's drill-down reference, when its figures open."""

    result_id: NotRequired[str]
    drill: NotRequired[list[DrillTotal]]


@dataclass
class Shaped:
    """One outcome, shaped: ``content`` for the model, ``blocks`` for the user."""

    content: dict[str, Any]
    blocks: list[Block] = field(default_factory=list)
    # An OK result as the tool returned it (every figure in an answer must trace back to one).
    data: Any = None
    result_id: str | None = None
    offer: list[str] = field(default_factory=list)  # tools the result made available
    citations: list[Citation] = field(default_factory=list)  # the knowledge passages cited
    definition: ShapedDefinition | None = None  # how the figures were computed, in words
    shown: str | None = None  # the result id now shown as a table or chart

    @property
    def stored(self) -> bool:
        return self.result_id is not None


def citation(passage: Mapping[str, Any]) -> Citation:
    """A knowledge passage as the user sees it cited: its title and where it is from."""
    return {"title": passage.get("title"), "source": passage.get("source")}


def citations_block(citations: Sequence[Citation]) -> CitationsBlock:
    return {"type": "citations", "items": list(citations)}


class ResultShaper:
    def __init__(self, registry: ToolRegistry, results: ResultStore) -> None:
        self.registry = registry
        self.results = results

    async def shape(self, session: Session, outcome: Outcome) -> Shaped:
        if outcome.status is Status.PROPOSAL and outcome.proposal:
            return Shaped(outcome.for_model(), [proposal_block(outcome.proposal)])
        # A name that fits several records: the user picks one (the value is its id).
        blocks: list[Block] = [choices_block(outcome.choices)] if outcome.choices else []
        if outcome.status is not Status.OK:
            return Shaped(outcome.for_model(), blocks)
        tool = self.registry.get(outcome.tool)
        shape = tool.shape if tool is not None else Shape.ROWS
        data = outcome.data
        if (
            shape is Shape.DISPLAY
            and isinstance(data, dict)
            and isinstance(data.get("block"), dict)
        ):
            # A display tool's result carries the block it made (``display.*``, an export).
            block: Block = data["block"]
            shown = None
            if block["type"] == "table" or block["type"] == "chart":
                shown = str(block.get("result_id") or "") or None
            # What the tool says about what it showed (a chart's series as drawn) goes back to
            # the model, so it can check the chart is the one it meant.
            told = {k: v for k, v in data.items() if k != "block"}
            content = {"status": "ok", "result": SHOWN, **told}
            return Shaped(content, [*blocks, block], shown=shown)
        shaped = Shaped({}, blocks, data=data)
        if shape is Shape.TOOL_SEARCH and isinstance(data, dict):
            shaped.offer = [
                str(hit["name"])
                for hit in data.get("tools", [])
                if isinstance(hit, dict) and hit.get("name") in session.allowed_tools
            ]
        if shape is Shape.PASSAGES and isinstance(data, dict):
            shaped.citations = [
                citation(p) for p in data.get("passages", []) if isinstance(p, dict)
            ]
        entity = tool.entity if tool else None
        if entity is None and isinstance(data, dict) and isinstance(data.get("entity"), str):
            entity = data["entity"]  # records of the one entity the result names (a drill-down)
        shaped.result_id = await self.results.put(session.user, outcome.tool, data, entity)
        definition = definition_of(data)
        if definition is not None:
            shaped.definition = cast(ShapedDefinition, definition)  # the tool's, as it is
            totals = total_refs(shaped.result_id, data)
            if totals:
                # Every figure opens its documents: the totals' references travel with the
                # definition (the API's and the CLI's --json), the rows' with their blocks.
                shaped.definition = {
                    **shaped.definition,
                    "result_id": shaped.result_id,
                    "drill": totals,
                }
        shaped.content = {"status": "ok", **for_model(shaped.result_id, data, shape)}
        return shaped
