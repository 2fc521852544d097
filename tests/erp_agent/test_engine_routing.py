"""Deterministic routing: the request's words pick modules and tools, under a hard cap."""

from __future__ import annotations

import pytest

from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.credentials import Credential
from erp_agent.engine.routing import DEFAULT_CAP, SPINE, Router
from erp_agent.runtime import build_registry
from erp_agent.tools.base import Effect

CATALOG = load_catalog()
REGISTRY = build_registry(CATALOG)
ROUTER = Router(CATALOG, REGISTRY, "erpnext")


def session(allowed: set[str] | None = None, read_only: bool = False) -> Session:
    return Session(
        "s", "u@x", Credential.token("u@x", "k", "s"), frozenset({"System Manager"}),
        allowed_tools=frozenset(allowed if allowed is not None else REGISTRY.names()), read_only=read_only,
    )  # fmt: skip


def test_revenue_question_offers_the_figure_tool_not_records_or_writes() -> None:
    route = ROUTER.route(
        "Show me the top 5 customers by revenue this quarter as a chart", session()
    )
    assert "selling" in route.modules or "accounting" in route.modules
    assert route.offered[: len(SPINE)] == list(SPINE)
    assert {"metrics.query", "display.chart", "analytics.concentration"} <= set(route.offered)
    assert not route.wants_write
    assert all(REGISTRY.get(n).effect is Effect.READ for n in route.offered)  # type: ignore[union-attr]
    assert not any(n.startswith(("salary_slip.", "sales_invoice.")) for n in route.offered)
    assert len(route.offered) <= DEFAULT_CAP


def test_hr_question_routes_to_hr_and_its_metric() -> None:
    route = ROUTER.route("How many leave applications are pending?", session())
    assert "hr" in route.modules
    assert "metrics.query" in route.offered  # leave_applications_pending answers it
    assert not any(n.startswith("leave_application.") for n in route.offered)
    counted = ROUTER.route("How many departments do we have?", session())
    assert "department.count" in counted.offered  # no metric counts departments


def test_writes_only_when_asked_and_tenant_can_write() -> None:
    asked = ROUTER.route("Create a quotation for Acme Ltd for 20 units of SKU-4410-BLK", session())
    assert asked.wants_write
    assert "quotation.create" in asked.offered
    read_only = ROUTER.route("Create a quotation for Acme Ltd", session(read_only=True))
    assert "quotation.create" not in read_only.offered


def test_document_id_is_recognised() -> None:
    route = ROUTER.route("Approve PO PUR-ORD-2026-00087", session())
    assert ("purchase_order", "PUR-ORD-2026-00087") in route.document_ids
    assert "purchase_order.get" in route.offered
    assert "purchase_order.workflow_action" in route.offered


def test_related_modules_widen_together() -> None:
    route = ROUTER.route("Which leads turned into invoices last month?", session())
    assert {"crm", "selling"} <= set(route.modules)


def test_role_filter_comes_first() -> None:
    narrow = session({"sales_invoice.list", "tools.search"})
    route = ROUTER.route("total revenue by month", narrow)
    assert set(route.offered) <= {"sales_invoice.list", "tools.search"}


@pytest.mark.parametrize("question", ["What will the weather be?", "hello"])
def test_out_of_scope_gets_only_the_spine(question: str) -> None:
    route = ROUTER.route(question, session())
    assert route.offered == list(SPINE)


@pytest.mark.parametrize(
    "question",
    [
        "Revenue by month this year",
        "How much did the Kisumu branch bill in Q2?",
        "What is our headcount?",
        "Overdue receivables",
        "How many leave applications are pending?",
        "customers over 500k and 60 days late",
    ],
)
def test_figure_questions_are_offered_the_metric_layer(question: str) -> None:
    route = ROUTER.route(question, session())
    assert "metrics.query" in route.offered
    assert "metrics.catalog" in route.offered
    assert len(route.offered) <= DEFAULT_CAP


@pytest.mark.parametrize(
    "question",
    [
        "customers over 500k and 60 days late",
        "What are our overdue receivables?",
        "which invoices are past due",
        "receivables ageing",
    ],
)
def test_ageing_and_overdue_questions_are_offered_the_ageing_tool(question: str) -> None:
    assert "analytics.ageing" in ROUTER.route(question, session()).offered


def test_a_report_needing_a_company_is_offered_with_the_users_companies() -> None:
    """The schema sent names the user's permitted companies and fills their own default."""
    report = REGISTRY.get("report.accounts_receivable")
    assert report is not None
    user = session()
    user.default_company = "Savanna Trading Ltd"
    sent = report.schema(user, {"Company": ("Savanna Trading Ltd", "Highland Goods")})
    company = sent["function"]["parameters"]["properties"]["company"]
    assert company["enum"] == ["Savanna Trading Ltd", "Highland Goods"]
    assert company["default"] == "Savanna Trading Ltd"
    assert "company" not in sent["function"]["parameters"].get("required", [])
    assert report.parameters["required"] == ["company"]  # the gateway's check is unchanged


def _follow(first: str, then: str, s: Session | None = None) -> tuple[list[str], list[str]]:
    """The tools offered to ``first``, and to ``then`` as its follow-up (as the engine keeps
    the conversation's state between the two turns)."""
    s = s or session()
    before = ROUTER.route(first, s)
    state = {"offered": before.offered, "modules": before.modules, "entities": before.entities}
    return before.offered, ROUTER.follow(ROUTER.route(then, s), state, s).offered


def test_a_follow_up_keeps_the_conversations_tools() -> None:
    """Nothing new named: the tools array is the same, so a prefix cache holds; a follow-up
    never drops a tool (writes included) and only appends."""
    before, after = _follow("Show me this quarter's purchase invoices", "and the quarter before?")
    assert after == before
    before, after = _follow("Approve PO PUR-ORD-2026-00087", "what is its total?")
    assert "purchase_order.workflow_action" in before
    assert after[: len(before)] == before


def test_a_linked_entity_is_a_grouping_of_the_records_in_play() -> None:
    """'who are the suppliers on them?' groups the purchase orders by their supplier link: no
    tools are added, so the prefix cache holds. A field of the linked records' own ('what
    credit limit ...') adds the tools that read them, only those."""
    before, after = _follow(
        "Which purchase orders are still open?", "who are the suppliers on them?"
    )
    assert after == before
    assert "purchase_order.list" in before
    before, after = _follow(
        "How many open sales orders do we have?", "what credit limit do those customers have?"
    )
    assert after[: len(before)] == before
    added = after[len(before) :]
    assert {"customer.list", "customer.get"} <= set(added)
    assert not {"customer.count", "customer.aggregate"} & set(added)
    before, after = _follow("Which purchase orders are still open?", "show me the suppliers")
    assert {"supplier.list", "supplier.get"} <= set(after[len(before) :])
    assert "supplier.count" in ROUTER.route("How many suppliers do we have?", session()).offered


def test_a_ranking_of_the_last_result_adds_no_analysis() -> None:
    """'the top 5 as a chart' ranks the last result with the aggregate it has; as a question of
    its own 'top' also offers the concentration analysis, and a follow-up asking how dependent
    we are on them still gets it."""
    before, after = _follow("What are our overdue receivables?", "show the top 5 as a chart")
    assert after == before
    assert "display.chart" in before
    alone = ROUTER.route("Show me the top 5 customers by revenue", session()).offered
    assert "analytics.concentration" in alone
    _, after = _follow("What are our overdue receivables?", "how dependent are we on the top 5?")
    assert "analytics.concentration" in after


def test_a_change_that_names_nothing_acts_on_the_conversations_records() -> None:
    before, after = _follow("Show me the open purchase orders", "submit the second one")
    assert "purchase_order.submit" not in before
    assert "purchase_order.submit" in after
    _, read_only = _follow(
        "Show me the open purchase orders", "submit the second one", session(read_only=True)
    )
    assert not any(n.endswith(".submit") for n in read_only)
