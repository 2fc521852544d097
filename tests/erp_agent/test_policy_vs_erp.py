"""For each demo role, the tools offered agree with what the ERP actually permits, probed as
that user: offered reads succeed, withheld reads are refused by the ERP, offered creates pass
the ERP's permission check, withheld ones do not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from typer.testing import CliRunner

from conftest import DemoERP
from demo_erp.seed import DEMO_USERS
from erp_agent.catalog import load_catalog
from erp_agent.cli import app
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.errors import ErpRefusal
from erp_agent.gateway.policy import load_policy
from erp_agent.gateway.signin import sign_in
from erp_agent.tools.base import Effect, ToolRegistry
from erp_agent.tools.factories import catalog_tools

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
REGISTRY = ToolRegistry(catalog_tools(CATALOG))
POLICY = load_policy()


@pytest.fixture
async def erp(demo_erp: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(demo_erp.url)
    yield connector
    await connector.aclose()


async def can_read(erp: ERPNextConnector, cred: Credential, entity: str) -> bool:
    status = 200
    try:
        await erp.list(cred, entity, fields=["id"], limit=1)
    except ErpRefusal as exc:
        status = exc.refusal.status
    assert status in (200, 403)
    return status == 200


async def create_permitted(base_url: str, sid: str, doctype: str) -> bool:
    """An empty insert: 403 if the user may not create, a validation error (417) if they may."""
    async with httpx.AsyncClient(base_url=base_url, headers={"Cookie": f"sid={sid}"}) as client:
        reply = await client.post(f"/api/resource/{doctype}", json={})
    assert reply.status_code in (403, 417), reply.text
    return reply.status_code == 417


@pytest.mark.parametrize("user", [u.email for u in DEMO_USERS])
async def test_offered_tools_match_the_erp(erp: ERPNextConnector, user: str) -> None:
    session = await sign_in(erp, REGISTRY, POLICY, user, "demo")
    for entity in CATALOG.entities.values():
        read_name = f"{entity.name}.list"
        if read_name not in REGISTRY or not POLICY.permits(read_name, session.roles):
            continue
        readable = await can_read(erp, session.credential, entity.name)
        assert (read_name in session.allowed_tools) == readable, (user, read_name)
        create_name = f"{entity.name}.create"
        required = [f for f in entity.fields.values() if f.required]
        if create_name in REGISTRY and required and POLICY.permits(create_name, session.roles):
            assert session.credential.sid is not None
            permitted = await create_permitted(
                erp.base_url, session.credential.sid, erp.map(entity.name).doctype
            )
            assert (create_name in session.allowed_tools) == permitted, (user, create_name)


async def test_read_only_workspace_offers_no_write(erp: ERPNextConnector) -> None:
    session = await sign_in(erp, REGISTRY, POLICY, "admin@demo.local", "demo", read_only=True)
    offered = [REGISTRY.get(n) for n in session.allowed_tools]
    assert offered
    assert all(t is not None and t.effect is Effect.READ for t in offered)


def test_tools_command_groups_by_module(demo_erp: DemoERP, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERP_AGENT_ERP_URL", demo_erp.url)
    monkeypatch.setenv("ERP_AGENT_PASSWORD", "demo")
    result = CliRunner().invoke(app, ["tools", "--as", "sales@demo.local", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    everything = {name for names in report["modules"].values() for name in names}
    assert "quotation.create" in report["modules"]["selling"]
    assert "sales_invoice.list" in everything
    assert (
        "sales_invoice.create" not in everything
    )  # a Sales User may read invoices, not raise them
    assert not any(name.startswith("salary_slip.") for name in everything)
    assert report["count"] == len(everything)
    table = CliRunner().invoke(app, ["tools", "--as", "stock@demo.local"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "stock_entry.create" in table.output
