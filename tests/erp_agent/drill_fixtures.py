"""A demo ERP for drill-down tests, and the independent side of their checks.

The ERP is a copy of the session's seeded demo ERP with a few records arranged that the seed
has none of (an open opportunity and sales order, a leaver, an unallocated receipt, an overdue task), so every
catalog metric has a figure to open. The truth is read straight from the ERP's REST API with
raw httpx (``rest_truth``); only the names of native fields come from the catalog's maps."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from rest_truth import RestERP

from conftest import TEST_TODAY, DemoERP
from demo_erp.context import Settings
from erp_agent.catalog import Catalog, MeasureFunc, Metric

_CHUNK = 150


@dataclass(frozen=True)
class DrillERP:
    url: str
    path: Path


def _arrange(conn: sqlite3.Connection) -> None:
    """Records the seed has none of, so that every metric has a figure to open."""
    conn.executescript(
        """
        update tabOpportunity set status = 'Open'
         where name in (select name from tabOpportunity where status = 'Lost' limit 2);
        update tabEmployee set relieving_date = '2026-10-15'
         where name = (select name from tabEmployee where status = 'Active' order by name
                       limit 1);
        update "tabPayment Entry" set unallocated_amount = 750
         where name = (select name from "tabPayment Entry" where payment_type = 'Receive'
                       and docstatus = 1 order by name limit 1);
        update "tabSales Order" set status = 'To Deliver and Bill'
         where name in (select name from "tabSales Order" where docstatus = 1 order by name
                        limit 2);
        update tabTask set exp_end_date = '2026-11-01'
         where name = (select name from tabTask where status = 'Open' order by name limit 1);
        """
    )


@pytest.fixture(scope="module")
def drill_erp(demo_erp: DemoERP, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DrillERP]:
    from demo_erp.server import start_in_thread

    path = tmp_path_factory.mktemp("drill-erp") / "demo.sqlite"
    source, target = sqlite3.connect(demo_erp.path), sqlite3.connect(path)
    source.backup(target)
    source.close()
    _arrange(target)
    target.commit()
    target.close()
    server = start_in_thread(Settings(db_path=str(path), version=15, today=TEST_TODAY))
    yield DrillERP(server.url, path)
    server.stop()


class Truth:
    """A metric's figure over given records, from the ERP's REST API."""

    def __init__(self, rest: RestERP, catalog: Catalog) -> None:
        self.rest = rest
        self.catalog = catalog

    def _column(self, entity: str, path: str, ids: list[Any]) -> dict[Any, Any]:
        """record id -> the value at ``path`` (a field, or a link's field: item.reorder_level)."""
        emap = self.catalog.native("erpnext", entity)
        head, _, rest = path.partition(".")
        native = emap.native_field(head)
        rows: list[dict[str, Any]] = []
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            rows += self.rest.rows(emap.doctype, [native], [["name", "in", chunk]])
        values = {r["name"]: r.get(native) for r in rows}
        if not rest:
            return values
        target = str(self.catalog.entity(entity).fields[head].target)
        linked = self._column(target, rest, sorted({v for v in values.values() if v}))
        return {k: linked.get(v) for k, v in values.items()}

    def value(self, metric: Metric, ids: list[Any]) -> Decimal | None:
        func = metric.measure.func
        if func is MeasureFunc.COUNT:
            return Decimal(len(ids))
        field = str(metric.measure.field)
        column = self._column(metric.entity, field, ids)
        assert set(column) == set(ids), "every listed record is read back from the ERP"
        if func is MeasureFunc.COUNT_DISTINCT:
            return Decimal(len({v for v in column.values() if v is not None}))
        total = _sum(column.values())
        if func is MeasureFunc.NET:
            total -= _sum(self._column(metric.entity, str(metric.measure.minus), ids).values())
        if func is MeasureFunc.AVG:
            return total / len(ids) if ids else None
        return total


def _sum(values: Iterable[Any]) -> Decimal:
    return sum((Decimal(str(v or 0)) for v in values), Decimal(0))


def close(metric: Metric, truth: Decimal | None, figure: Any) -> bool:
    """The figure as shown (rounded like every metric figure) against the exact truth."""
    if truth is None or figure is None:
        return truth is None and figure is None
    places = Decimal("0.01") if metric.is_money or metric.unit == "%" else Decimal("0.0001")
    return abs(truth - Decimal(str(figure))) <= places / 2
