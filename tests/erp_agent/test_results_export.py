"""Exports re-read with their own libraries hold the same numbers; only the owner exports."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from pypdf import PdfReader

from erp_agent.analytics import concentration, monthly_trend
from erp_agent.calls.session import Session
from erp_agent.catalog import load_catalog
from erp_agent.errors import ToolInputError
from erp_agent.results.export import PDF_MAX_ROWS, export_result
from erp_agent.results.store import MemoryResultStore, ResultRecord
from erp_agent.tools.base import ToolContext
from erp_agent.tools.modules import results as results_module

pytestmark = pytest.mark.anyio
CATALOG = load_catalog()
ROWS = [
    {"customer": "Acme Ltd", "total": 1234.56, "count": 3, "note": None},
    {"customer": "Bolt & Co", "total": 0.1, "count": 1, "note": "new"},
    {"customer": "Cargo", "total": -50.0, "count": 2, "note": ""},
]


def _record(rows: list[dict[str, Any]] = ROWS, data: Any = None) -> ResultRecord:
    return ResultRecord(
        "res_test", "ann", "analytics.aggregate", data or {"rows": rows}, title="Sales by customer"
    )


def test_csv_round_trip(tmp_path: Path) -> None:
    block = export_result(_record(), "csv", tmp_path)
    assert block["type"] == "file"
    assert block["mime"] == "text/csv"
    assert block["name"] == "Sales by customer.csv"  # named in words
    content = Path(block["path"]).read_bytes()
    assert block["size"] == len(content)
    rows = list(csv.DictReader(io.StringIO(content.decode("utf-8"))))
    assert [float(r["total"]) for r in rows] == [1234.56, 0.1, -50.0]
    assert [r["customer"] for r in rows] == ["Acme Ltd", "Bolt & Co", "Cargo"]
    assert rows[0]["note"] == ""


def test_xlsx_numbers_are_numbers_and_the_header_is_bold(tmp_path: Path) -> None:
    block = export_result(_record(), "xlsx", tmp_path)
    sheet = openpyxl.load_workbook(block["path"]).active
    assert sheet is not None
    values = list(sheet.iter_rows(values_only=True))
    assert values[0] == ("customer", "total", "count", "note")
    assert [r[1] for r in values[1:]] == [1234.56, 0.1, -50.0]
    assert [r[2] for r in values[1:]] == [3, 1, 2]
    # numeric cells, not text (openpyxl reads -50.0 back as the integer -50)
    assert all(sheet.cell(row=i, column=2).data_type == "n" for i in (2, 3, 4))
    assert all(sheet.cell(row=1, column=c).font.bold for c in range(1, 5))


def _pdf_text(path: str) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


def test_pdf_has_the_title_the_table_and_a_chart(tmp_path: Path) -> None:
    rows = [{"date": f"2026-{m:02d}-01", "amount": 1000 + 10 * m} for m in range(1, 7)]
    analysis = monthly_trend(rows, months_ahead=1).as_dict()
    block = export_result(_record(data=analysis), "pdf", tmp_path)
    text = _pdf_text(block["path"])
    assert "Sales by customer" in text
    for month in ("2026-01", "2026-06"):
        assert month in text
    assert "1,060.00" in text  # June: 1000 + 60, as the table shows it
    donut = concentration([{"key": k, "amount": v} for k, v in [("a", 3), ("b", 1)]]).as_dict()
    pie = export_result(_record(data=donut), "pdf", tmp_path / "pie")
    assert "75.00" in _pdf_text(pie["path"])  # a's share in the table


def test_a_large_pdf_says_it_shows_only_the_first_rows(tmp_path: Path) -> None:
    rows = [{"n": i} for i in range(PDF_MAX_ROWS + 5)]
    block = export_result(_record(rows), "pdf", tmp_path)
    assert block["rows"] == PDF_MAX_ROWS
    assert block["total_rows"] == PDF_MAX_ROWS + 5
    reader = PdfReader(block["path"])
    first = reader.pages[0].extract_text() or ""
    assert f"{PDF_MAX_ROWS + 5:,} rows; the first {PDF_MAX_ROWS:,} are shown" in first


async def test_the_export_tool_runs_for_the_owner_only(tmp_path: Path) -> None:
    store = MemoryResultStore()
    result_id = await store.put("ann", "sales_invoice.aggregate", {"rows": ROWS})
    tool = {t.name: t for t in results_module.tools(CATALOG, export_dir=tmp_path)}["results.export"]
    assert tool.run is not None

    def ctx(user: str) -> ToolContext:
        session = Session(id="s", user=user, credential=None, roles=frozenset())  # type: ignore[arg-type]
        return ToolContext(session, None, CATALOG, store)  # type: ignore[arg-type]

    out = await tool.run(ctx("ann"), {"result_id": result_id, "format": "xlsx"})
    block = out["block"]
    assert block["type"] == "file"
    assert Path(block["path"]).is_file()
    assert Path(block["path"]).parent.name == "ann"
    with pytest.raises(ToolInputError, match="no result"):
        await tool.run(ctx("bob"), {"result_id": result_id, "format": "csv"})


def test_a_report_exports_with_its_labels_and_the_erps_total_row(tmp_path: Path) -> None:
    report = {
        "columns": [
            {"fieldname": "party", "label": "Customer", "fieldtype": "Link"},
            {"fieldname": "outstanding", "label": "Outstanding Amount", "fieldtype": "Currency"},
        ],
        "rows": [{"outstanding": 300.0, "party": "Acme"}, {"outstanding": 20.5, "party": "Bolt"}],
        "total_row": ["", 320.5],
        "summary": [],
        # a Frappe chart: datasets carry "values", not "data"
        "chart": {
            "type": "donut",
            "data": {
                "labels": ["Acme", "Bolt"],
                "datasets": [{"name": "Due", "values": [300, 20.5]}],
            },
        },
    }
    record = ResultRecord(
        "res_r", "ann", "report.accounts_receivable", report, title="Receivables <open> & due"
    )
    sheet = openpyxl.load_workbook(export_result(record, "xlsx", tmp_path)["path"]).active
    assert sheet is not None
    assert list(sheet.iter_rows(values_only=True)) == [
        ("Customer", "Outstanding Amount"),
        ("Acme", 300),
        ("Bolt", 20.5),
        ("Total", 320.5),
    ]
    assert sheet.cell(row=4, column=2).font.bold
    lines = Path(export_result(record, "csv", tmp_path)["path"]).read_text().splitlines()
    assert lines[0] == "Customer,Outstanding Amount"
    assert lines[-1] == "Total,320.5"
    text = _pdf_text(export_result(record, "pdf", tmp_path)["path"])
    assert "Receivables <open> & due" in text
    assert "320.50" in text
