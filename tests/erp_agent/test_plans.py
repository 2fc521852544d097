"""Plans per organisation: a plan names the modules, tools, channels, tokens and subscriptions
an organisation may use, and the gateway enforces it after the ERP's permissions — a tool
outside the plan is not offered (the engine's tools, MCP's list) and is refused if called
anyway, with a message naming the plan. Hosted (relay) organisations and the single-company
install's ``default`` are planned alike."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from server_doubles import build_app, client_for
from server_doubles import sign_in as web_sign_in

from conftest import TEST_TODAY, DemoERP
from erp_agent.calls.outcome import Status
from erp_agent.calls.session import RELAY_SESSION_PREFIX, Session
from erp_agent.config import EngineSettings, Settings
from erp_agent.errors import ConfigError, TokenBudgetExceeded
from erp_agent.gateway.plans import Plan
from erp_agent.gateway.signin import sign_in
from erp_agent.models.testing import ScriptedModel
from erp_agent.runtime import Runtime
from erp_agent.store.records import Decision, Interaction
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
NO_STOCK = ["selling", "buying", "accounting", "hr", "crm", "projects", "setup"]


@pytest.fixture
async def rt(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    made = await Runtime.create(Settings(erp_url=demo_erp.url, data_dir=str(tmp_path)), store=store)
    yield made
    await made.aclose()


async def put_on_plan(rt: Runtime, org: str, name: str, **definition: object) -> Plan:
    assert rt.plans is not None
    plan = Plan.parse(name, definition, rt.catalog.modules)
    await rt.plans.save(plan)
    await rt.plans.assign(org, name)
    return plan


async def test_a_plan_without_the_stock_module_hides_and_refuses_stock_tools(rt: Runtime) -> None:
    session = await sign_in(rt.connector, rt.registry, rt.policy, "admin@demo.local", "demo")
    stock = {t.name for t in rt.registry if t.module == "stock"}
    assert "stock_balance.list" in session.allowed_tools  # the ERP grants them

    await put_on_plan(rt, "default", "essentials", label="Essentials", modules=NO_STOCK)

    # Not offered: the session a channel offers tools from has none of the stock module's…
    narrowed = await rt.gateway.within_plan(session)
    assert not stock & narrowed.allowed_tools
    assert "sales_invoice.list" in narrowed.allowed_tools  # …and keeps the rest
    # …nor a metric over stock records in metrics.query's schema.
    query = rt.registry.get("metrics.query")
    assert query is not None
    metrics = query.schema(narrowed)["function"]["parameters"]["properties"]["metric"]["enum"]
    assert "stock_on_hand" not in metrics
    assert "revenue" in metrics

    # A turn's model is never shown them, even asked about stock.
    model = ScriptedModel(ScriptedModel.reply("I cannot see stock here."))
    engine = rt.engine(model, EngineSettings(today=TEST_TODAY))
    await engine.run_turn(session, "how much stock of each item do we have in the warehouses?")
    offered = {t["function"]["name"] for t in model.requests[0].tools}
    assert offered
    assert not offered & stock

    # Refused if called anyway, in words naming the plan, and audited.
    refused = await rt.gateway.call(session, "stock_balance.list", {})
    assert refused.status is Status.REFUSED
    assert "'Essentials'" in refused.message
    assert "stock module" in refused.message
    assert "organisation default" in refused.message
    [event] = await rt.store.events(tool="stock_balance.list", decision=Decision.REFUSED, limit=1)
    assert "Essentials" in event.reason
    via_metric = await rt.gateway.call(session, "metrics.query", {"metric": "stock_on_hand"})
    assert via_metric.status is not Status.OK
    assert "cannot read" in via_metric.message or via_metric.errors

    # Another organisation (a hosted relay tenant) on no plan keeps every tool the ERP grants.
    hosted = dataclasses.replace(session, id=f"{RELAY_SESSION_PREFIX}x", org="acme")
    assert stock <= (await rt.gateway.within_plan(hosted)).allowed_tools
    await put_on_plan(rt, "acme", "hosted stock", modules=["stock", "setup"])
    hosted_tools = (await rt.gateway.within_plan(hosted)).allowed_tools
    assert "stock_balance.list" in hosted_tools
    assert "sales_invoice.list" not in hosted_tools

    # Back to no plan: offered and allowed again.
    assert rt.plans is not None
    await rt.plans.assign("default", None)
    assert stock <= (await rt.gateway.within_plan(session)).allowed_tools
    assert (await rt.gateway.call(session, "stock_balance.count", {})).status is Status.OK


async def test_tool_globs_channels_tokens_and_subscriptions_are_planned_too(rt: Runtime) -> None:
    session = await sign_in(rt.connector, rt.registry, rt.policy, "accounts@demo.local", "demo")
    await put_on_plan(
        rt, "default", "lite", tools=["metrics.*", "sales_invoice.list", "tools.*"],
        channels=["relay", "inbox"], monthly_tokens=1000, subscriptions=0,
    )  # fmt: skip
    # The web channel is not in the plan: nothing is offered there, and calls say why.
    assert (await rt.gateway.within_plan(session)).allowed_tools == frozenset()
    web = await rt.gateway.call(session, "sales_invoice.list", {})
    assert web.status is Status.REFUSED
    assert "does not include the web app" in web.message
    # Through the relay, only the globs.
    relay = dataclasses.replace(session, id=f"{RELAY_SESSION_PREFIX}y")
    offered = (await rt.gateway.within_plan(relay)).allowed_tools
    assert (
        offered
        == {"metrics.query", "metrics.catalog", "sales_invoice.list", "tools.search"}
        & session.allowed_tools
    )
    assert "subscriptions.create" not in offered  # subscriptions: 0
    # The plan's tokens are the organisation's monthly budget (an admin's own budget wins).
    await rt.store.log_interaction(Interaction(
        turn_id="t1", conversation_id="c1", user="accounts@demo.local", org="default",
        message="q", model="scripted", outcome="answered", prompt_tokens=900, completion_tokens=200,
    ))  # fmt: skip
    with pytest.raises(TokenBudgetExceeded):
        await rt.budgets.check("default")
    rt.budgets.limits["default"] = 5000
    await rt.budgets.check("default")


def test_a_plan_is_validated_with_every_problem_named() -> None:
    with pytest.raises(ConfigError) as caught:
        Plan.parse("x", {"modules": ["stok"], "channels": ["fax"], "monthly_tokens": -1,
                         "colour": "red"}, ["stock", "selling"])  # fmt: skip
    text = str(caught.value)
    for words in ("no module named stok", "no channel named fax", "monthly_tokens", "colour"):
        assert words in text


async def test_the_plans_are_edited_in_the_admin_api(rt: Runtime, tmp_path: Path) -> None:
    harness = build_app(rt, tmp_path)
    async with client_for(harness.app) as admin:
        await web_sign_in(admin, "admin@demo.local")
        saved = await admin.put("/api/admin/plans/essentials", json={
            "label": "Essentials", "modules": NO_STOCK, "monthly_tokens": 100000})  # fmt: skip
        assert saved.status_code == 200, saved.text
        assert saved.json()["plans"][0]["modules"] == sorted(NO_STOCK)
        bad = await admin.put("/api/admin/plans/broken", json={"modules": ["stok"]})
        assert bad.status_code == 422
        assert "no module named stok" in bad.json()["detail"]
        assigned = await admin.put(
            "/api/admin/organisations/default/plan", json={"plan": "essentials"}
        )
        assert {o["org"]: o["plan"] for o in assigned.json()["organisations"]}[
            "default"
        ] == "essentials"
        unknown = await admin.put(
            "/api/admin/organisations/nowhere/plan", json={"plan": "essentials"}
        )
        assert unknown.status_code == 404
        in_use = await admin.delete("/api/admin/plans/essentials")
        assert in_use.status_code == 409
        assert "default" in in_use.json()["detail"]
        # Applied at once: this admin's next call of a stock tool is refused by the gateway.
        session = await sign_in_session(rt, "admin@demo.local")
        refused = await rt.gateway.call(session, "stock_balance.count", {})
        assert refused.status is Status.REFUSED
        assert "Essentials" in refused.message
        await admin.put("/api/admin/organisations/default/plan", json={"plan": None})
        assert (await admin.delete("/api/admin/plans/essentials")).status_code == 200
    async with client_for(build_app(rt, tmp_path).app) as sales:
        await web_sign_in(sales, "sales@demo.local")
        assert (await sales.get("/api/admin/plans")).status_code == 403


async def sign_in_session(rt: Runtime, user: str) -> Session:
    return await sign_in(rt.connector, rt.registry, rt.policy, user, "demo")


@pytest.mark.postgres
async def test_plans_subscriptions_and_claims_on_postgresql() -> None:
    """The same tables on PostgreSQL: plans saved and assigned, a due subscription claimed by
    exactly one of two workers, the cost rows of a period read back."""
    import datetime as dt

    from pg_fixtures import pg_database

    from erp_agent.costs import report
    from erp_agent.gateway.plans import PlanBook
    from erp_agent.subscriptions.models import Subscription
    from erp_agent.subscriptions.store import SubscriptionStore

    with pg_database() as url:
        store = open_store(url)
        try:
            await store.migrate()
            engine = store.engine  # type: ignore[attr-defined]
            book = PlanBook(engine, modules=[*NO_STOCK, "stock"])
            await book.save(Plan.parse("p", {"modules": ["stock"], "subscriptions": 2}))
            await book.assign("acme", "p")
            assert (await book.for_org("acme")) == Plan(
                "p", modules=frozenset({"stock"}), subscriptions=2
            )
            tables = SubscriptionStore(engine)
            due = dt.datetime(2026, 11, 30, 5, 0, tzinfo=dt.UTC)
            sub = Subscription(id="sub_1", user="u", org="acme", title="t", question="q",
                               reading={"calls": []}, schedule="0 8 * * 1", next_run_at=due)  # fmt: skip
            await tables.add(sub)
            [a] = await tables.due(due)
            [b] = await tables.due(due)
            later = due + dt.timedelta(days=7)
            assert [await tables.claim(a, later), await tables.claim(b, later)] == [True, False]
            await tables.set_credential("u", "sealed", "test", "admin")
            assert await tables.credential("u") == ("sealed", "test")
            await store.log_interaction(Interaction(
                turn_id="t", conversation_id="c", user="u", org="acme", message="m", model="x",
                outcome="failed", prompt_tokens=10, completion_tokens=2, cost_micros=35, at=due,
            ))  # fmt: skip
            rows = await report.log_rows(store, due, later, outcomes=report.FAILED_OUTCOMES)
            assert [r.cost_micros for r in rows] == [35]
        finally:
            await store.close()
