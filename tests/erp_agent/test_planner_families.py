"""The offline planner answers every question family against the demo ERP through the real
engine; figures are checked against independent SQL on the demo database."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import TEST_TODAY, DemoERP
from erp_agent.calls.session import Session
from erp_agent.config import EngineSettings, Settings
from erp_agent.errors import ModelUnavailable
from erp_agent.evals.score import figure_present, grounded, plain, tool_sources
from erp_agent.gateway.signin import sign_in
from erp_agent.models.base import ChatModel, Completion, Message
from erp_agent.planner import FallbackModel, OfflinePlanner
from erp_agent.planner.read_as import split
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio


@dataclass
class Answer:
    text: str
    tools: list[str]
    calls: list[dict[str, Any]]
    blocks: list[dict[str, Any]]
    outcome: str
    grounded: bool


class Agent:
    def __init__(self, runtime: Runtime, model: ChatModel) -> None:
        self.runtime, self.model = runtime, model
        self.sessions: dict[str, Session] = {}

    async def session(self, user: str) -> Session:
        if user not in self.sessions:
            rt = self.runtime
            self.sessions[user] = await sign_in(rt.connector, rt.registry, rt.policy, user, "demo")
        return self.sessions[user]

    async def ask(self, question: str, user: str = "admin@demo.local") -> Answer:
        engine = self.runtime.engine(self.model, EngineSettings(today=TEST_TODAY))
        response = await engine.run_turn(await self.session(user), question)
        turns = await self.runtime.store.turns(response.conversation_id)
        sources = tool_sources(turns[-1].state["messages"])
        whole = plain("\n".join(b["markdown"] for b in response.blocks if b["type"] == "text"))
        text = split(whole)[1]  # the answer after its "Read as:" line
        return Answer(
            text, [c["name"] for c in response.tools_called], response.tools_called,
            response.blocks, response.outcome, grounded(whole, sources, question),
        )  # fmt: skip


@pytest.fixture
async def agent(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Agent]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    runtime = await Runtime.create(Settings(erp_url=demo_erp.url), store=store)
    yield Agent(runtime, OfflinePlanner(runtime.catalog))
    await runtime.aclose()


def sql(demo_erp: DemoERP, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(demo_erp.path) as conn:
        return list(conn.execute(query, params))


# ------------------------------------------------------------------ exact plane


async def test_filtered_list_counts_and_links(agent: Agent, demo_erp: DemoERP) -> None:
    cutoff = (TEST_TODAY - dt.timedelta(days=30)).isoformat()
    [(n,)] = sql(demo_erp, "select count(*) from `tabSales Invoice` where status='Overdue' "
                 "and due_date < ? and branch='Kisumu'", cutoff)  # fmt: skip
    a = await agent.ask(
        "Which customer invoices are overdue by more than 30 days?", "kisumu.manager@demo.local"
    )
    assert a.tools[:2] == ["sales_invoice.list", "sales_invoice.count"]
    assert a.text.startswith(f"{n} sales invoices")
    assert a.grounded
    assert n < 2 or any(b["type"] == "table" for b in a.blocks)


async def test_how_old_what_customers_owe_is_aged_per_currency(
    agent: Agent, demo_erp: DemoERP
) -> None:
    """'How old are our unpaid customer invoices?': the ageing analysis, one currency at a
    time (outstanding of submitted invoices, by days past due), never a list or a mixed sum."""
    rows = sql(demo_erp, "select currency, sum(outstanding_amount), sum(case when due_date < ? "
               "then outstanding_amount else 0 end) from `tabSales Invoice` where docstatus=1 "
               "and outstanding_amount != 0 group by currency", TEST_TODAY.isoformat())  # fmt: skip
    assert len(rows) > 1
    a = await agent.ask("how old are our unpaid customer invoices?", "accounts.manager@demo.local")
    assert a.tools == ["analytics.ageing"]
    for currency, owed, overdue in rows:
        assert f"{currency}: As of" in a.text, a.text
        assert figure_present(a.text, round(owed, 2)), a.text
        assert figure_present(a.text, round(overdue, 2)), a.text
    mixed = sum(r[1] for r in rows)
    assert not figure_present(a.text, round(mixed, 2))
    assert a.grounded


async def test_what_customers_owe_past_an_age_is_their_invoices_outstanding(
    agent: Agent, demo_erp: DemoERP
) -> None:
    """An age is of documents with a due date: 'what customers owe that is more than 90 days
    old' sums the outstanding of their invoices due before the cutoff, per currency (not the
    invoices' totals, not a count)."""
    cutoff = (TEST_TODAY - dt.timedelta(days=90)).isoformat()
    rows = sql(demo_erp, "select currency, sum(outstanding_amount), sum(grand_total) from "
               "`tabSales Invoice` where docstatus=1 and outstanding_amount > 0 and due_date < ? "
               "group by currency", cutoff)  # fmt: skip
    a = await agent.ask(
        "how much of what customers owe is more than 90 days old?", "accounts.manager@demo.local"
    )
    for _, owed, billed in rows:
        assert figure_present(a.text, round(owed, 2)), a.text
        if round(billed, 2) != round(owed, 2):
            assert not figure_present(a.text, round(billed, 2)), a.text
    assert a.grounded


async def test_unpaid_means_not_yet_paid_not_only_the_status_called_unpaid(
    agent: Agent, demo_erp: DemoERP
) -> None:
    # ERPNext's own terms: submitted, not a return, something still outstanding (its statuses
    # Unpaid, Overdue and Partly Paid); the status named "Unpaid" alone leaves overdue ones out.
    [(n,)] = sql(demo_erp, "select count(*) from `tabPurchase Invoice` where docstatus=1 "
                 "and is_return=0 and outstanding_amount > 0")  # fmt: skip
    [(literal,)] = sql(demo_erp, "select count(*) from `tabPurchase Invoice` where docstatus=1 "
                       "and is_return=0 and status='Unpaid'")  # fmt: skip
    assert literal < n  # the data set tells the two meanings apart
    a = await agent.ask("number of unpaid supplier bills", "accounts.manager@demo.local")
    assert a.tools == ["metrics.query"]
    assert f"Purchase invoices: {n}." in a.text, a.text


async def test_count_with_status_words(agent: Agent, demo_erp: DemoERP) -> None:
    # The open_sales_orders metric: submitted orders not Completed or Closed.
    [(n,)] = sql(demo_erp, "select count(*) from `tabSales Order` where docstatus=1 and status "
                 "not in ('Completed','Closed')")  # fmt: skip
    a = await agent.ask("How many open sales orders do we have?")
    assert a.tools == ["metrics.query"]
    assert f"Open sales orders: {n}." in a.text


async def test_branch_total_for_a_quarter(agent: Agent, demo_erp: DemoERP) -> None:
    rows = sql(demo_erp, "select currency, sum(grand_total) from `tabSales Invoice` where branch='Nakuru' "
               "and posting_date between '2026-04-01' and '2026-06-30' group by currency")  # fmt: skip
    a = await agent.ask("What did we bill the Nakuru branch in Q2?")
    # The billed metric (incl. tax), filtered by the branch found in the master data.
    assert a.tools[-1] == "metrics.query"
    assert rows
    for _currency, total in rows:
        assert figure_present(a.text, round(total, 2)), a.text
    assert a.grounded


async def test_top_n_with_a_chart(agent: Agent, demo_erp: DemoERP) -> None:
    # Revenue: submitted invoices' base_net_total, top 5 per company currency (KES the larger).
    rows = sql(demo_erp, "select customer, sum(base_net_total) s from `tabSales Invoice` where posting_date "
               "between '2026-10-01' and '2026-12-31' and docstatus=1 and currency='KES' "
               "group by customer order by s desc limit 5")  # fmt: skip
    a = await agent.ask("Show me the top 5 customers by revenue this quarter as a chart.")
    assert a.tools == ["metrics.query", "display.chart"]
    assert [b for b in a.blocks if b["type"] == "chart"]
    for customer, total in rows:
        assert customer in a.text
        assert figure_present(a.text, round(total, 2))


async def test_group_by_month_and_trend(agent: Agent, demo_erp: DemoERP) -> None:
    march = dict(sql(demo_erp, "select currency, sum(base_net_total) from `tabSales Invoice` where docstatus=1 "
                     "and posting_date between '2026-03-01' and '2026-03-31' group by currency"))  # fmt: skip
    a = await agent.ask("Revenue by month this year")
    assert a.tools[0] == "metrics.query"
    # Currencies are never added together: each month's total is per currency.
    assert figure_present(a.text, round(march["KES"], 2))
    assert not figure_present(a.text, round(march["KES"] + march["USD"], 2))
    table = next(b for b in a.blocks if b["type"] in ("table", "chart"))
    shown = json.dumps(table)
    assert all(str(round(v, 2)) in shown for v in march.values())
    assert a.grounded
    trend = await agent.ask("How are sales trending?")
    assert trend.grounded
    assert any(b["type"] == "chart" for b in trend.blocks) or "analytics.trend" in trend.tools


async def test_one_document_status(agent: Agent, demo_erp: DemoERP) -> None:
    [(name, status, total)] = sql(demo_erp, "select name, status, grand_total from `tabSales Invoice` "
                                  "order by name desc limit 1 offset 7")  # fmt: skip
    a = await agent.ask(f"Find Sales Invoice {name} and tell me if it's been paid.")
    assert a.tools == ["sales_invoice.get"]
    assert name in a.text
    assert f"status {status}" in a.text
    assert figure_present(a.text, total)


async def test_financial_statement_report(agent: Agent) -> None:
    a = await agent.ask(
        "What's our P&L for Savanna Trading Ltd this fiscal year, broken down monthly?"
    )
    assert "report.profit_and_loss" in (await agent.session("admin@demo.local")).allowed_tools
    call = next(c for c in a.calls if c["name"] == "report.profit_and_loss")
    assert call["arguments"]["periodicity"] == "monthly"
    assert call["arguments"]["company"] == "Savanna Trading Ltd"
    assert "Net Profit" in a.text
    assert a.grounded


# ------------------------------------------------------------------ workflow, writes


async def test_workflow_explains_who_may_act(agent: Agent, demo_erp: DemoERP) -> None:
    [(po,)] = sql(
        demo_erp,
        "select name from `tabPurchase Order` where workflow_state='Pending Approval' limit 1",
    )
    drafter = await agent.ask(f"Why can't I approve {po}?", "purchase@demo.local")
    assert drafter.tools == ["purchase_order.workflow"]
    assert "Pending Approval" in drafter.text
    assert "Purchase Manager" in drafter.text
    manager = await agent.ask(f"What can I do with {po}?", "purchase.manager@demo.local")
    assert "Approve" in manager.text
    assert "Reject" in manager.text


async def test_writes_become_proposals(agent: Agent, demo_erp: DemoERP) -> None:
    [(po,)] = sql(
        demo_erp,
        "select name from `tabPurchase Order` where workflow_state='Pending Approval' limit 1",
    )
    approve = await agent.ask(f"Please approve PO {po}", "purchase.manager@demo.local")
    assert approve.tools == ["purchase_order.workflow", "purchase_order.workflow_action"]
    assert approve.calls[-1]["arguments"] == {"id": po, "action": "Approve"}
    assert approve.outcome == "proposal"
    assert "confirm" in approve.text
    # A customer of the manager's own branch; the rate is the ERP's: Item Price in that
    # customer's price list, not the item's standard rate.
    [(customer, item, rate)] = sql(
        demo_erp,
        "select c.name, ip.item_code, ip.price_list_rate from `tabItem Price` ip join "
        "tabCustomer c on c.default_price_list = ip.price_list where c.branch = 'Kisumu' "
        "order by c.name, ip.item_code limit 1",
    )
    quote = await agent.ask(
        f"Create a quotation for {customer} for 20 units of {item}", "kisumu.manager@demo.local"
    )
    create = next(c for c in quote.calls if c["name"] == "quotation.create")["arguments"]
    assert create["company"] == "Savanna Trading Ltd"
    assert create["items"] == [{"item": item, "qty": 20.0}]
    assert quote.outcome == "proposal"
    proposal = next(b for b in quote.blocks if b["type"] == "proposal")
    assert proposal["payload"]["party"] == customer  # resolved to the record, as the ERP names it
    assert [(r["item"], r["qty"], r["rate"]) for r in proposal["payload"]["items"]] == [
        (item, 20.0, rate)
    ]
    [(lead,)] = sql(
        demo_erp, "select name from tabLead where qualification_status != 'Qualified' limit 1"
    )
    mark = await agent.ask(f"Mark {lead} as qualified")
    assert mark.calls[-1] == {
        "name": "lead.update",
        "arguments": {"id": lead, "values": {"qualification": "Qualified"}},
    }
    [(stored,)] = sql(demo_erp, "select qualification_status from tabLead where name=?", lead)
    assert stored != "Qualified"  # nothing changes until the user confirms


# ------------------------------------------------------------------ scope and declining


async def test_cross_scope_probe_finds_nothing(agent: Agent, demo_erp: DemoERP) -> None:
    mombasa = [
        r[0] for r in sql(demo_erp, "select name from `tabSales Invoice` where branch='Mombasa'")
    ]
    a = await agent.ask("Show me Mombasa's invoices", "kisumu.manager@demo.local")
    assert a.text.startswith("No records found")
    assert not any(doc in a.text for doc in mombasa)


@pytest.mark.parametrize(
    ("question", "user"),
    [
        ("What will the weather be?", "admin@demo.local"),
        ("What is our headcount?", "sales@demo.local"),
        ("Who will win the election?", "sales@demo.local"),
    ],
)
async def test_declines_without_guessing(agent: Agent, question: str, user: str) -> None:
    a = await agent.ask(question, user)
    # Out of scope: said plainly ("I didn't understand …" / "I can't see …"), never a figure.
    assert "can't" in a.text or "didn't understand" in a.text
    assert a.grounded
    assert not any(t.endswith((".list", ".aggregate", ".count")) for t in a.tools)


async def test_knowledge_is_declined_when_no_search_is_offered(agent: Agent) -> None:
    a = await agent.ask("How does a quotation become a sales order?")
    if "knowledge.search" in a.tools:
        assert a.grounded
    else:
        assert "can't search the process documentation" in a.text


# ------------------------------------------------------------------ fallback


class _Down(ChatModel):
    profile = OfflinePlanner().profile

    async def complete(self, messages: Any, tools: Any = (), *, temperature: float | None = None,
                       max_tokens: int | None = None) -> Completion:  # fmt: skip
        raise ModelUnavailable(detail="provider returned 503")


async def test_fallback_answers_with_the_planner_and_says_so(agent: Agent) -> None:
    agent.model = FallbackModel(_Down(), OfflinePlanner(agent.runtime.catalog))
    a = await agent.ask("How many open sales orders do we have?")
    assert a.tools == ["metrics.query"]
    assert a.text.endswith("(answered by the offline planner: the configured model is unavailable)")


def test_planner_reads_only_this_turn() -> None:
    """An earlier turn's results are not mistaken for this turn's."""
    from erp_agent.planner.context import read

    earlier = [
        Message("user", "count open orders"),
        Message("tool", json.dumps({"status": "ok"}), tool_call_id="x"),
    ]
    view = read([Message("system", "- Today: 2026-11-30\n- Company: Savanna Trading Ltd"), *earlier,
                 Message("user", "and quotations?")])  # fmt: skip
    assert view.request == "and quotations?"
    assert view.results == []
    assert view.company == "Savanna Trading Ltd"
    assert view.today == TEST_TODAY
