"""tools.search ranks tools by what they do (the search index's hybrid retrieval over tool
descriptions, with a threshold): a salary-slip request enables salary-slip tools, never the
sales tools that share a word with it; a tool asked for by name comes alone."""

from __future__ import annotations

import pytest

from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.credentials import Credential
from erp_agent.retrieval.embeddings import default_embedder
from erp_agent.runtime import build_registry
from erp_agent.tools.base import Effect, ToolContext
from erp_agent.tools.modules.discovery import MAX_HITS, ToolIndex, search_tool

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
REGISTRY = build_registry(CATALOG)
ALLOWED = frozenset(REGISTRY.names())


@pytest.fixture(scope="module")
def index() -> ToolIndex:
    return ToolIndex(REGISTRY, default_embedder())


@pytest.mark.parametrize(
    ("query", "prefix"),
    [
        ("salary slips by employee", ("salary_slip.", "employee.")),
        ("expense claims by employee", ("expense_claim.", "employee.")),
        ("item prices by price list", ("item_price.", "price_list.", "prices.")),
        ("leave applications waiting", ("leave_application.", "workflow.")),
    ],
)
def test_only_tools_that_do_what_is_asked(
    index: ToolIndex, query: str, prefix: tuple[str, ...]
) -> None:
    found = index.rank(query, ALLOWED)
    assert found, query
    assert found[0].startswith(prefix), found
    assert not any(n.startswith(("sales_invoice.", "sales_order.", "quotation.")) for n in found)
    # A request for records never enables a change.
    assert all(REGISTRY.get(n).effect is Effect.READ for n in found), found  # type: ignore[union-attr]


def test_a_change_is_found_when_asked(index: ToolIndex) -> None:
    assert index.rank("approve purchase order", ALLOWED)[0] == "purchase_order.workflow_action"


def test_a_tool_named_comes_alone(index: ToolIndex) -> None:
    assert index.named("customer list", ALLOWED) == ["customer.list"]
    assert index.named("analytics.trend", ALLOWED) == ["analytics.trend"]
    assert index.named("sales invoice get", ALLOWED) == ["sales_invoice.get"]


def test_nothing_is_found_for_what_no_tool_does(index: ToolIndex) -> None:
    assert index.rank("book a flight to Mombasa", ALLOWED) == []


async def test_the_tool_enables_few_and_only_permitted_tools() -> None:
    tool = search_tool(REGISTRY, default_embedder())
    session = Session(
        "s", "u@x", Credential.token("u@x", "k", "s"), frozenset({"HR User"}),
        allowed_tools=frozenset({"salary_slip.list", "salary_slip.aggregate", "sales_invoice.list"}),
    )  # fmt: skip
    ctx = ToolContext(session, None, CATALOG)  # type: ignore[arg-type]
    assert tool.run is not None
    found = await tool.run(ctx, {"query": "salary slips by employee"})
    names = [t["name"] for t in found["tools"]]
    assert names
    assert set(names) <= {"salary_slip.list", "salary_slip.aggregate"}
    assert len(names) <= MAX_HITS


def test_keywords_alone_keep_the_threshold() -> None:
    """Without an embedder (embeddings = none) the keyword leg decides, with its threshold."""
    keyword = ToolIndex(REGISTRY, None)
    found = keyword.rank("salary slips by employee", ALLOWED)
    assert found
    assert all(n.startswith(("salary_slip.", "employee.")) for n in found), found
