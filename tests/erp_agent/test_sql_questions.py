"""Questions a finance user asks, answered by the whole product (engine, router, offline planner,
gateway, metrics, reports) on the bespoke database — every figure checked against independent
SQL run straight on the database, on SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sql_databases import DIALECTS, MAPPING, database, raw, seeded

from conftest import TEST_TODAY
from erp_agent.calls.session import Session
from erp_agent.config import Settings
from erp_agent.engine.turn import EngineSettings
from erp_agent.gateway.signin import sign_in
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
POSTED = "tenant_id = 'SAVANNA' and stage = 'posted' and deleted_at is null"


@pytest.fixture(params=DIALECTS)
async def product(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, Runtime]]:
    with database(request.param, tmp_path) as url:
        seeded(url, per_branch=20)
        store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
        settings = Settings(connector="sql", erp_url=url, sql_mapping=str(MAPPING))
        runtime = await Runtime.create(settings, store=store)
        yield url, runtime
        await runtime.aclose()


async def ask(runtime: Runtime, session: Session, question: str) -> str:
    planner = OfflinePlanner(runtime.catalog, runtime.connector.name)
    engine = runtime.engine(planner, EngineSettings(today=TEST_TODAY))
    response = await engine.run_turn(session, question)
    return json.dumps(response.blocks, default=str)


def money(value: object) -> str:
    return f"{round(float(str(value))):,}"


def shown(value: object, text: str) -> bool:
    """The amount as the answer writes it: 40,185.88, or 55,245 for a whole number."""
    number = float(str(value))
    forms = {f"{number:,.2f}"} | ({f"{int(number):,}"} if number == int(number) else set())
    return any(re.search(rf"(?<![\d,.]){re.escape(f)}(?![\d])", text) for f in forms)


def year_of(value: object) -> int:
    return value.year if isinstance(value, dt.date) else int(str(value)[:4])


async def test_figures_equal_independent_sql(product: tuple[str, Runtime]) -> None:
    url, runtime = product
    owner = await sign_in(
        runtime.connector, runtime.registry, runtime.policy, "owner@savanna.test", "demo"
    )
    year = TEST_TODAY.year
    rows = raw(url, f"select branch_id, issued_on, net_amount from invoices where {POSTED}")
    this_year = [r for r in rows if year_of(r[1]) == year]
    answer = await ask(runtime, owner, "revenue this year")
    assert money(sum(float(r[2]) for r in this_year)) in answer, answer
    # The figure says what it counted in this database's own terms, not ERPNext's.
    assert "stage = 'posted'" in answer, answer
    assert "docstatus" not in answer, answer
    answer = await ask(runtime, owner, "revenue by branch this year")
    for branch in ("Nairobi", "Kisumu", "Mombasa"):
        figure = money(sum(float(r[2]) for r in this_year if r[0] == branch))
        assert re.search(rf"{branch}\W+KES {figure}", answer), (branch, figure, answer)
    kisumu = await sign_in(
        runtime.connector, runtime.registry, runtime.policy, "kisumu@savanna.test", "demo"
    )
    answer = await ask(runtime, kisumu, "revenue by branch this year")
    assert "Mombasa" not in answer
    assert "Nairobi" not in answer
    top = raw(url, "select customer_code, sum(balance) from invoices where tenant_id = 'SAVANNA' "
                   "and branch_id = 'Kisumu' and stage = 'posted' and deleted_at is null and balance <> 0 "
                   "group by customer_code order by 2 desc")[0]  # fmt: skip
    answer = await ask(runtime, kisumu, "who owes us the most?")
    assert str(top[0]) in answer
    assert shown(top[1], answer), answer
    one = raw(url, "select number, gross_amount from invoices where branch_id = 'Kisumu' limit 1")[
        0
    ]
    answer = await ask(runtime, kisumu, f"show invoice {one[0]}")
    assert shown(one[1], answer), answer
    other = raw(url, "select number from invoices where branch_id = 'Mombasa' limit 1")[0][0]
    answer = await ask(runtime, kisumu, f"show invoice {other}")
    assert "not found" in answer
