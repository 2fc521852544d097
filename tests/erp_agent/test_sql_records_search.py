"""Records search on the bespoke database: fact cards synced through the sql connector's delta
sync (updated_at watermark, deleted_at tombstones), every hit re-checked as the user — a Kisumu
principal never sees a Mombasa card, a changed record is found by its new words, a deleted one
is gone after the next sync."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sql_databases import MAPPING, raw, seeded

from erp_agent.calls.session import Session
from erp_agent.connectors.profile import connector_catalog
from erp_agent.connectors.sql.connector import SQLConnector
from erp_agent.retrieval.embeddings import default_embedder
from erp_agent.retrieval.index_sqlite import SQLiteIndex
from erp_agent.retrieval.retriever import Retriever
from erp_agent.retrieval.sync import RecordSync
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import records

pytestmark = pytest.mark.anyio


async def test_search_syncs_by_delta_and_stays_in_scope(tmp_path: Path) -> None:
    url = seeded(f"sqlite:///{tmp_path / 'shop.sqlite'}", per_branch=8)
    c = SQLConnector(url, mapping=MAPPING)
    catalog = connector_catalog(c)
    index = SQLiteIndex(tmp_path / "index.sqlite")
    owner = await c.login("owner@savanna.test", "demo")
    sync = RecordSync(c, catalog, index, default_embedder(), owner)
    first = await sync.sync(["sales_invoice", "customer"])
    assert first.entities
    retriever = Retriever(index, default_embedder())
    (tool,) = records.tools(retriever, catalog)
    kisumu = await c.login("kisumu@savanna.test", "demo")
    ctx = ToolContext(
        Session("s1", "kisumu@savanna.test", kisumu, frozenset(await c.roles(kisumu))), c, catalog
    )

    async def search(query: str, **args: Any) -> list[dict[str, Any]]:
        assert tool.run is not None
        return list((await tool.run(ctx, {"query": query, **args}))["cards"])

    mombasa = raw(
        url,
        "select number, customer_code from invoices where branch_id = 'Mombasa' and stage = 'posted' limit 1",
    )[0]
    found = await search(f"invoice {mombasa[0]}")
    assert mombasa[0] not in [card["id"] for card in found]
    assert all("Mombasa" not in card["card"] for card in found)
    mine = raw(url, "select code, display_name from customers where branch_id = 'Kisumu' limit 2")
    hits = await search(f"customer {mine[0][1]}", entity="customer")
    assert mine[0][0] in [h["id"] for h in hits[:3]]
    # A change and a soft delete, stamped after the last sync, reach the index on the next one.
    later = dt.datetime(2030, 1, 1, 9, 0, 0)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("update customers set display_name = 'Zebra Crossing Kisumu', updated_at = :t where code = :c"),
                     {"t": later, "c": mine[0][0]})  # fmt: skip
        conn.execute(sa.text("update customers set deleted_at = :t, updated_at = :t where code = :c"),
                     {"t": later, "c": mine[1][0]})  # fmt: skip
    engine.dispose()
    second = await sync.sync(["customer"])
    assert second.entities
    renamed = await search("Zebra Crossing", entity="customer")
    assert mine[0][0] in [h["id"] for h in renamed[:3]]
    assert "Zebra Crossing Kisumu" in next(h["card"] for h in renamed if h["id"] == mine[0][0])
    assert mine[1][0] not in [
        h["id"] for h in await search(f"customer {mine[1][1]}", entity="customer")
    ]
    index.close()
    await c.aclose()
