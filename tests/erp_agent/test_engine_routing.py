"""Deterministic routing: the request's words pick modules and tools, under a hard cap."""

from __future__ import annotations

import pytest

from erp_agent.catalog import load_catalog
from erp_agent.connectors.credentials import Credential
from erp_agent.engine.routing import DEFAULT_CAP, Router
from erp_agent.gateway.session import Session
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


def test_revenue_question_offers_invoice_reads_not_writes() -> None:
    route = ROUTER.route(
        "Show me the top 5 customers by revenue this quarter as a chart", session()
    )
    assert "selling" in route.modules or "accounting" in route.modules
    assert "sales_invoice.aggregate" in route.offered
    assert "display.chart" in route.offered
    assert not route.wants_write
    assert all(REGISTRY.get(n).effect is Effect.READ for n in route.offered)  # type: ignore[union-attr]
    assert not any(n.startswith("salary_slip.") for n in route.offered)
    assert len(route.offered) <= DEFAULT_CAP


def test_hr_question_routes_to_hr() -> None:
    route = ROUTER.route("How many leave applications are pending?", session())
    assert "hr" in route.modules
    assert "leave_application.count" in route.offered


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
    assert all(
        "." in n
        and n.split(".")[0]
        in {
            "tools",
            "calculator",
            "display",
            "knowledge",
            "records",
            "results",
            "analytics",
            "workflow",
            "metrics",
        }
        for n in route.offered
    )
    assert "metrics.query" not in route.offered
    assert "metrics.catalog" in route.offered  # the spine always offers the metric list


@pytest.mark.parametrize(
    "question",
    [
        "Revenue by month this year",
        "How much did the Kisumu branch bill in Q2?",
        "What is our headcount?",
        "Overdue receivables",
        "How many leave applications are pending?",
    ],
)
def test_figure_questions_are_offered_the_metric_layer(question: str) -> None:
    route = ROUTER.route(question, session())
    assert "metrics.query" in route.offered
    assert "metrics.catalog" in route.offered
    assert len(route.offered) <= DEFAULT_CAP


def _follow(first: str, then: str, s: Session | None = None) -> tuple[list[str], list[str]]:
    """The tools offered to ``first``, and to ``then`` as its follow-up (as the engine keeps
    the conversation's state between the two turns)."""
    s = s or session()
    before = ROUTER.route(first, s)
    state = {"offered": before.offered, "modules": before.modules, "entities": before.entities}
    return before.offered, ROUTER.follow(ROUTER.route(then, s), state, s).offered


def test_a_follow_up_keeps_the_conversations_tools() -> None:
    """Nothing new named: the tools array is the same, so a prefix cache holds. Routed alone,
    the same words would add a fallback aggregate at the end of a different list."""
    before, after = _follow("Show me this quarter's purchase invoices", "and the quarter before?")
    assert after == before
    alone = ROUTER.route("and the quarter before?", session()).offered
    assert "analytics.aggregate" in alone
    assert "results.page" in before  # what a follow-up about the last result needs


def test_a_linked_entity_is_a_grouping_of_the_records_in_play() -> None:
    """'who are the suppliers on them?' groups the purchase orders by their supplier link with
    the aggregate already offered: no tools are added, so the prefix cache holds. A field of
    the linked records' own ('what credit limit ...'), or naming them without referring back
    to the records in play, adds the tools that read them, only those; a subject of its own is
    routed as before."""
    before, after = _follow(
        "Which purchase orders are still open?", "who are the suppliers on them?"
    )
    assert after == before
    assert "purchase_order.aggregate" in before
    before, after = _follow(
        "How many open sales orders do we have?", "what credit limit do those customers have?"
    )
    assert after[: len(before)] == before
    added = after[len(before) :]
    assert {"customer.list", "customer.get"} <= set(added)
    assert not {"customer.count", "customer.aggregate"} & set(added)
    # Not about the records in play: the suppliers' own reading tools, as before.
    before, after = _follow("Which purchase orders are still open?", "show me the suppliers")
    assert {"supplier.list", "supplier.get"} <= set(after[len(before) :])
    # As a question of its own, the same entity gets its counts and sums.
    assert "supplier.count" in ROUTER.route("How many suppliers do we have?", session()).offered
    _, after = _follow("Which purchase orders are still open?", "how many employees do we have?")
    assert "employee.count" in after


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
