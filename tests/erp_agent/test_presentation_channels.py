"""One presentation for every channel (issues V and U, part 5): a list shows its title fields
first and at most seven columns in the web app's blocks, the terminal and markdown (MCP, the
OpenAI-compatible API) alike; ageing sums amounts per bucket and never ages; the chart tool
tells the model the series it drew; an export is named after what it holds; a knowledge answer
links only the ids the ERP returned; a line after a list is not glued to its last item."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import signed_in_context
from markdown_it import MarkdownIt
from rich.console import Console

from conftest import TEST_TODAY, DemoERP
from erp_agent.calls.outcome import Outcome, Status
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.channels.markdown import block_markdown
from erp_agent.cli._render import print_blocks
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.models.base import Message
from erp_agent.results.layout import MAX_COLUMNS
from erp_agent.results.links import LinkBuilder, live_text
from erp_agent.results.render import materialise
from erp_agent.results.shaping import SHOWN, ResultShaper
from erp_agent.results.store import MemoryResultStore
from erp_agent.results.summary import ageing, report_figures, summarize_report
from erp_agent.results.text import separate_lists
from erp_agent.tools.base import Args, Effect, Shape, Tool, ToolContext, ToolRegistry
from erp_agent.tools.factories.report import report_tool
from erp_agent.tools.modules import display
from erp_agent.tools.modules import results as results_module

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
USER = "ann@demo.local"
ERP = "https://erp.example"


def _link(entity: str, record: Any) -> str:
    return f"{ERP}/app/{entity.replace('_', '-')}/{record['id']}"


def _invoice(n: int, **over: Any) -> dict[str, Any]:
    """A sales invoice as the ERPNext connector lists it: every field, codes and all."""
    return {
        "docstatus": 1, "id": f"ACC-SINV-2026-{n:05d}",
        "created": f"2026-11-{n:02d} 09:50:00.001000", "modified": f"2026-11-{n:02d} 09:50:00.002000",
        "created_by": "Administrator", "customer": f"CUST-{n:04d}", "customer_name": f"Customer {n}",
        "company": "Savanna Trading Ltd", "date": f"2026-11-{n:02d}", "due_date": f"2026-12-{n:02d}",
        "is_return": 0, "return_against": None, "currency": "KES", "exchange_rate": 1.0,
        "price_list": "Standard Selling KES", "receivable_account": "Debtors - ST",
        "territory": "Coast", "customer_group": "Retail", "cost_center": "Mombasa - ST",
        "project": None, "customer_po": None, "total_qty": 5.0, "net_total": 100.0 * n,
        "tax_total": 16.0 * n, "total": 116.0 * n, "base_total": 116.0 * n,
        "base_net_total": 100.0 * n, "rounded_total": 116.0 * n, "paid": 0.0,
        "outstanding": 58.0 * n, "remarks": None, "status": "Overdue", "branch": "Mombasa",
        **over,
    }  # fmt: skip


async def _shown_list(columns: list[str] | None = None) -> dict[str, Any]:
    store = MemoryResultStore()
    rows = [_invoice(n) for n in range(1, 4)]
    data = {"records": rows, "definition": {"text": "A page of Sales Invoices."}}
    result_id = await store.put(USER, "sales_invoice.list", data, "sales_invoice")
    block = {"type": "table", "title": "Overdue invoices", "result_id": result_id,
             "columns": columns}  # fmt: skip
    return await materialise(block, store, USER, _link, CATALOG)


async def test_a_list_shows_its_title_fields_first_in_at_most_seven_columns() -> None:
    block = await _shown_list()
    assert block["columns"] == [
        "customer_name", "date", "due_date", "total", "outstanding", "status", "id",
    ]  # fmt: skip
    assert len(block["columns"]) <= MAX_COLUMNS
    fields = CATALOG.entity("sales_invoice").fields
    labels = [fields[k].label for k in block["columns"]]  # the catalog's words, not the keys
    assert block["labels"][:5] == [*labels[:3], f"{labels[3]} (KES)", f"{labels[4]} (KES)"]
    assert block["rows"][0][-2:] == ["Overdue", "ACC-SINV-2026-00001"]  # status in words
    # Linked names, not codes; no document status code; the rest one "more columns" away.
    more = [m["key"] for m in block["more_columns"]]
    assert {"customer", "docstatus", "created", "modified"} <= set(more)
    assert not {"customer", "docstatus"} & set(block["columns"])
    assert block["link_column"] == "id"


async def test_asked_for_bookkeeping_shows_words_and_dates_without_microseconds() -> None:
    block = await _shown_list(["id", "docstatus", "created", "is_return"])
    assert block["rows"][0] == ["ACC-SINV-2026-00001", "Submitted", "2026-11-01 09:50:00", "No"]


async def test_every_channel_shows_the_same_columns_and_no_microseconds() -> None:
    block = await _shown_list()
    text = block_markdown(block)
    header = text.splitlines()[2]
    assert header.split(" | ")[0] == "| Customer name"
    assert header.count("|") - 1 == len(block["columns"])
    assert f"[ACC-SINV-2026-00001]({ERP}/app/sales-invoice/ACC-SINV-2026-00001)" in text
    assert "more columns" in text
    assert ".001000" not in text
    assert "| 1 |" not in text
    console = Console(record=True, width=220, color_system=None)
    print_blocks(console, [block])
    shown = console.export_text()
    assert "Customer name" in shown
    assert "Outstanding (KES)" in shown
    assert "more columns" in shown
    assert ".001000" not in shown
    assert "Document status" not in shown
    assert "CUST-0001" not in shown


async def test_the_chart_tool_returns_the_series_it_drew() -> None:
    store = MemoryResultStore()
    rows = [{"customer": f"C{i}", "currency": "USD", "revenue": 10.0 - i} for i in range(6)]
    rows.append({"customer": "All others", "currency": "USD", "revenue": 99.0, "others": True})
    result_id = await store.put(USER, "metrics.query", {"rows": rows}, None)
    session = Session("s", USER, Credential.session(USER, "sid"), frozenset())
    ctx = ToolContext(session, None, CATALOG, store)  # type: ignore[arg-type]
    args = {"result_id": result_id, "label": "customer", "values": ["revenue"], "top": 5,
            "title": "Top customers (KES)"}  # fmt: skip
    out = await display.chart(ctx, args)
    assert out["drawn"] == [{
        "title": "Top customers (USD)", "currency": "USD",
        "labels": ["C0", "C1", "C2", "C3", "C4"],
        "series": [{"name": "Revenue", "values": [10.0, 9.0, 8.0, 7.0, 6.0]}],
    }]  # fmt: skip
    # What the model reads back: the series, beside "shown".
    tools = ToolRegistry(display.tools(CATALOG))
    shaped = await ResultShaper(tools, store).shape(
        session, Outcome(Status.OK, "display.chart", data=out)
    )
    assert shaped.content["result"] == SHOWN
    assert shaped.content["drawn"][0]["labels"][-1] == "C4"
    with_rest = await display.chart(ctx, {**args, "others": True})
    assert with_rest["drawn"][0]["labels"][-1] == "All others"


# ------------------------------------------------------------ ageing, from the demo ERP


@pytest.fixture
async def erp(demo_erp: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(demo_erp.url, catalog=CATALOG)
    yield connector
    await connector.aclose()


@pytest.mark.parametrize("report", ["accounts_receivable", "accounts_payable"])
async def test_ageing_sums_amounts_per_bucket_keeps_every_bucket_and_never_adds_ages(
    erp: ERPNextConnector, report: str
) -> None:
    tool = report_tool(CATALOG.report(report), CATALOG)
    ctx = await signed_in_context(erp, "accounts.manager@demo.local", [tool.name], CATALOG)
    assert tool.run is not None
    data = await tool.run(ctx, {"company": "Savanna Trading Ltd",
                                "as_of_date": TEST_TODAY.isoformat()})  # fmt: skip
    labels = [c["label"] for c in data["columns"] if str(c["fieldname"]).startswith("range")]
    assert labels == ["0-30", "31-60", "61-90", "91-120", "121-Above"]
    rows = [r for r in data["rows"] if r.get("voucher_no")]
    found = ageing(data)
    assert found is not None
    assert found["currency"] == "KES"
    # Every bucket of the ERP's report, each the sum of its amounts.
    assert [b["label"] for b in found["buckets"]] == labels
    for n, bucket in enumerate(found["buckets"], 1):
        exact = sum(Decimal(str(r[f"range{n}"])) for r in rows)
        assert abs(Decimal(str(bucket["amount"])) - exact) < Decimal("0.01")
    assert any(b["amount"] for b in found["buckets"][-1:])  # over 120 days is not dropped
    owed = sum(Decimal(str(r["outstanding"])) for r in rows)
    weighted = sum(Decimal(r["age"]) * Decimal(str(r["outstanding"])) for r in rows
                   if Decimal(str(r["outstanding"])) > 0)  # fmt: skip
    positive = sum(Decimal(str(r["outstanding"])) for r in rows if r["outstanding"] > 0)
    assert found["weighted_average_age"] == float(round(weighted / positive, 1))
    summary = summarize_report(data)
    assert not any(label.startswith("Age") for label in summary["totals"])  # ages not summed
    assert all(label.endswith("(KES)") for label in summary["totals"])  # totals name currency
    figures = report_figures(data)
    assert [f["label"] for f in figures][-3:] == [
        "121+ days (KES)", "Total outstanding (KES)", "Average age, weighted by amount (days)",
    ]  # fmt: skip
    assert abs(Decimal(str(figures[-2]["value"])) - owed) < Decimal("0.05")


async def test_a_receivables_table_shows_party_due_date_outstanding_and_age_first() -> None:
    columns = [
        {"fieldname": f, "label": label, "fieldtype": kind}
        for f, label, kind in [
            ("posting_date", "Posting Date", "Date"), ("party_type", "Party Type", "Data"),
            ("party", "Party", "Dynamic Link"), ("party_account", "Receivable Account", "Link"),
            ("customer_name", "Customer Name", "Data"), ("voucher_no", "Voucher No", "Dynamic Link"),
            ("due_date", "Due Date", "Date"), ("invoiced", "Invoiced Amount", "Currency"),
            ("outstanding", "Outstanding Amount", "Currency"), ("age", "Age (Days)", "Int"),
            ("range1", "0-30", "Currency"), ("range2", "31-60", "Currency"),
            ("currency", "Currency", "Link"), ("remarks", "Remarks", "Text"),
        ]
    ]  # fmt: skip
    rows = [{"posting_date": "2026-10-01", "party_type": "Customer", "party": "Gulf Traders",
             "party_account": "Debtors - ST", "customer_name": "Gulf Traders",
             "voucher_no": f"ACC-SINV-2026-0000{n}", "due_date": "2026-10-31", "invoiced": 10.0,
             "outstanding": 10.0, "age": 30 * n, "range1": 10.0 if n == 1 else 0.0,
             "range2": 0.0 if n == 1 else 10.0, "currency": "KES", "remarks": None}
            for n in (1, 2)]  # fmt: skip
    store = MemoryResultStore()
    result_id = await store.put(USER, "report.accounts_receivable",
                                {"columns": columns, "rows": rows}, "sales_invoice")  # fmt: skip
    block = await materialise({"type": "table", "result_id": result_id}, store, USER, _link,
                              CATALOG)  # fmt: skip
    assert block["labels"][:4] == ["Party", "Due Date", "Outstanding Amount (KES)", "Age (Days)"]
    assert len(block["columns"]) <= MAX_COLUMNS
    assert [f["label"] for f in block["figures"]][:2] == ["0-30 days (KES)", "31-60 days (KES)"]
    assert "- Total outstanding (KES): 20.00" in block_markdown(block)


# ------------------------------------------------------------ text, links, exports


def test_a_line_after_a_list_is_its_own_paragraph() -> None:
    text = (
        "Revenue in total: KES 950.00.\n- Uhuru Traders Ltd: KES 62.50\n- Tembo Hardware: KES 30.80\n"
        "Counted: submitted Sales Invoices only (docstatus = 1)."
    )
    tokens = MarkdownIt("commonmark").parse(separate_lists(text))
    after = next(i for i, t in enumerate(tokens) if t.type == "bullet_list_close")
    counted = next(i for i, t in enumerate(tokens) if t.type == "inline" and "Counted" in t.content)
    assert counted > after  # a paragraph of its own, not the last bullet's continuation
    assert "Counted" not in [t.content for t in tokens[:after] if t.type == "inline"][-1]
    assert separate_lists("- a\n  continued\n- b\n\nafter") == "- a\n  continued\n- b\n\nafter"


async def _nothing(ctx: ToolContext, args: Args) -> None:
    return None


def test_a_knowledge_answer_links_only_ids_the_erp_returned() -> None:
    tools = ToolRegistry([
        Tool("knowledge.search", "kb", {"type": "object"}, Effect.READ, "knowledge",
             run=_nothing, shape=Shape.PASSAGES),
        Tool("sales_invoice.list", "list", {"type": "object"}, Effect.READ, "accounting",
             run=_nothing, shape=Shape.ROWS),
    ])  # fmt: skip
    article = {"passages": [{"text": "e.g. a credit note against ACC-SINV-2026-00001"}]}
    listed = {"records": [{"id": "ACC-SINV-2026-00002", "customer": "Acme"}]}
    messages = [
        Message("tool", json.dumps(article), tool_call_id="1", name="knowledge.search"),
        Message("tool", json.dumps(listed), tool_call_id="2", name="sales_invoice.list"),
    ]
    links = LinkBuilder(_link, CATALOG, "erpnext")
    answer = "Raise a credit note as in ACC-SINV-2026-00001; yours is ACC-SINV-2026-00002."
    shown = links.in_text(answer, live_text(messages, tools))
    assert "as in ACC-SINV-2026-00001;" in shown  # the article's example: plain text
    assert f"[ACC-SINV-2026-00002]({ERP}/app/sales-invoice/ACC-SINV-2026-00002)" in shown


async def test_an_export_is_named_after_what_it_holds(tmp_path: Path) -> None:
    store = MemoryResultStore()
    data = {
        "columns": [{"fieldname": "party", "label": "Party", "fieldtype": "Link"}],
        "rows": [{"party": "Gulf Traders"}],
        "definition": {
            "filters": ["Company: Savanna Trading Ltd", "Customer: Gulf Traders",
                        "the ERP's own rules for the report (submitted documents only)"],
            "period": "as of 2026-12-05",
        },
    }  # fmt: skip
    result_id = await store.put(USER, "report.accounts_receivable", data, "sales_invoice")
    tool = {t.name: t for t in results_module.tools(CATALOG, export_dir=tmp_path)}
    session = Session("s", USER, Credential.session(USER, "sid"), frozenset())
    ctx = ToolContext(session, None, CATALOG, store, today=dt.date(2026, 11, 30))  # type: ignore[arg-type]
    export = tool["results.export"].run
    assert export is not None
    block = (await export(ctx, {"result_id": result_id, "format": "xlsx"}))["block"]
    assert block["name"] == "Accounts Receivable – Gulf Traders – 2026-12-05.xlsx"
    company_wide = {**data, "definition": {"filters": ["Company: Savanna Trading Ltd"]}}
    other = await store.put(USER, "report.accounts_receivable", company_wide, "sales_invoice")
    block = (await export(ctx, {"result_id": other, "format": "csv"}))["block"]
    assert block["name"] == "Accounts Receivable – Savanna Trading Ltd – 2026-11-30.csv"
    assert "res_" not in block["name"]


async def test_an_answer_links_the_invoice_it_read_not_one_it_only_mentions(
    demo_erp: DemoERP,
) -> None:
    """Through a whole turn: the invoice the ERP returned is a link; another real invoice's
    number, in the text only (as an article's example would be), stays plain text."""
    import sqlite3

    from erp_agent.config import Settings
    from erp_agent.models.testing import ScriptedModel
    from erp_agent.runtime import Runtime
    from erp_agent.store.memory import MemoryStore

    conn = sqlite3.connect(demo_erp.path)
    read, example = (r[0] for r in conn.execute(
        "select name from `tabSales Invoice` where docstatus = 1 order by name limit 2"
    ))  # fmt: skip
    conn.close()
    runtime = await Runtime.create(Settings(erp_url=demo_erp.url), store=MemoryStore())
    try:
        session = await runtime.sign_in("accounts.manager@demo.local", "demo")
        model = ScriptedModel(
            ScriptedModel.call("sales_invoice.get", {"id": read}),
            ScriptedModel.reply(f"{read} is booked; a credit note works as in {example}."),
        )
        response = await runtime.engine(model).run_turn(session, f"Is {read} paid?")
    finally:
        await runtime.aclose()
    text = response.blocks[0]["markdown"]
    assert f"[{read}]({demo_erp.url}/app/sales-invoice/{read})" in text
    assert f"as in {example}." in text
