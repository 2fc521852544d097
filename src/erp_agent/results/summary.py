"""Summaries the model sees instead of rows: column facts computed in code, and top rows.

Totals are Decimal sums of the values as given, so a total the model quotes is exact.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypedDict

from erp_agent.results.presentation import ReportFigure, precision

TOP_ROWS = 5
SUMMARY_ROWS = 8  # a report's own opening, total and closing lines, shown beside the top rows
_NUMERIC_TYPES = frozenset({"Currency", "Float", "Int", "Percent"})
# An ageing bucket's label in the ERP's reports: "0-30", "121-Above".
_BUCKET = re.compile(r"^\d+\s*-\s*(?:\d+|Above)$", re.IGNORECASE)


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


def _is_age(name: str, label: str) -> bool:
    """A column of ages in days: adding its rows up means nothing (an average does)."""
    words = label.lower()
    return (
        name == "age" or name.endswith("_age") or words.startswith("age") or "average age" in words
    )


def _currency_of(rows: Sequence[Mapping[str, Any]]) -> str | None:
    found = {str(r["currency"]) for r in rows if r.get("currency")}
    return found.pop() if len(found) == 1 else None


def _named(label: str, currency: str | None) -> str:
    return f"{label} ({currency})" if currency and f"({currency})" not in label else label


def _data_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """A report's own rows, without its subtotal and total lines (bold, or a quoted label)."""
    return [r for r in rows if r and not r.get("bold") and not _labelled(r)]


class AgeingBucket(TypedDict):
    label: str  # the report's column label, e.g. "0-30"
    amount: int | float | Decimal  # the ERP's total of the bucket, else its rows' sum


class Ageing(TypedDict):
    """An ageing report's own figures (``ageing``): what ``report_figures`` shows."""

    currency: str | None  # the one currency of its rows, if one
    buckets: list[AgeingBucket]
    total: int | float
    weighted_average_age: float | None  # in days, weighted by amount


def ageing(result: Any) -> Ageing | None:
    """An ageing report's figures (Accounts Receivable / Payable): the amount in every bucket of
    the ERP's report, their total, and the average age weighted by amount. Amounts are summed per
    bucket, ages are never added up. None when the report has no ages and buckets."""
    columns = _column_names(_get(result, "columns") or [])
    ages = [n for n, label, _ in columns if _is_age(n, label)]
    buckets = [
        (n, label) for n, label, kind in columns if kind == "Currency" and _BUCKET.match(label)
    ]
    if not ages or not buckets:
        return None
    rows = _data_rows(list(_get(result, "rows") or []))
    total_row = _get(result, "total_row")
    erp_total: dict[str, Any] = {}
    if isinstance(total_row, Sequence) and not isinstance(total_row, str):
        erp_total = {n: v for (n, _, _), v in zip(columns, total_row, strict=False)}
    amounts: list[AgeingBucket] = []
    for name, label in buckets:
        value: Any = erp_total.get(name)  # a number once checked below
        if not is_number(value):  # no total row from the ERP: the bucket's rows, in Decimal
            value = _plain(sum((Decimal(str(r[name])) for r in rows if is_number(r.get(name))),
                               start=Decimal(0)))  # fmt: skip
        amounts.append({"label": label, "amount": value})
    weighted = Decimal(0)
    weight = Decimal(0)
    for row in rows:
        age = row.get(ages[0])
        owed = sum((Decimal(str(row[n])) for n, _ in buckets if is_number(row.get(n))),
                   start=Decimal(0))  # fmt: skip
        if is_number(age) and owed > 0:
            weighted += Decimal(str(age)) * owed
            weight += owed
    return {
        "currency": _currency_of(rows),
        "buckets": amounts,
        "total": _plain(sum((Decimal(str(b["amount"])) for b in amounts), start=Decimal(0))),
        "weighted_average_age": float(round(weighted / weight, 1)) if weight else None,
    }


def _bucket_words(label: str) -> str:
    """ "0-30" → "0-30 days", "121-Above" → "121+ days"."""
    low, _, high = label.partition("-")
    return f"{low.strip()}+ days" if high.strip().lower() == "above" else f"{label} days"


def report_figures(result: Any) -> list[ReportFigure]:
    """The figures shown under a report's table on every channel, each naming its currency:
    for an ageing report, the amount in each bucket, the total and the weighted average age."""
    found = ageing(result)
    if found is None:
        return []
    currency = found["currency"]
    places = precision(currency)
    step = Decimal(1).scaleb(-places)

    def amount(label: str, value: Any) -> ReportFigure:
        # At the currency's precision, as a table's cells are.
        shown = float(Decimal(str(value)).quantize(step, rounding=ROUND_HALF_UP))
        return {"label": _named(label, currency), "value": shown, "decimals": places}

    lines = [amount(_bucket_words(str(b["label"])), b["amount"]) for b in found["buckets"]]
    lines.append(amount("Total outstanding", found["total"]))
    if found["weighted_average_age"] is not None:
        lines.append(
            {"label": "Average age, weighted by amount (days)",
             "value": found["weighted_average_age"]}
        )  # fmt: skip
    return lines


def summarize_report(result: Any, *, top: int = TOP_ROWS) -> dict[str, Any]:
    """What the model sees of a report (a ``ReportResult`` or its dict): the columns, the ERP's
    own totals (from its total row and its labelled summary lines), its report summary, the
    ageing of an ageing report, and the top rows by the main amount.

    Totals are the ERP's, never re-added here, each naming its currency; a column of ages has
    no total (its rows' sum means nothing) and the whole report stays stored for display.
    """
    columns = _column_names(_get(result, "columns") or [])
    rows: list[Mapping[str, Any]] = list(_get(result, "rows") or [])
    currency = _currency_of(rows)
    aged = ageing(result)
    total_row = _get(result, "total_row")
    totals: dict[str, Any] = {}
    if isinstance(total_row, Sequence) and not isinstance(total_row, str):
        for (name, label, kind), value in zip(columns, total_row, strict=False):
            if kind in _NUMERIC_TYPES and is_number(value) and not _is_age(name, label):
                totals[_named(label or name, currency if kind == "Currency" else None)] = value
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
        **({"currency": currency} if currency else {}),
        **({"ageing": aged} if aged else {}),
        "message": _get(result, "message"),
        "has_chart": bool(_get(result, "chart")),
    }
