"""Entity tools count, total and list submitted documents by default (docstatus = 1), unless the
request asks for drafts, cancelled or all, and every result says which statuses it included.
Expected figures come from the ERP's REST API (raw httpx, native fields)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from typing import Any

import pytest
from agent_helpers import signed_in_context
from rest_truth import RestERP, cents

from conftest import DemoERP
from erp_agent.catalog import load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.tools.base import Tool, ToolContext
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
TOOLS: dict[str, Tool] = {t.name: t for t in catalog_tools(CATALOG)}
ADMIN = "admin@demo.local"


@pytest.fixture
async def ctx(demo_erp: DemoERP) -> AsyncIterator[ToolContext]:
    erp = ERPNextConnector(demo_erp.url, catalog=CATALOG)
    yield await signed_in_context(erp, ADMIN, TOOLS, CATALOG)
    await erp.aclose()


@pytest.fixture
def rest(demo_erp: DemoERP) -> Iterator[RestERP]:
    session = RestERP(demo_erp.url, ADMIN)
    yield session
    session.close()


async def run(ctx: ToolContext, name: str, args: dict[str, Any]) -> Any:
    handler = TOOLS[name].run
    assert handler is not None
    return await handler(ctx, args)


@pytest.mark.parametrize(
    ("documents", "docstatus"), [(None, 1), ("submitted", 1), ("draft", 0), ("cancelled", 2)]
)
async def test_count_defaults_to_submitted_and_says_so(
    ctx: ToolContext, rest: RestERP, documents: str | None, docstatus: int
) -> None:
    args = {"documents": documents} if documents else {}
    result = await run(ctx, "sales_invoice.count", args)
    truth = rest.rows("Sales Invoice", [], [["docstatus", "=", docstatus]])
    assert result["count"] == len(truth)
    statement = result["definition"]["filters"][0]
    assert f"docstatus = {docstatus}" in statement
    if docstatus == 1:
        assert "drafts and cancelled excluded" in statement


async def test_all_documents_counts_every_status(ctx: ToolContext, rest: RestERP) -> None:
    result = await run(ctx, "sales_invoice.count", {"documents": "all"})
    assert result["count"] == len(rest.rows("Sales Invoice", []))
    assert "drafts, submitted and cancelled" in result["definition"]["filters"][0]


async def test_aggregate_and_list_leave_out_drafts_by_default(
    ctx: ToolContext, rest: RestERP
) -> None:
    result = await run(
        ctx, "sales_invoice.aggregate", {"measures": [{"func": "sum", "field": "net_total"}]}
    )
    rows = rest.rows("Sales Invoice", ["net_total"], [["docstatus", "=", 1]])
    everything = rest.rows("Sales Invoice", ["net_total"])
    assert len(everything) > len(rows), "the demo data has drafts or cancelled invoices"
    expected = sum((Decimal(str(r["net_total"])) for r in rows), Decimal(0))
    assert cents(result["rows"][0]["sum_net_total"]) == cents(expected)
    assert result["definition"]["record_count"] == len(rows)
    assert result["definition"]["text"].startswith(
        "Sum of net total (excl. tax) over Sales Invoices"
    )
    drafts = await run(ctx, "sales_invoice.list", {"documents": "draft", "limit": 500})
    truth = {r["name"] for r in rest.rows("Sales Invoice", [], [["docstatus", "=", 0]])}
    assert {r["id"] for r in drafts["records"]} == truth
    assert "draft Sales Invoices only (docstatus = 0)" in drafts["definition"]["filters"][0]


async def test_a_status_filter_of_the_request_replaces_the_default(
    ctx: ToolContext, rest: RestERP
) -> None:
    result = await run(
        ctx, "sales_invoice.count", {"filters": [{"field": "status", "op": "=", "value": "Draft"}]}
    )
    assert result["count"] == len(rest.rows("Sales Invoice", [], [["status", "=", "Draft"]]))
    assert "statuses filtered (status = Draft)" in result["definition"]["filters"][0]


async def test_masters_have_no_document_status(ctx: ToolContext, rest: RestERP) -> None:
    result = await run(ctx, "customer.count", {})
    assert result["count"] == len(rest.rows("Customer", []))
    assert "documents" not in TOOLS["customer.count"].parameters["properties"]
    assert all("docstatus" not in f for f in result["definition"]["filters"])
