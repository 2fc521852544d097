"""No side channel through search: the records index never holds a value behind a permission
level (Salary Slip's gross/net pay are permlevel 1), so searching for a slip's hidden net pay
finds the true slip no more often than searching for a random figure does."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from conftest import DemoERP, raw
from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog, load_catalog
from erp_agent.connectors.frappe.connector import ERPNextConnector
from erp_agent.retrieval.embeddings import default_embedder
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.retriever import Retriever
from erp_agent.retrieval.sync import RecordSync
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import records

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
PROBES = 24
PROBERS = ["accounts@demo.local", "kisumu.manager@demo.local"]


@pytest.fixture
async def erp(demo_erp: DemoERP) -> AsyncIterator[ERPNextConnector]:
    connector = ERPNextConnector(demo_erp.url)
    yield connector
    await connector.aclose()


@pytest.fixture
async def indexed(
    erp: ERPNextConnector, tmp_path: Path
) -> AsyncIterator[tuple[SQLiteIndex, Retriever, Catalog]]:
    """Salary slips synced as the administrator (who can read every figure), as the demo does."""
    catalog = load_catalog()
    index = SQLiteIndex(tmp_path / "index.sqlite")
    embedder = default_embedder()  # the real one: it ranks on figures, as the demo's does
    admin = await erp.login("admin@demo.local", "demo")
    await RecordSync(erp, catalog, index, embedder, admin).sync(["salary_slip"])
    yield index, Retriever(index, embedder), catalog
    index.close()


def slips(demo_erp: DemoERP) -> list[Any]:
    """The ERP's own rows (straight from its database): name and the hidden figures."""
    return raw(
        demo_erp,
        'select name, net_pay, gross_pay from "tabSalary Slip" where docstatus = 1 '
        "order by name limit ?",
        PROBES,
    )


def test_the_probe_has_enough_slips(demo_erp: DemoERP) -> None:
    assert len(slips(demo_erp)) >= 20


async def test_no_card_holds_a_figure_behind_a_permission_level(
    indexed: tuple[SQLiteIndex, Retriever, Catalog], demo_erp: DemoERP
) -> None:
    index, _, _ = indexed
    for row in slips(demo_erp):
        (card,) = index.fetch("default", [f"salary_slip:{row['name']}"])
        assert f"{row['net_pay']:,.2f}" not in card.text
        assert f"{row['gross_pay']:,.2f}" not in card.text


@pytest.mark.parametrize("user", PROBERS)
async def test_searching_a_hidden_net_pay_is_no_better_than_a_random_figure(
    indexed: tuple[SQLiteIndex, Retriever, Catalog],
    erp: ERPNextConnector,
    demo_erp: DemoERP,
    user: str,
) -> None:
    _, retriever, catalog = indexed
    (tool,) = records.tools(retriever, catalog)
    assert tool.run is not None
    cred = await erp.login(user, "demo")
    session = Session("s1", user, cred, frozenset(await erp.roles(cred)))
    ctx = ToolContext(session=session, connector=erp, catalog=catalog)
    rng = random.Random(7)

    async def top(query: str) -> str | None:
        cards = (await tool.run(ctx, {"query": query, "entity": "salary_slip"}))["cards"]  # type: ignore[misc]
        return str(cards[0]["id"]) if cards else None

    rows = slips(demo_erp)
    true_hits = random_hits = 0
    for row in rows:
        if await top(f"{row['net_pay']:,.2f}") == row["name"]:
            true_hits += 1
        figure = rng.uniform(0.5, 1.5) * float(row["net_pay"])
        if await top(f"{figure:,.2f}") == row["name"]:
            random_hits += 1
    print(
        f"{user}: true figure top-1 {true_hits}/{len(rows)}, random figure {random_hits}/{len(rows)}"
    )
    # One hit of slack: with nothing to match, every query ranks the same slip first.
    assert true_hits <= random_hits + 1
