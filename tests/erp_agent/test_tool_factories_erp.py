"""Generated tools against the demo ERP over real HTTP, as demo users."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from agent_helpers import signed_in_context

from conftest import DemoERP, raw
from erp_agent.catalog import Operation, load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import ExecuteHandler, PrepareHandler, Tool, ToolContext
from erp_agent.tools.factories import catalog_tools
from erp_agent.tools.factories.filters import groupable, measurable
from erp_agent.tools.factories.workflow import _next_step

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
TOOLS = {t.name: t for t in catalog_tools(CATALOG)}
COMPANY = "Savanna Trading Ltd"


@pytest.fixture
async def erp(demo_erp: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(demo_erp.url, catalog=CATALOG)
    yield connector
    await connector.aclose()


async def context(erp: ERPNextConnector, user: str) -> ToolContext:
    return await signed_in_context(erp, user, TOOLS, CATALOG)


async def run(ctx: ToolContext, name: str, args: dict[str, Any]) -> Any:
    tool: Tool = TOOLS[name]
    assert tool.run is not None
    return await tool.run(ctx, args)


def write_handlers(name: str) -> tuple[PrepareHandler, ExecuteHandler]:
    tool = TOOLS[name]
    assert tool.prepare is not None
    assert tool.execute is not None
    return tool.prepare, tool.execute


# ------------------------------------------------------------------ every read handler


def _aggregate_args(entity_name: str) -> dict[str, Any]:
    entity = CATALOG.entity(entity_name)
    measures: list[dict[str, Any]] = [{"func": "count"}]
    numbers = measurable(entity)
    if numbers:
        measures.append({"func": "sum", "field": entity.amount_field or numbers[0]})
    group = [g for g in groupable(entity) if entity.fields[g].groupable][:1]
    return {"measures": measures, "group_by": [{"field": g} for g in group]}


@pytest.mark.parametrize("entity_name", list(CATALOG.entities))
async def test_every_read_tool_runs_as_the_user(erp: ERPNextConnector, entity_name: str) -> None:
    ctx = await context(erp, "admin@demo.local")
    entity = CATALOG.entity(entity_name)
    page = await run(ctx, f"{entity_name}.list", {"limit": 2})
    assert set(page) == {"records", "start", "limit", "has_more", "definition"}
    assert page["limit"] == 2
    count = await run(ctx, f"{entity_name}.count", {})
    assert count["count"] >= len(page["records"])
    assert page["has_more"] == (count["count"] > 2)
    if page["records"]:
        record = await run(ctx, f"{entity_name}.get", {"id": str(page["records"][0]["id"])})
        assert record["id"] == page["records"][0]["id"]
    if entity.allows(Operation.AGGREGATE):
        result = await run(ctx, f"{entity_name}.aggregate", _aggregate_args(entity_name))
        assert set(result) == {"rows", "record_count", "method", "detail", "definition"}
        assert result["record_count"] == count["count"]


async def test_list_filters_sort_and_aggregate_by_month(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    filters = [
        {"field": "company", "op": "=", "value": COMPANY},
        {"field": "date", "op": "between", "value": ["2026-01-01", "2026-12-31"]},
        {"field": "status", "op": "not in", "value": ["Draft", "Cancelled"]},
    ]
    page = await run(
        ctx,
        "sales_invoice.list",
        {
            "fields": ["id", "date", "total"],
            "filters": filters,
            "order_by": [{"field": "date", "direction": "desc"}],
            "limit": 5,
        },
    )
    dates = [r["date"] for r in page["records"]]
    assert dates == sorted(dates, reverse=True)
    result = await run(
        ctx,
        "sales_invoice.aggregate",
        {
            "measures": [{"func": "sum", "field": "total"}, {"func": "count"}],
            "group_by": [{"field": "date", "part": "month"}],
            "filters": filters,
        },
    )
    expected = raw(
        demo_erp,
        "select count(*) as n, sum(grand_total) as total from `tabSales Invoice` where "
        "company = ? and docstatus = 1 and posting_date between '2026-01-01' and '2026-12-31'",
        COMPANY,
    )[0]
    assert result["record_count"] == expected["n"]
    assert sum(r["count_records"] for r in result["rows"]) == expected["n"]
    assert round(sum(r["sum_total"] for r in result["rows"]), 2) == round(expected["total"], 2)
    count = await run(ctx, "sales_invoice.count", {"filters": filters})
    assert count["count"] == expected["n"]


async def test_a_report_tool_returns_rows(erp: ERPNextConnector) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    result = await run(ctx, "report.accounts_receivable", {"company": COMPANY})
    assert set(result) == {
        "columns", "rows", "total_row", "summary", "chart", "message", "prepared", "definition",
    }  # fmt: skip
    assert result["definition"]["source"].startswith("ERP report (Accounts Receivable)")
    assert f"Company: {COMPANY}" in result["definition"]["filters"]
    assert result["rows"]
    assert result["columns"]
    assert not result["prepared"]


# ------------------------------------------------------------------ writes: prepare and execute


def _quotation_args(demo_erp: DemoERP) -> dict[str, Any]:
    customer = raw(demo_erp, "select name from tabCustomer order by name limit 1")[0]["name"]
    items = [
        r["name"] for r in raw(demo_erp, "select name from tabItem where is_sales_item = 1 limit 2")
    ]
    return {
        "quotation_to": "customer",
        "party": customer,
        "company": COMPANY,
        "date": "2026-11-30",
        "items": [{"item": item, "qty": 2, "rate": 150.0} for item in items],
    }


async def test_create_prepares_the_document_and_execute_creates_it(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "sales@demo.local")
    tool = TOOLS["quotation.create"]
    args = _quotation_args(demo_erp)
    assert tool.prepare is not None
    assert tool.execute is not None
    change = await tool.prepare(ctx, args)
    # The user's values are kept; the ERP adds what its form would (UOM, price list, taxes).
    assert {k: change.payload[k] for k in args if k != "items"} == {
        k: v for k, v in args.items() if k != "items"
    }
    assert [
        {k: line[k] for k in ("item", "qty", "rate")} for line in change.payload["items"]
    ] == args["items"]
    assert change.document is not None
    assert change.document["customer_name"] == args["party"]
    assert change.summary.startswith(f"Create Quotation for {args['party']}: ")
    created = await tool.execute(ctx, change.payload)
    stored = raw(
        demo_erp, "select party_name, docstatus from tabQuotation where name = ?", created["id"]
    )
    assert [tuple(r) for r in stored] == [(args["party"], 0)]
    assert len(created["items"]) == 2


async def test_update_diff_is_read_as_the_user_and_a_no_op_is_refused(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "admin@demo.local")
    customer = raw(demo_erp, "select name, credit_limit from tabCustomer order by name limit 1")[0]
    tool = TOOLS["customer.update"]
    assert tool.prepare is not None
    new_limit = float(customer["credit_limit"] or 0) + 1000
    change = await tool.prepare(
        ctx,
        {"id": customer["name"], "values": {"credit_limit": new_limit, "disabled": False}},
    )
    modified = raw(demo_erp, "select modified from tabCustomer where name = ?", customer["name"])
    assert change.payload == {
        "id": customer["name"],
        "values": {"credit_limit": new_limit},
        "base_modified": modified[0]["modified"],
    }
    assert change.base_modified == modified[0]["modified"]
    assert change.diff == [
        {
            "field": "credit_limit",
            "label": "Credit limit",
            "before": customer["credit_limit"],
            "after": new_limit,
        }
    ]
    assert change.summary.startswith(f"Update Customer {customer['name']}")
    with pytest.raises(ToolInputError, match="nothing would change"):
        await tool.prepare(
            ctx, {"id": customer["name"], "values": {"credit_limit": customer["credit_limit"]}}
        )


async def test_submit_names_the_document_and_its_figures(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    ctx = await context(erp, "accounts.manager@demo.local")
    draft = raw(
        demo_erp,
        "select name, customer_name, grand_total, currency, modified from `tabSales Invoice` "
        "where docstatus = 0 limit 1",
    )[0]
    tool = TOOLS["sales_invoice.submit"]
    assert tool.prepare is not None
    change = await tool.prepare(ctx, {"id": draft["name"]})
    assert change.payload == {"id": draft["name"], "base_modified": draft["modified"]}
    assert change.summary.startswith(
        f"Submit Sales Invoice {draft['name']} ({draft['customer_name']};"
    )
    assert (
        f"grand total (incl. tax) {draft['currency']} {draft['grand_total']:,.2f}" in change.summary
    )
    assert "status Draft" in change.summary


# ------------------------------------------------------------------ workflow


async def test_workflow_lists_the_purchase_managers_actions(
    erp: ERPNextConnector, demo_erp: DemoERP
) -> None:
    pending = raw(
        demo_erp,
        "select name from `tabPurchase Order` where workflow_state = 'Pending Approval' "
        "and docstatus = 0 order by name desc limit 1",
    )
    assert pending, "the seed holds purchase orders pending approval"
    name = pending[0]["name"]
    manager = await context(erp, "purchase.manager@demo.local")
    info = await run(manager, "purchase_order.workflow", {"id": name})
    assert info["current_state"] == "Pending Approval"
    assert {t["action"] for t in info["available_actions"]} == {"Approve", "Reject"}
    definition = await run(manager, "purchase_order.workflow", {})
    assert definition["document"] is None
    assert {t["state"] for t in definition["transitions"]} >= {"Draft", "Pending Approval"}

    action = TOOLS["purchase_order.workflow_action"]
    assert action.prepare is not None
    change = await action.prepare(manager, {"id": name, "action": "Approve"})
    modified = raw(demo_erp, "select modified from `tabPurchase Order` where name = ?", name)
    assert change.payload == {
        "id": name,
        "action": "Approve",
        "base_modified": modified[0]["modified"],
    }
    assert change.diff[0]["before"] == "Pending Approval"
    assert change.diff[0]["after"] == "Approved"
    assert change.summary.startswith(f"Approve Purchase Order {name}")
    # Who acts next comes from the workflow's transitions: nobody after the last approval.
    assert change.summary.endswith("(no further approval step after Approved)")
    # ...and after a submission for approval, the approver's role and actions, as the ERP's
    # workflow definition names them.
    workflow = await erp.workflow(manager.session.credential, "purchase_order", None)
    assert workflow is not None
    assert _next_step(workflow, "Pending Approval") == (
        "next: Purchase Manager may Approve or Reject"
    )

    clerk = await context(erp, "purchase@demo.local")
    with pytest.raises(ToolInputError, match="Available actions: none"):
        await action.prepare(clerk, {"id": name, "action": "Approve"})
    with pytest.raises(ToolInputError, match="Available actions: Approve, Reject"):
        await action.prepare(manager, {"id": name, "action": "Submit"})


async def test_create_update_delete_round_trip(erp: ERPNextConnector, demo_erp: DemoERP) -> None:
    ctx = await context(erp, "admin@demo.local")
    create, update, delete = (write_handlers(f"lead.{a}") for a in ("create", "update", "delete"))
    change = await create[0](ctx, {"name": "Round Trip Prospect", "source": "Website"})
    assert change.summary == "Create Lead for Round Trip Prospect"
    lead = await create[1](ctx, change.payload)
    lead_id = str(lead["id"])
    edit = await update[0](ctx, {"id": lead_id, "values": {"organization": "Trip Ltd"}})
    assert edit.diff == [
        {"field": "organization", "label": "Organization", "before": None, "after": "Trip Ltd"}
    ]
    assert (await update[1](ctx, edit.payload))["organization"] == "Trip Ltd"
    removal = await delete[0](ctx, {"id": lead_id})
    assert removal.summary.startswith(f"Delete Lead {lead_id} (Round Trip Prospect")
    assert await delete[1](ctx, removal.payload) == {"deleted": lead_id}
    assert raw(demo_erp, "select name from tabLead where name = ?", lead_id) == []
