# mypy: disable-error-code="import-untyped"
# (until types-openpyxl and types-reportlab join the dev dependencies)
"""Exports of a stored result — CSV, XLSX, PDF — written as files and described by a file block.

Numbers stay numbers (XLSX cells are numeric, CSV has no thousands separators); the PDF holds the
title, the table and, when the result has one, its chart drawn with reportlab.graphics.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from erp_agent.errors import ToolInputError
from erp_agent.results.blocks import FileBlock
from erp_agent.results.store import ResultRecord
from erp_agent.results.summary import is_number

if TYPE_CHECKING:
    from reportlab.graphics.shapes import Drawing

    from erp_agent.catalog import Catalog

# openpyxl and reportlab are imported by the writer that needs them: together they take longer
# to import than a whole terminal start may (see benchmarks/cli_start.py).

FORMATS = {
    "csv": "text/csv",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pdf": "application/pdf",
}
# A PDF of a whole large result is unreadable and slow to build; CSV/XLSX carry every row.
PDF_MAX_ROWS = 2000
_PALETTE = ("#3366cc", "#dc3912", "#ff9900", "#109618", "#990099")
_MM = 72 / 25.4  # points per millimetre, as reportlab.lib.units.mm


def _cell(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict | list):
        return str(value)
    return value


def _header(record: ResultRecord) -> list[str]:
    labels = record.table.labels
    return [labels.get(c, c) for c in record.columns]


def _total_row(record: ResultRecord) -> list[Any] | None:
    """The ERP's total row of a report, under the same columns (never re-added here)."""
    total = record.table.total
    if total is None:
        return None
    row = [_cell(total.get(c)) for c in record.columns]
    if row and row[0] in (None, ""):
        row[0] = "Total"
    return row


def to_csv(record: ResultRecord) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(_header(record))
    for row in record.rows:
        writer.writerow(["" if row.get(c) is None else _cell(row.get(c)) for c in record.columns])
    total = _total_row(record)
    if total is not None:
        writer.writerow(["" if v is None else v for v in total])
    return out.getvalue().encode("utf-8")


def to_xlsx(record: ResultRecord) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Font

    book = Workbook()
    sheet = book.active
    assert sheet is not None  # a new workbook always has its first sheet
    sheet.title = _sheet_title(record.title)
    sheet.append(_header(record))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in record.rows:
        sheet.append([_cell(row.get(c)) for c in record.columns])
    total = _total_row(record)
    if total is not None:
        sheet.append(total)
        for cell in sheet[sheet.max_row]:
            cell.font = Font(bold=True)
    sheet.freeze_panes = "A2"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _sheet_title(title: str) -> str:
    return re.sub(r"[\[\]:*?/\\]", " ", title)[:31] or "Result"


# ------------------------------------------------------------------ PDF


def _text(value: Any) -> str:
    if value is None:
        return ""
    if is_number(value):
        return f"{value:,.2f}" if isinstance(value, float | Decimal) else f"{value:,}"
    return str(value)


def chart_drawing(
    spec: dict[str, Any], width: float = 240 * _MM, height: float = 80 * _MM
) -> Drawing | None:
    """A reportlab drawing of a Chart.js-shaped spec (bar, line, pie, doughnut), or None."""
    from reportlab.graphics.charts.barcharts import VerticalBarChart
    from reportlab.graphics.charts.linecharts import HorizontalLineChart
    from reportlab.graphics.charts.piecharts import Pie
    from reportlab.graphics.shapes import Drawing
    from reportlab.lib import colors

    palette = [colors.HexColor(c) for c in _PALETTE]
    data = spec.get("data") or {}
    labels = [str(x) for x in data.get("labels") or []]
    # Chart.js datasets carry "data"; a Frappe report chart's carry "values".
    sets = [
        {"label": d.get("label") or d.get("name"), "data": d.get("data") or d.get("values")}
        for d in data.get("datasets") or []
        if d.get("data") or d.get("values")
    ]
    if not labels or not sets:
        return None
    # A line leaves a gap where a value is missing (a forecast's past, an actual's future);
    # a bar or slice shows nothing there.
    gap = None if spec.get("type") == "line" else 0.0
    series = [[float(v) if is_number(v) else gap for v in d["data"]] for d in sets]
    drawing = Drawing(width, height)
    kind = {"donut": "doughnut", "percentage": "pie"}.get(spec.get("type") or "", spec.get("type"))
    if kind in ("pie", "doughnut"):
        pie = Pie()
        pie.x, pie.y, pie.width, pie.height = 20, 10, int(height - 20), int(height - 20)
        pie.data = [max(v or 0.0, 0.0) for v in series[0]]
        pie.labels = labels
        for i in range(len(labels)):
            pie.slices[i].fillColor = palette[i % len(palette)]
        drawing.add(pie)
        return drawing
    plot: VerticalBarChart | HorizontalLineChart = (
        HorizontalLineChart() if kind == "line" else VerticalBarChart()
    )
    plot.x, plot.y, plot.width, plot.height = 50, 30, int(width - 70), int(height - 45)
    plot.data = [tuple(s) for s in series]
    plot.categoryAxis.categoryNames = labels
    plot.categoryAxis.labels.angle = 45 if len(labels) > 8 else 0
    plot.categoryAxis.labels.boxAnchor = "ne" if len(labels) > 8 else "n"
    plot.categoryAxis.labels.fontSize = 6
    for i in range(len(series)):
        if isinstance(plot, VerticalBarChart):
            plot.bars[i].fillColor = palette[i % len(palette)]
        else:
            plot.lines[i].strokeColor = palette[i % len(palette)]
    drawing.add(plot)
    return drawing


def to_pdf(record: ResultRecord) -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4, landscape
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    out = io.BytesIO()
    doc = SimpleDocTemplate(out, pagesize=landscape(A4), title=record.title)
    # Paragraph text is reportlab markup: a title's "&" or "<" must be escaped.
    story: list[Any] = [Paragraph(escape(record.title), styles["Title"])]
    shown = record.rows[:PDF_MAX_ROWS]
    story.append(
        Paragraph(
            f"{record.total_rows:,} rows"
            + (
                f"; the first {len(shown):,} are shown here — export CSV or XLSX for all"
                if len(shown) < record.total_rows
                else ""
            ),
            styles["Normal"],
        )
    )
    drawing = chart_drawing(record.chart) if record.chart else None
    if drawing is not None:
        story += [Spacer(1, 4 * mm), drawing]
    story.append(Spacer(1, 4 * mm))
    body = [[_text(row.get(c)) for c in record.columns] for row in shown]
    total = _total_row(record)
    if total is not None and len(shown) == record.total_rows:
        body.append([_text(v) for v in total])
    table = Table([_header(record), *body], repeatRows=1)
    numeric = {i for i, c in enumerate(record.columns) if any(is_number(r.get(c)) for r in shown)}
    style: list[Any] = [
        ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
        ("FONTSIZE", (0, 0), (-1, -1), 7),
        ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
        ("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, colors.HexColor("#f3f3f3")]),
    ]
    style += [("ALIGN", (i, 1), (i, -1), "RIGHT") for i in numeric]
    table.setStyle(TableStyle(style))
    story.append(table)
    doc.build(story)
    return out.getvalue()


_WRITERS = {"csv": to_csv, "xlsx": to_xlsx, "pdf": to_pdf}


def _file_name(record: ResultRecord, fmt: str) -> str:
    """The title as a file name: what it holds, for whom, as of when — in words, as a reader
    would name it ("Accounts Receivable – Gulf Traders – 2026-11-30.xlsx")."""
    stem = " ".join(_UNSAFE.sub(" ", record.title).split()).strip(" .")[:150] or "Result"
    return f"{stem}.{fmt}"


# Characters no file system or download takes in a name (and control characters).
_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f]')
_PARTY = re.compile(r"^(customer|supplier|party|employee)\b\s*(?::|=|\bin\b)\s*(.+)$", re.I)
_COMPANY = re.compile(r"^company\b\s*(?::|=|\bin\b)\s*(.+)$", re.I)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_AS_OF = re.compile(r"^(?:as of|as of date|report date)\s*:\s*(\d{4}-\d{2}-\d{2})$", re.I)


def export_title(data: Any, tool: str, catalog: Catalog | None, today: dt.date) -> str:
    """What an export holds, for whom and as of when, from the stored result: "Accounts
    Receivable – Gulf Traders – 2026-11-30", "Revenue by Customer – 2026-01-01 to 2026-11-30"."""
    definition = data.get("definition") if isinstance(data, dict) else None
    definition = definition if isinstance(definition, dict) else {}
    filters = [str(f).rstrip(".") for f in definition.get("filters") or []]
    whom = next((m.group(2) for f in filters if (m := _PARTY.match(f))), None)
    whom = whom or next((m.group(1) for f in filters if (m := _COMPANY.match(f))), None)
    dates = _DATE.findall(str(definition.get("period") or ""))
    dates = dates or [m.group(1) for f in filters if (m := _AS_OF.match(f))]
    when = " to ".join(dict.fromkeys(dates[:2])) if dates else today.isoformat()
    return " – ".join(p for p in (_what(data, tool, catalog), whom, when) if p)


def _what(data: Any, tool: str, catalog: Catalog | None) -> str:
    kind, _, action = tool.partition(".")
    if isinstance(data, dict) and isinstance(data.get("title"), str) and data["title"]:
        return str(data["title"])
    if catalog is not None and kind == "report" and action in catalog.reports:
        return catalog.reports[action].label
    if isinstance(data, dict) and data.get("metric"):
        cut = [
            str(c.get("label"))
            for c in data.get("columns") or []
            if isinstance(c, dict) and c.get("kind") in ("dimension", "period")
            and c.get("key") != "currency"
        ]  # fmt: skip
        label = str(data.get("label") or data["metric"])
        return f"{label} by {' and '.join(cut)}" if cut else label
    if catalog is not None and kind in catalog.entities:
        return catalog.entities[kind].plural
    if isinstance(data, dict):
        for key in ("report", "analysis", "entity"):
            if isinstance(data.get(key), str) and data[key]:
                return str(data[key]).replace("_", " ").capitalize()
    return "Result"


def export_result(record: ResultRecord, fmt: str, directory: Path) -> FileBlock:
    """Write the export into ``directory`` and return its file block
    ``{type: "file", name, mime, path, size, rows}``."""
    if fmt not in _WRITERS:
        raise ToolInputError(f"format must be one of {', '.join(_WRITERS)}")
    content = _WRITERS[fmt](record)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record.id}.{fmt}"
    path.write_bytes(content)
    return export_block(record, fmt, path, len(content))


def export_block(record: ResultRecord, fmt: str, path: Path, size: int) -> FileBlock:
    """The file block of ``record``'s export in ``fmt`` written at ``path``."""
    rows = min(record.total_rows, PDF_MAX_ROWS) if fmt == "pdf" else record.total_rows
    return {
        "type": "file",
        "name": _file_name(record, fmt),
        "mime": FORMATS[fmt],
        "path": str(path),
        "size": size,
        "rows": rows,
        "total_rows": record.total_rows,
    }
