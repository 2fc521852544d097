"""Summaries the model sees instead of rows: column facts computed in code, and top rows.

Totals are Decimal sums of the values as given, so a total the model quotes is exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

TOP_ROWS = 5
SUMMARY_ROWS = 8  # a report's own opening, total and closing lines, shown beside the top rows
_NUMERIC_TYPES = frozenset({"Currency", "Float", "Int", "Percent"})


def is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def columns_of(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Column names in first-seen order across all rows."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(str(key), None)
    return list(seen)


def numeric_columns(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[str]:
    """Columns whose every non-empty value is a number (and that have at least one)."""
    out = []
    for column in columns:
        values = [r.get(column) for r in rows if r.get(column) is not None]
        if values and all(is_number(v) for v in values):
            out.append(column)
    return out


def _plain(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def column_stats(rows: Sequence[Mapping[str, Any]], column: str) -> dict[str, Any]:
    values = [Decimal(str(r[column])) for r in rows if is_number(r.get(column))]
    if not values:
        return {"count": 0}
    total = sum(values, start=Decimal(0))
    return {
        "count": len(values),
        "total": _plain(total),
        "min": _plain(min(values)),
        "max": _plain(max(values)),
        "average": round(float(total / len(values)), 4),
    }


def top_rows(
    rows: Sequence[Mapping[str, Any]], by: str | None, n: int = TOP_ROWS
) -> list[dict[str, Any]]:
    """The ``n`` rows with the largest ``by`` (first rows when there is no such column)."""
    if by is None:
        return [dict(r) for r in rows[:n]]
    ranked = sorted((r for r in rows if is_number(r.get(by))), key=lambda r: -Decimal(str(r[by])))
    return [dict(r) for r in ranked[:n]]


def summarize_rows(rows: Sequence[Mapping[str, Any]], *, top: int = TOP_ROWS) -> dict[str, Any]:
    """``{columns, row_count, numeric: {column: {count, total, min, max, average}},
    top_by, top_rows}``; top rows are ranked by the numeric column with the largest total."""
    columns = columns_of(rows)
    numeric = {c: column_stats(rows, c) for c in numeric_columns(rows, columns)}
    main = max(numeric, key=lambda c: abs(numeric[c].get("total", 0)), default=None)
    return {
        "columns": columns,
        "row_count": len(rows),
        "numeric": numeric,
        "top_by": main,
        "top_rows": top_rows(rows, main, top),
    }


# ------------------------------------------------------------------ reports


def _column_names(columns: Sequence[Any]) -> list[tuple[str, str, str]]:
    """(fieldname, label, fieldtype) of report columns, which every connector hands over as
    ``{fieldname, label, fieldtype}`` dicts (its ``normalize_columns``)."""
    out = []
    for col in columns:
        if isinstance(col, Mapping):
            name = str(col.get("fieldname") or col.get("label") or "")
            out.append((name, str(col.get("label") or name), str(col.get("fieldtype") or "Data")))
    return out


def _get(result: Any, key: str) -> Any:
    return result.get(key) if isinstance(result, Mapping) else getattr(result, key, None)


def _labelled(row: Mapping[str, Any]) -> bool:
    """A report's own summary line: ERPNext quotes its label ('Opening', 'Total', 'Closing
    (Opening + Total)', 'Total Income (Credit)') where a data row has an account or a name."""
    return any(
        isinstance(v, str) and len(v) > 2 and v.startswith("'") and v.endswith("'")
        for v in row.values()
    )


def summarize_report(result: Any, *, top: int = TOP_ROWS) -> dict[str, Any]:
    """What the model sees of a report (a ``ReportResult`` or its dict): the columns, the ERP's
    own totals (from its total row and its labelled summary lines), its report summary, and the
    top rows by the main amount.

    Totals are the ERP's, never re-added here; the whole report stays stored for display.
    """
    columns = _column_names(_get(result, "columns") or [])
    rows: list[Mapping[str, Any]] = list(_get(result, "rows") or [])
    total_row = _get(result, "total_row")
    totals: dict[str, Any] = {}
    if isinstance(total_row, Sequence) and not isinstance(total_row, str):
        for (name, label, kind), value in zip(columns, total_row, strict=False):
            if kind in _NUMERIC_TYPES and is_number(value):
                totals[label or name] = value
    amounts = [n for n, _, kind in columns if kind == "Currency"]
    numbers = amounts or [n for n, _, kind in columns if kind in _NUMERIC_TYPES]
    main = None
    if numbers:
        main = max(
            numbers,
            key=lambda c: sum(
                abs(Decimal(str(r.get(c) or 0))) for r in rows if is_number(r.get(c))
            ),
        )
    return {
        "report": _get(result, "report"),
        "columns": [{"name": n, "label": label, "type": kind} for n, label, kind in columns],
        "row_count": len(rows),
        "totals": totals,
        "report_summary": [
            {"label": s.get("label"), "value": s.get("value")}
            for s in _get(result, "summary") or []
            if isinstance(s, Mapping)
        ],
        "top_by": main,
        "top_rows": top_rows(rows, main, top),
        "summary_rows": [dict(r) for r in rows if _labelled(r)][:SUMMARY_ROWS],
        "message": _get(result, "message"),
        "has_chart": bool(_get(result, "chart")),
    }
