"""Prompt tokens per request with routing vs with every permitted tool offered, over the seed
questions, with needed-tool recall; then follow-ups routed as the engine routes them (against
the conversation's tools so far), with their recall and how many keep the tools array as it
was. Tokens are estimated (characters / 4) over the exact system prompt and tool schemas the
engine would send; no model is called.

    uv run python benchmarks/engine_routing.py
"""

from __future__ import annotations

import datetime as dt
import json
import statistics

from erp_agent.catalog import load_catalog
from erp_agent.connectors.credentials import Credential
from erp_agent.engine import prompt
from erp_agent.engine.routing import Router
from erp_agent.gateway.session import Session
from erp_agent.runtime import build_registry
from erp_agent.tools.base import Effect

# (question, a tool that must be offered to answer it) — the families of seed-questions.md.
QUESTIONS = [
    ("Which customer invoices are overdue by more than 30 days?", "sales_invoice.list"),
    (
        "Who owes us more than $10,000 and is more than 60 days overdue?",
        "report.accounts_receivable",
    ),
    ("Find Sales Invoice ACC-SINV-2026-00456 and tell me if it's been paid.", "sales_invoice.get"),
    ("What's the status of PO PUR-ORD-2026-00087?", "purchase_order.get"),
    ("How many open sales orders do we have?", "sales_order.count"),
    ("How many leave applications are pending?", "leave_application.count"),
    ("What did we bill the Nakuru branch in Q2?", "sales_invoice.aggregate"),
    ("Revenue by month this year", "sales_invoice.aggregate"),
    ("Purchases by supplier last quarter", "purchase_invoice.aggregate"),
    ("Show me the top 5 customers by revenue this quarter as a chart.", "display.chart"),
    ("How are sales trending?", "analytics.trend"),
    ("Compare this year's P&L with last year's", "report.profit_and_loss"),
    ("What are our overdue receivables?", "report.accounts_receivable"),
    ("Accounts payable ageing", "report.accounts_payable"),
    ("What's our P&L for this fiscal year, broken down monthly?", "report.profit_and_loss"),
    ("Balance sheet as of last month end", "report.balance_sheet"),
    ("General ledger for account Debtors in March", "report.general_ledger"),
    ("What's the current stock balance across all warehouses?", "report.stock_balance"),
    ("Which items are below reorder level?", "item.list"),
    ("How dependent are we on our top 3 customers?", "analytics.concentration"),
    ("Why can't I submit this purchase order PUR-ORD-2026-00087?", "purchase_order.workflow"),
    ("What is waiting for my approval?", "purchase_order.list"),
    ("Create a quotation for Acme Ltd for 20 units of SKU-4410-BLK", "quotation.create"),
    ("Approve PO PUR-ORD-2026-00087", "purchase_order.workflow_action"),
    ("Mark this lead as qualified", "lead.update"),
]

# (first question, follow-up, a tool the follow-up needs offered).
FOLLOW_UPS = [
    ("Revenue by month this year", "and last year?", "sales_invoice.aggregate"),
    ("How many open sales orders do we have?", "which customers are they for?", "sales_order.aggregate"),
    ("How many open sales orders do we have?", "what credit limit do those customers have?", "customer.get"),
    ("What are our overdue receivables?", "show the top 5 as a chart", "display.chart"),
    ("List this month's sales invoices", "export that to Excel", "results.export"),
    ("Show me the open purchase orders", "the next ones please", "results.page"),
    ("Purchases by supplier last quarter", "how is that trending?", "analytics.trend"),
    ("What's the current stock balance across all warehouses?", "which items are below reorder level?", "item.list"),
    ("How many leave applications are pending?", "list them", "leave_application.list"),
    ("Show me the open purchase orders", "approve the first one", "purchase_order.workflow_action"),
]  # fmt: skip


def tokens(text: str) -> int:
    return len(text) // 4


def main() -> None:
    catalog = load_catalog()
    registry = build_registry(catalog)
    router = Router(catalog, registry, "erpnext")
    session = Session(
        "bench", "admin@demo.local", Credential.token("a", "k", "s"), frozenset({"System Manager"}),
        allowed_tools=frozenset(registry.names()),
    )  # fmt: skip
    today = dt.date(2026, 11, 30)
    routed, everything, hits = [], [], 0
    for question, needed in QUESTIONS:
        route = router.route(question, session)
        offered = [registry.get(n) for n in route.offered]
        tools = [t for t in offered if t is not None]
        parts, _ = prompt.build(
            session,
            route.modules,
            tools,
            set(),
            today,
            can_write=any(t.effect is Effect.WRITE for t in tools),
        )
        routed.append(tokens(parts.text) + tokens(json.dumps([t.schema() for t in tools])))
        all_tools = list(registry)
        parts_all, _ = prompt.build(
            session, list(catalog.modules), all_tools, set(), today, can_write=True
        )
        everything.append(
            tokens(parts_all.text) + tokens(json.dumps([t.schema() for t in all_tools]))
        )
        found = needed in route.offered
        hits += found
        if not found:
            print(f"  needed tool not offered: {needed!r} for {question!r}")
    print(f"questions: {len(QUESTIONS)}; tools registered: {len(registry)}")
    print(
        f"prompt tokens with routing      : median {statistics.median(routed):>8,.0f}   max {max(routed):>8,}"
    )
    print(
        f"prompt tokens, all tools offered: median {statistics.median(everything):>8,.0f}   max {max(everything):>8,}"
    )
    print(
        f"reduction: {statistics.median(everything) / statistics.median(routed):.1f}x fewer tokens (median)"
    )
    print(f"needed-tool recall: {hits}/{len(QUESTIONS)} = {hits / len(QUESTIONS):.0%}")
    follow_ups(router, session)


def follow_ups(router: Router, session: Session) -> None:
    hits = same = 0
    for first, then, needed in FOLLOW_UPS:
        before = router.route(first, session)
        state = {"offered": before.offered, "modules": before.modules, "entities": before.entities}
        after = router.follow(router.route(then, session), state, session)
        found = needed in after.offered
        hits += found
        same += after.offered == before.offered
        if not found:
            print(f"  needed tool not offered: {needed!r} for {first!r} → {then!r}")
    n = len(FOLLOW_UPS)
    print(
        f"follow-ups: needed-tool recall {hits}/{n} = {hits / n:.0%}; tools array unchanged {same}/{n}"
    )


if __name__ == "__main__":
    main()
