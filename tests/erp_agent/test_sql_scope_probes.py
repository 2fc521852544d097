"""Scope and injection probes through every tool the sql connector's users are offered.

A Kisumu principal asks every tool about Mombasa (and about the other tenant): the answer holds
no Mombasa or other-tenant record, ever. Every string argument of every tool is then given SQL
injection text: values are bound parameters, so nothing leaks and every table is still there.
Truth is read with independent SQL straight from the database.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sql_databases import MAPPING, database, raw, seeded

from erp_agent.catalog import load_catalog
from erp_agent.connectors.profile import catalog_for
from erp_agent.connectors.sql.connector import SQLConnector
from erp_agent.gateway.gateway import Gateway
from erp_agent.gateway.policy import load_policy
from erp_agent.gateway.signin import sign_in
from erp_agent.runtime import build_registry
from erp_agent.store.memory import MemoryStore
from erp_agent.tools.base import Effect

pytestmark = pytest.mark.anyio
INJECTIONS = [
    "x' OR '1'='1",
    "'; DROP TABLE invoices; --",
    'Kisumu" OR 1=1 --',
    "%' UNION SELECT password_hash FROM app_users --",
]


@pytest.fixture(params=["sqlite", "mariadb", "postgres"])
async def shop(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, SQLConnector, Gateway]]:
    with database(request.param, tmp_path) as url:
        seeded(url, per_branch=10)
        connector = SQLConnector(url, mapping=MAPPING)
        catalog = catalog_for(load_catalog(), connector.profile, connector.native_maps())
        registry = build_registry(catalog, profile=connector.profile)
        yield url, connector, Gateway(registry, MemoryStore(), connector, catalog)
        await connector.aclose()


def _outside(url: str) -> set[str]:
    """Ids and names the Kisumu principal must never see (Mombasa, Nairobi, the other tenant)."""
    tokens: set[str] = set()
    for table, key in (("invoices", "number"), ("customers", "code"), ("payments", "ref")):
        rows = raw(
            url,
            f"select {key} from {table} where not (tenant_id = 'SAVANNA' and branch_id = 'Kisumu')",
        )
        tokens |= {str(r[0]) for r in rows}
    tokens |= {
        str(r[0])
        for r in raw(url, "select display_name from customers where branch_id <> 'Kisumu'")
    }
    tokens |= {str(r[0]) for r in raw(url, "select sku from products where tenant_id <> 'SAVANNA'")}
    return tokens


def _args_for(schema: dict[str, Any], probe: str) -> dict[str, Any]:
    props = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = props.get(name) or {}
        if "enum" in prop:
            args[name] = prop["enum"][0]
        elif prop.get("type") == "string":
            args[name] = probe
        elif prop.get("type") == "array":
            args[name] = [probe]
        elif prop.get("type") in ("integer", "number"):
            args[name] = 1
    return args


async def test_kisumu_sees_no_other_branch_or_tenant_through_any_tool(
    shop: tuple[str, SQLConnector, Gateway],
) -> None:
    url, connector, gateway = shop
    session = await sign_in(
        connector, gateway.registry, load_policy(), "kisumu@savanna.test", "demo"
    )
    outside = _outside(url)
    mombasa_invoice = str(
        raw(url, "select number from invoices where branch_id = 'Mombasa' limit 1")[0][0]
    )
    lakeside_invoice = str(
        raw(url, "select number from invoices where tenant_id = 'LAKESIDE' limit 1")[0][0]
    )
    read_tools = [
        t for t in gateway.registry if t.name in session.allowed_tools and t.effect is Effect.READ
    ]
    assert any(t.name == "sales_invoice.list" for t in read_tools)
    assert any(t.name == "metrics.query" for t in read_tools)
    assert any(t.name.startswith("report.") for t in read_tools)
    probes: list[tuple[str, dict[str, Any]]] = []
    for tool in read_tools:
        for target in (mombasa_invoice, lakeside_invoice, "Mombasa"):
            probes.append((tool.name, _args_for(tool.parameters, target)))
        if tool.name.endswith((".list", ".count")):
            probes.append(
                (tool.name, {"filters": [{"field": "branch", "op": "=", "value": "Mombasa"}]})
            )
    probes += [
        ("sales_invoice.get", {"id": mombasa_invoice}),
        ("sales_invoice.get", {"id": lakeside_invoice}),
        ("metrics.query", {"metric": "revenue", "group_by": ["branch"]}),
        (
            "metrics.query",
            {
                "metric": "revenue",
                "filters": [{"dimension": "branch", "op": "=", "value": "Mombasa"}],
            },
        ),
    ]
    answered = 0
    for name, args in probes:
        outcome = await gateway.call(session, name, args)
        answered += outcome.ok
        if name == "sales_invoice.list" and "filters" in args:
            assert outcome.ok, outcome.message
            assert outcome.data["records"] == []
        text = json.dumps([outcome.data, outcome.message, outcome.refusal], default=str)
        asked = json.dumps(args)  # the probe's own words may be echoed ("X not found")
        leaked = sorted(t for t in outside if t in text and t not in asked)
        assert not leaked, f"{name}({args}) showed {leaked[:5]}"
    assert answered >= len(probes) // 2, "most probes must be answered, not refused as invalid"
    # The Kisumu figures themselves are right: revenue equals independent SQL.
    period = {"from": "2000-01-01", "to": "2099-12-31"}
    outcome = await gateway.call(session, "metrics.query", {"metric": "revenue", "period": period})
    truth = raw(url, "select sum(net_amount), count(*) from invoices where tenant_id = 'SAVANNA' "
                "and branch_id = 'Kisumu' and stage = 'posted' and deleted_at is null")[0]  # fmt: skip
    assert outcome.ok, outcome.message
    assert outcome.data["totals"][0]["value"] == pytest.approx(float(truth[0]))
    assert outcome.data["record_count"] == truth[1]


async def test_injection_text_in_every_string_argument_is_only_a_value(
    shop: tuple[str, SQLConnector, Gateway],
) -> None:
    url, connector, gateway = shop
    session = await sign_in(
        connector, gateway.registry, load_policy(), "kisumu@savanna.test", "demo"
    )
    outside = _outside(url)
    before = raw(url, "select count(*) from invoices")[0][0]
    tools = [
        t for t in gateway.registry if t.name in session.allowed_tools and t.effect is Effect.READ
    ]
    for tool in tools:
        props = tool.parameters.get("properties") or {}
        for injection in INJECTIONS:
            calls = [_args_for(tool.parameters, injection)]
            for name, prop in props.items():
                if prop.get("type") == "string" and "enum" not in prop:
                    calls.append({**_args_for(tool.parameters, "x"), name: injection})
            if "filters" in props:
                calls.append({"filters": [{"field": "customer", "op": "=", "value": injection}]})
                calls.append({"filters": [{"field": "customer", "op": "like", "value": injection}]})
            for args in calls:
                outcome = await gateway.call(session, tool.name, args)
                text = json.dumps([outcome.data, outcome.message, outcome.refusal], default=str)
                assert "Traceback" not in text
                assert "pbkdf2_sha256" not in text
                assert not [t for t in outside if t in text], f"{tool.name}({args})"
    assert raw(url, "select count(*) from invoices")[0][0] == before
    assert raw(url, "select count(*) from app_users")[0][0] > 0
