"""The result store: summaries computed in code, paging and sorting, ownership, in memory and
in SQL; report summaries from the ERP's own totals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.connectors.base import ReportResult
from erp_agent.errors import ToolInputError
from erp_agent.results.sql import SQLResultStore, json_dumps
from erp_agent.results.store import MemoryResultStore, ResultStore
from erp_agent.results.summary import summarize_report, summarize_rows
from erp_agent.store.tables import metadata
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import results as results_module

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()

ROWS: list[dict[str, Any]] = [
    {"id": f"SINV-{i:03d}", "customer": c, "total": t, "qty": q}
    for i, (c, t, q) in enumerate(
        [
            ("Acme", 100.10, 1),
            ("Bolt", 0.20, 2),
            ("acme", 50, 3),
            ("Cargo", None, 4),
            ("Delta", 1234.56, 5),
        ]
        * 10
    )
]


@pytest.fixture(params=["memory", "sql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ResultStore]:
    if request.param == "memory":
        yield MemoryResultStore()
        return
    engine = create_async_engine(
        f"sqlite+aiosqlite:///{tmp_path / 'results.sqlite'}", json_serializer=json_dumps
    )
    async with engine.begin() as connection:
        await connection.run_sync(metadata.create_all)
    yield SQLResultStore(engine)
    await engine.dispose()


def test_summarize_rows_totals_are_exact_decimal_sums() -> None:
    summary = summarize_rows(ROWS, top=2)
    assert summary["row_count"] == 50
    assert summary["columns"] == ["id", "customer", "total", "qty"]
    # 10 × (100.10 + 0.20 + 50 + 1234.56) = 13,848.60 exactly (floats would drift)
    assert summary["numeric"]["total"] == {
        "count": 40,
        "total": 13848.6,
        "min": 0.2,
        "max": 1234.56,
        "average": 346.215,
    }
    assert summary["numeric"]["qty"]["total"] == 150
    assert summary["top_by"] == "total"
    assert [r["total"] for r in summary["top_rows"]] == [1234.56, 1234.56]


async def test_store_result_keeps_rows_server_side_and_returns_a_page(store: ResultStore) -> None:
    stored = await store.store_result("ann", "sales_invoice.list", {"records": ROWS}, page_size=5)
    assert stored.id.startswith("res_")
    assert stored.total_rows == 50
    assert len(stored.page) == 5
    assert stored.columns == ["id", "customer", "total", "qty"]
    assert stored.summary["numeric"]["total"]["total"] == 13848.6
    view = stored.for_model()
    assert view["has_more"] is True
    assert await store.fetch(stored.id, "ann") == {"records": ROWS}


async def test_only_the_owner_reads_a_result(store: ResultStore) -> None:
    result_id = await store.put("ann", "sales_invoice.list", ROWS, "sales_invoice")
    assert await store.fetch(result_id, "bob") is None
    assert await store.fetch_stored(result_id, "bob") is None
    with pytest.raises(ToolInputError) as theirs:
        await store.get("bob", result_id)
    with pytest.raises(ToolInputError) as missing:
        await store.get("bob", "res_nothing")
    # the same words either way: an id reveals nothing about another user's results
    assert str(theirs.value).replace(result_id, "X") == str(missing.value).replace(
        "res_nothing", "X"
    )
    record = await store.fetch_stored(result_id, "ann")
    assert record is not None
    assert record.entity == "sales_invoice"
    assert record.total_rows == 50


def _ctx(store: ResultStore, user: str) -> ToolContext:
    session = Session(id="s", user=user, credential=None, roles=frozenset())  # type: ignore[arg-type]
    return ToolContext(session, None, CATALOG, store)  # type: ignore[arg-type]


async def _page(store: ResultStore, user: str, **args: Any) -> dict[str, Any]:
    tool = {t.name: t for t in results_module.tools(CATALOG)}["results.page"]
    assert tool.run is not None
    return await tool.run(_ctx(store, user), args)  # type: ignore[no-any-return]


async def test_paging_and_sorting(store: ResultStore) -> None:
    result_id = await store.put("ann", "sales_invoice.list", {"records": ROWS})
    first = await _page(store, "ann", result_id=result_id, start=0, limit=7)
    assert [r["id"] for r in first["rows"]] == [f"SINV-{i:03d}" for i in range(7)]
    assert first["has_more"] is True
    assert first["total_rows"] == 50
    last = await _page(store, "ann", result_id=result_id, start=49, limit=7)
    assert len(last["rows"]) == 1
    assert last["has_more"] is False

    by_total = await _page(
        store, "ann", result_id=result_id, sort_by="total", descending=True, limit=50
    )
    totals = [r["total"] for r in by_total["rows"]]
    assert totals[:10] == [1234.56] * 10
    assert totals[10:20] == [100.10] * 10
    assert totals[-10:] == [None] * 10  # empty values last, either direction
    ascending = await _page(store, "ann", result_id=result_id, sort_by="total", limit=50)
    assert [r["total"] for r in ascending["rows"]][:10] == [0.2] * 10
    by_name = await _page(store, "ann", result_id=result_id, sort_by="customer", limit=50)
    names = [r["customer"] for r in by_name["rows"]]
    assert names[:20] == ["Acme", "acme"] * 10  # case-insensitive, stable
    with pytest.raises(ToolInputError, match="cannot sort by"):
        await _page(store, "ann", result_id=result_id, sort_by="nope")
    with pytest.raises(ToolInputError, match="no result"):
        await _page(store, "bob", result_id=result_id)


# ------------------------------------------------------------------ reports

REPORT = ReportResult(
    report="accounts_receivable",
    columns=[
        {"fieldname": "party", "label": "Customer", "fieldtype": "Link"},
        {"fieldname": "invoiced", "label": "Invoiced Amount", "fieldtype": "Currency"},
        {"fieldname": "outstanding", "label": "Outstanding Amount", "fieldtype": "Currency"},
        {"fieldname": "age", "label": "Age (Days)", "fieldtype": "Int"},
    ],
    rows=[
        {"party": "Acme", "invoiced": 500.0, "outstanding": 300.0, "age": 40},
        {"party": "Bolt", "invoiced": 900.0, "outstanding": 20.0, "age": 5},
        {"party": "Cargo", "invoiced": 100.0, "outstanding": 100.0, "age": 95},
    ],
    # the ERP's own total row (deliberately not the sum of the rows: it must be quoted, not redone)
    total_row=["", 1500.0, 420.5, ""],
    summary=[{"label": "Total Outstanding", "value": 420.5, "datatype": "Currency"}],
    chart={"type": "bar", "data": {"labels": ["0-30"], "datasets": [{"values": [420.5]}]}},
)


def test_summarize_report_quotes_the_erps_totals() -> None:
    summary = summarize_report(REPORT, top=2)
    assert summary["report"] == "accounts_receivable"
    assert summary["row_count"] == 3
    assert summary["totals"] == {"Invoiced Amount": 1500.0, "Outstanding Amount": 420.5}
    assert summary["report_summary"] == [{"label": "Total Outstanding", "value": 420.5}]
    assert summary["top_by"] == "invoiced"  # the currency column with the most in it
    assert [r["party"] for r in summary["top_rows"]] == ["Bolt", "Acme"]
    assert summary["has_chart"] is True


async def test_a_stored_report_stays_whole_and_is_summarised_as_a_report(
    store: ResultStore,
) -> None:
    data = {
        "columns": REPORT.columns,
        "rows": REPORT.rows,
        "total_row": REPORT.total_row,
        "summary": REPORT.summary,
        "chart": REPORT.chart,
        "message": None,
        "prepared": False,
    }
    stored = await store.store_result("ann", "report.accounts_receivable", data)
    assert stored.summary["totals"]["Outstanding Amount"] == 420.5
    assert await store.fetch(stored.id, "ann") == data
