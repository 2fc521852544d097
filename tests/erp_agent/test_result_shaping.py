"""Result shaping is declared on the tool and shared by every channel: a tool's name decides
nothing (the loop, MCP, the OpenAI-compatible API and the relay all call the same shaper)."""

from __future__ import annotations

import pytest

from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.connectors.credentials import Credential
from erp_agent.results.model_view import INLINE_CHARS
from erp_agent.results.shaping import SHOWN, ResultShaper
from erp_agent.results.store import MemoryResultStore
from erp_agent.tools.base import Args, Effect, Shape, Tool, ToolContext, ToolRegistry

pytestmark = pytest.mark.anyio


async def _noop(ctx: ToolContext, args: Args) -> object:
    return None


def _tool(name: str, shape: Shape) -> Tool:
    return Tool(name, "test", {"type": "object"}, Effect.READ, "test", run=_noop, shape=shape)


def _session(*allowed: str) -> Session:
    return Session(
        "s1", "u@x", Credential.session("u@x", "sid"), frozenset(), allowed_tools=frozenset(allowed)
    )


@pytest.fixture
def shaper() -> ResultShaper:
    registry = ToolRegistry([
        _tool("odd.finder", Shape.TOOL_SEARCH), _tool("odd.show", Shape.DISPLAY),
        _tool("odd.sum", Shape.WHOLE), _tool("odd.rows", Shape.ROWS),
        _tool("odd.passages", Shape.PASSAGES),
    ])  # fmt: skip
    return ResultShaper(registry, MemoryResultStore())


async def test_a_tool_search_result_offers_only_permitted_tools(shaper: ResultShaper) -> None:
    data = {"tools": [{"name": "lead.list"}, {"name": "salary_slip.list"}]}
    shaped = await shaper.shape(_session("lead.list"), Outcome(Status.OK, "odd.finder", data=data))
    assert shaped.offer == ["lead.list"]
    assert shaped.stored


async def test_a_display_result_is_a_block_for_the_user_not_data_for_the_model(
    shaper: ResultShaper,
) -> None:
    block = {"type": "table", "result_id": "res_1"}
    shaped = await shaper.shape(_session(), Outcome(Status.OK, "odd.show", data={"block": block}))
    assert shaped.content == {"status": "ok", "result": SHOWN}
    assert shaped.blocks == [block]
    assert shaped.shown == "res_1"
    assert not shaped.stored


async def test_big_rows_are_summarised_but_an_analysis_goes_whole(shaper: ResultShaper) -> None:
    rows = [{"id": f"R{i}", "amount": i, "note": "x" * 40} for i in range(400)]
    assert len(str(rows)) > INLINE_CHARS
    paged = await shaper.shape(_session(), Outcome(Status.OK, "odd.rows", data={"rows": rows}))
    assert len(paged.content["page"]) == 20
    assert paged.content["summary"]["row_count"] == 400
    whole = await shaper.shape(_session(), Outcome(Status.OK, "odd.sum", data={"rows": rows}))
    assert whole.content["result"] == {"rows": rows}


async def test_proposals_choices_and_passages_become_blocks(shaper: ResultShaper) -> None:
    proposal = Outcome(Status.PROPOSAL, "lead.create", proposal={"id": "prop_1", "summary": "s"})
    shaped = await shaper.shape(_session(), proposal)
    assert shaped.blocks == [{"type": "proposal", "id": "prop_1", "summary": "s"}]
    assert shaped.content["status"] == "proposal"
    choices = {"type": "choices", "question": "Which?", "options": []}
    refused = Outcome(Status.INVALID, "odd.rows", message="which one?", choices=choices)
    assert (await shaper.shape(_session(), refused)).blocks == [choices]
    passages = {"passages": [{"title": "Closing", "source": "kb/closing.md", "text": "t"}]}
    cited = await shaper.shape(_session(), Outcome(Status.OK, "odd.passages", data=passages))
    assert cited.citations == [{"title": "Closing", "source": "kb/closing.md"}]
