"""Purchase Orders and Purchase Receipts keep each item's last purchase rate as ERPNext does."""

from __future__ import annotations

from typing import Any

import pytest
from builders import World, make_world

from demo_erp import documents


@pytest.fixture
def world(empty_db) -> World:  # type: ignore[no-untyped-def]
    return make_world(empty_db[1])


def _rate(world: World) -> Any:
    row = world.ctx.conn.execute(
        'select last_purchase_rate from "tabItem" where name = ?', (world.item,)
    ).fetchone()
    return row["last_purchase_rate"]


def _order(world: World, day: str, rate: float) -> dict[str, Any]:
    return world.insert(
        "Purchase Order",
        {
            "supplier": world.supplier,
            "transaction_date": day,
            "schedule_date": day,
            "items": [{"item_code": world.item, "qty": 1, "rate": rate, "warehouse": world.store}],
        },
        submit=True,
    )


def test_the_last_purchase_rate_is_the_latest_order_or_receipt(world: World) -> None:
    assert not _rate(world)
    receipt = world.receive_stock(5, 40)  # posted 2026-11-02
    assert _rate(world) == 40
    older = _order(world, "2026-10-01", 35)
    assert _rate(world) == 40  # an older order does not replace a later receipt
    same_day = _order(world, "2026-11-02", 45)
    assert _rate(world) == 45  # on the same day the order wins
    documents.cancel(world.ctx, "Purchase Order", same_day["name"])
    assert _rate(world) == 40  # back to the latest one left
    documents.cancel(world.ctx, "Purchase Receipt", receipt["name"])
    assert _rate(world) == 35
    documents.cancel(world.ctx, "Purchase Order", older["name"])
    assert _rate(world) == 0
