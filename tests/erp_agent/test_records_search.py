"""records.search and workflow.describe against a demo ERP over real HTTP: cards indexed with a
service credential, every hit re-checked AS THE USER before it is returned."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from retrieval_fixtures import seeded_erp

from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog, load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.connectors.query import Filter, Op
from erp_agent.retrieval.embeddings import default_embedder
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.retriever import Retriever
from erp_agent.retrieval.sync import RecordSync
from erp_agent.tools.base import Tool, ToolContext
from erp_agent.tools.modules import records, workflow

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def erp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from seeded_erp(tmp_path_factory)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("records") / "index.sqlite"


@pytest.fixture
async def erp(erp_url: str) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(erp_url)
    yield connector
    await connector.aclose()


@pytest.fixture
async def retriever(
    erp: ERPNextConnector, catalog: Catalog, index_path: Path
) -> AsyncIterator[Retriever]:
    """Cards synced once per module (as the service user), reopened for each test."""
    fresh = not index_path.exists()
    index = SQLiteIndex(index_path)
    if fresh:
        admin = await erp.login("admin@demo.local", "demo")
        sync = RecordSync(erp, catalog, index, default_embedder(), admin)
        await sync.sync(["sales_invoice", "customer", "lead"])
    yield Retriever(index, default_embedder())
    index.close()


async def context(
    erp: ERPNextConnector, catalog: Catalog, user: str, org: str = "default"
) -> ToolContext:
    cred = await erp.login(user, "demo")
    session = Session("s1", user, cred, frozenset(await erp.roles(cred)), org=org)
    return ToolContext(session=session, connector=erp, catalog=catalog)


async def search(tool: Tool, ctx: ToolContext, **args: Any) -> dict[str, Any]:
    assert tool.run is not None
    result: dict[str, Any] = await tool.run(ctx, args)
    return result


OPEN = ["Unpaid", "Overdue", "Partly Paid"]  # submitted and not settled, whatever the due date


async def invoice_in(erp: ERPNextConnector, branch: str) -> dict[str, Any]:
    admin = await erp.login("admin@demo.local", "demo")
    page = await erp.list(admin, "sales_invoice", filters=[
        Filter("branch", Op.EQ, branch), Filter("status", Op.IN, OPEN)], limit=1)  # fmt: skip
    assert page.records, f"the seeded data has no open invoice in {branch}"
    return page.records[0]


async def test_exact_identifier_comes_first_with_a_link(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    (tool,) = records.tools(retriever, catalog)
    ctx = await context(erp, catalog, "accounts.manager@demo.local")
    invoice = await invoice_in(erp, "Nairobi")
    result = await search(tool, ctx, query=f"what is the status of {invoice['id']}?")
    first = result["cards"][0]
    assert first["id"] == invoice["id"]
    assert first["link"].endswith(f"/app/sales-invoice/{invoice['id']}")
    assert invoice["customer_name"] in first["card"]
    assert "(Nairobi)" in first["card"]


async def test_paraphrase_finds_the_customers_invoices(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    (tool,) = records.tools(retriever, catalog)
    ctx = await context(erp, catalog, "admin@demo.local")
    invoice = await invoice_in(erp, "Mombasa")
    who = invoice["customer_name"]
    result = await search(tool, ctx, query=f"bills sent to {who} that are not settled yet",
                          entity="sales_invoice")  # fmt: skip
    assert result["cards"]
    assert all(c["entity"] == "sales_invoice" for c in result["cards"])
    assert who in result["cards"][0]["card"]


async def test_kisumu_manager_cannot_find_mombasa_invoices(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    (tool,) = records.tools(retriever, catalog)
    mombasa = await invoice_in(erp, "Mombasa")
    kisumu = await context(erp, catalog, "kisumu.manager@demo.local")
    probe = await search(tool, kisumu, query=mombasa["id"])
    assert mombasa["id"] not in {c["id"] for c in probe["cards"]}
    broad = await search(tool, kisumu, query="Mombasa invoices", entity="sales_invoice", limit=20)
    assert broad["cards"]
    assert all("(Kisumu)" in c["card"] for c in broad["cards"])
    # The Mombasa manager, same question, sees it first.
    mombasa_manager = await context(erp, catalog, "mombasa.manager@demo.local")
    assert (await search(tool, mombasa_manager, query=mombasa["id"]))["cards"][0]["id"] == mombasa[
        "id"
    ]


async def test_scope_alone_keeps_the_other_branch_out(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    """Before any re-check: the index leg itself returns only the user's branches."""
    kisumu = await context(erp, catalog, "kisumu.manager@demo.local")
    scope = await records.user_scope(kisumu, "sales_invoice", None, None)
    assert scope.branches == frozenset({"Kisumu"})
    hits = retriever.search("Mombasa invoice overdue", scope, limit=30)
    assert hits
    assert {h.doc.branch for h in hits} == {"Kisumu"}


async def test_other_tenant_sees_nothing(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    (tool,) = records.tools(retriever, catalog)
    invoice = await invoice_in(erp, "Nairobi")
    stranger = await context(erp, catalog, "admin@demo.local", org="another-company")
    result = await search(tool, stranger, query=invoice["id"])
    assert result["cards"] == []
    assert result["message"] == "No record you can see matches."


async def test_hits_are_rechecked_and_rerendered_as_the_user(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    (tool,) = records.tools(retriever, catalog)
    admin_ctx = await context(erp, catalog, "admin@demo.local")
    admin = admin_ctx.session.credential
    lead = (await erp.list(admin, "lead", limit=1)).records[0]
    customer = (await erp.list(admin, "customer", limit=1)).records[0]
    # Edited and deleted in the ERP after the sync; no sync has run since.
    await erp.update(admin, "customer", customer["id"], {"credit_limit": 123456.0})
    await erp.client.delete(admin, "Lead", str(lead["id"]))
    found = await search(tool, admin_ctx, query=f"customer {customer['id']}", entity="customer")
    card = next(c for c in found["cards"] if c["id"] == customer["id"])
    assert "credit limit 123,456.00" in card["card"]
    gone = await search(tool, admin_ctx, query=str(lead["id"]), entity="lead")
    assert lead["id"] not in {c["id"] for c in gone["cards"]}
    # A user without the right to read leads gets none, whatever the index holds.
    hr = await context(erp, catalog, "hr@demo.local")
    assert (await search(tool, hr, query="lead prospect", entity="lead"))["cards"] == []


async def test_totals_are_sent_to_the_aggregate_tools(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    (tool,) = records.tools(retriever, catalog)
    ctx = await context(erp, catalog, "admin@demo.local")
    result = await search(tool, ctx, query="total invoiced to Gulf Traders this year",
                          entity="sales_invoice")  # fmt: skip
    assert result["note"].startswith("For totals, counts and averages use metrics.query")
    assert "total" not in {k for k in result if k != "cards" and k != "note"}
    plain = await search(tool, ctx, query="Gulf Traders invoice", entity="sales_invoice")
    assert "note" not in plain
    assert "aggregate" in tool.description
    assert "metrics.query" in tool.prompt_rules  # the always-offered figure tool, by name


async def test_workflow_describe_shows_what_this_user_can_do_now(
    erp: ERPNextConnector, catalog: Catalog
) -> None:
    tool = next(t for t in workflow.tools(catalog) if t.name == "workflow.describe")
    manager = await context(erp, catalog, "purchase.manager@demo.local")
    admin = await erp.login("admin@demo.local", "demo")
    pending = await erp.list(admin, "purchase_order",
                             filters=[Filter("workflow_state", Op.EQ, "Pending Approval")], limit=5)  # fmt: skip
    order = next(o for o in pending.records if o.get("owner") != "purchase.manager@demo.local")
    result = await search(tool, manager, entity="purchase_order", id=order["id"])
    assert result["workflow"] == "Purchase Order Approval"
    assert {s["state"] for s in result["states"]} >= {"Draft", "Pending Approval", "Approved"}
    approve = next(t for t in result["transitions"] if t["action"] == "Approve")
    assert approve["allowed_role"] == "Purchase Manager"
    assert approve["self_approval_allowed"] is False
    assert result["current_state"] == "Pending Approval"
    assert {a["action"] for a in result["available_actions"]} == {"Approve", "Reject"}
    clerk = await context(erp, catalog, "sales@demo.local")
    general = await search(tool, clerk, entity="sales_invoice")
    assert general["workflow"] is None


async def test_one_erp_call_per_search_once_the_scope_is_known(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tool,) = records.tools(retriever, catalog)
    ctx = await context(erp, catalog, "kisumu.manager@demo.local")
    calls: list[str] = []
    real = erp.list

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1])
        return await real(*args, **kwargs)

    monkeypatch.setattr(erp, "list", counted)
    first = await search(tool, ctx, query="overdue invoices", entity="sales_invoice")
    assert first["cards"]
    assert sorted(calls) == ["branch", "company", "sales_invoice"]  # scope asked once
    calls.clear()
    again = await search(tool, ctx, query="unpaid invoices Kisumu", entity="sales_invoice")
    assert again["cards"]
    assert calls == ["sales_invoice"]  # the re-check as the user, and nothing else
    assert all("(Kisumu)" in c["card"] for c in again["cards"])


async def test_search_says_how_many_cards_are_keyword_only(
    erp: ERPNextConnector, catalog: Catalog, retriever: Retriever
) -> None:
    from erp_agent.retrieval.backfill import Backfill
    from erp_agent.retrieval.documents import Document

    (tool,) = records.tools(retriever, catalog)
    ctx = await context(erp, catalog, "admin@demo.local")
    key = sorted(retriever.index.keys("default", parent="customer"))[0]
    doc = retriever.index.fetch("default", [key])[0]
    retriever.index.upsert([Document(**{**doc.__dict__, "text": doc.text + " Re-rated."})])
    try:
        result = await search(tool, ctx, query=f"customer {doc.record_id}", entity="customer")
        assert "Keyword-only for 1 cards still being embedded." in result["note"]
        assert doc.record_id in [c["id"] for c in result["cards"]]  # found by keyword
    finally:
        Backfill(retriever.index, default_embedder()).run()
    assert "note" not in await search(tool, ctx, query=f"customer {doc.record_id}")
