"""How stored figures are shown to a finance user, on every channel: column labels, not field
names; amounts at the currency's precision and every amount column naming its currency; periods
as "Jan 2026"; dates without microseconds; document states and yes/no in words; financial
statements with their accounts indented.

Only the presentation changes here: every value still comes from the stored result. Which
columns a table shows is ``results.layout``; charts are ``results.charts``."""

from __future__ import annotations

import calendar
import datetime as dt
import itertools
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, NotRequired, TypedDict

from erp_agent.catalog import Catalog
from erp_agent.catalog.fields import FieldType

# ISO 4217 minor units where they are not 2.
_MINOR_UNITS = {"JPY": 0, "KRW": 0, "UGX": 0, "RWF": 0, "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3}
_FUNC_WORDS = {
    "sum": "",
    "avg": "Average ",
    "min": "Lowest ",
    "max": "Highest ",
    "count": "Count of ",
}
_PARTS = {"year": "Year", "quarter": "Quarter", "month": "Month", "day": "Day", "week": "Week"}
# A transaction's document state, in words (the code means nothing to a reader).
_DOCSTATUS = {0: "Draft", 1: "Submitted", 2: "Cancelled"}
_MONTH_KEY = re.compile(r"^(\d{4})-(\d{2})$")
_QUARTER_KEY = re.compile(r"^(\d{4})-Q([1-4])$")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# "2026-11-14 09:50:00.001000": the fraction of a second is noise to a reader.
_FRACTION = re.compile(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})\.\d+")
# A report's period column: ERPNext keys them by the period's last month ("mar_2026").
_PERIOD_FIELD = re.compile(r"^([a-z]{3})_(\d{4})$")
# A currency named in a label or title: "(KES)".
_CURRENCY_NOTE = re.compile(r"\s*\(([A-Z]{3})\)")
_TRAILING_CURRENCY = re.compile(r"(?:\s*\([A-Z]{3}\))+\s*$")


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = "dimension"  # dimension | period | measure | detail
    money: bool = False
    currency: str | None = None  # the one currency of the column, when there is one
    grain: str | None = None
    type: str | None = None  # the catalog's field type, when the column is an entity field


def precision(currency: str | None) -> int:
    return _MINOR_UNITS.get(str(currency or "").upper(), 2)


def decimals(column: Column, rows: list[dict[str, Any]]) -> int | None:
    """The decimal places a money column is shown with (None: not money, shown as it is)."""
    if not column.money:
        return None
    found = {precision(column.currency or r.get("currency")) for r in rows} or {2}
    return found.pop() if len(found) == 1 else None


def _round(value: Any, places: int) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    try:
        exact = Decimal(str(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return value
    return int(exact) if places == 0 else float(exact)


def currencies(rows: list[dict[str, Any]]) -> list[str]:
    return sorted({str(r["currency"]) for r in rows if r.get("currency")})


def with_currency(label: str, currency: str | None) -> str:
    """The label naming its currency once: "Total (KES)", never "Total (KES) (KES)"."""
    if not currency or f"({currency})" in label:
        return label
    return f"{label} ({currency})"


def without_currency(text: str, codes: Collection[str] | None = None) -> str:
    """A label or title with its currency notes taken out (a chart's title names its own):
    "(KES)" at its end, whatever the code, and within it the ``codes`` given (all when None),
    so "(VAT) by month" keeps its "(VAT)"."""
    text = _TRAILING_CURRENCY.sub("", text)
    return _CURRENCY_NOTE.sub(
        lambda m: "" if codes is None or m.group(1) in codes else m.group(0), text
    ).strip()


def _words(name: str) -> str:
    return name.replace("_", " ").strip().capitalize()


def _field(catalog: Catalog | None, entity: str | None, name: str) -> Any:
    if catalog is None or not entity:
        return None
    try:
        return catalog.entity(entity).fields.get(name)
    except Exception:  # an entity this catalog does not know: fall back to the key's words
        return None


def _derived(
    key: str, rows: list[dict[str, Any]], catalog: Catalog | None, entity: str | None
) -> Column:
    """A column of an entity aggregate or list: ``sum_total``, ``month_date``, ``customer``."""
    one = currencies(rows)
    single = one[0] if len(one) == 1 else None
    if key == "currency":
        return Column(key, "Currency")
    if key == "count_records":
        plural = None
        if catalog is not None and entity:
            try:
                plural = catalog.entity(entity).plural
            except Exception:  # unknown entity: a plain word
                plural = None
        return Column(key, plural or "Count", "measure")
    func, _, rest = key.partition("_")
    if func in _FUNC_WORDS and rest:
        field = _field(catalog, entity, rest)
        money = bool(field is not None and field.type == FieldType.MONEY) or (
            field is None and "currency" in (rows[0] if rows else {})
        )
        label = f"{_FUNC_WORDS[func]}{field.label if field is not None else _words(rest)}"
        label = label[0].upper() + label[1:]
        if money:
            label = with_currency(label, single)
        return Column(key, label, "measure", money, single if money else None)
    part, _, rest = key.partition("_")
    if part in _PARTS and rest and _field(catalog, entity, rest) is not None:
        return Column(key, _PARTS[part], "period", grain=part)
    field = _field(catalog, entity, key)
    if field is not None:
        money = field.type == FieldType.MONEY
        label = with_currency(field.label, single) if money else field.label
        kind = "measure" if money else "dimension"
        return Column(key, label, kind, money, single if money else None, type=str(field.type))
    return Column(key, _words(key))


def _declared(spec: dict[str, Any], rows: list[dict[str, Any]]) -> Column:
    """A column the result declares: metrics.query's {key, label, kind, currency} or a
    report's {fieldname, label, fieldtype}."""
    key = str(spec.get("key") or spec.get("fieldname"))
    if "kind" in spec:
        money = spec.get("currency") is not None or (
            spec["kind"] == "measure" and "currency" in (rows[0] if rows else {})
        )
        return Column(key, str(spec.get("label") or _words(key)), str(spec["kind"]), money,
                      spec.get("currency"), spec.get("grain"))  # fmt: skip
    money = spec.get("fieldtype") == "Currency"
    one = currencies(rows)
    currency = one[0] if money and len(one) == 1 else None
    label = str(spec.get("label") or _words(key))
    return Column(key, with_currency(label, currency) if money else label,
                  "measure" if money else "dimension", money, currency)  # fmt: skip


def columns_of(
    data: Any, rows: list[dict[str, Any]], catalog: Catalog | None, entity: str | None
) -> dict[str, Column]:
    """Every column of a stored result, keyed by its key."""
    declared = data.get("columns") if isinstance(data, dict) else None
    out: dict[str, Column] = {}
    if isinstance(declared, list):
        for spec in declared:
            if isinstance(spec, dict) and (spec.get("key") or spec.get("fieldname")):
                column = _declared(spec, rows)
                out[column.key] = column
        _label_periods(out)
    for key in dict.fromkeys(k for r in rows for k in r):
        if key not in out:
            out[key] = _derived(key, rows, catalog, entity)
    return out


def _label_periods(columns: dict[str, Column]) -> None:
    """A report's period columns say which period they hold: a label with no date in it ("This
    Year" over a quarter) is replaced by the period its key names ("Q1 2026")."""
    ends = {k: _period_end(k) for k in columns}
    keyed = sorted((end, k) for k, end in ends.items() if end is not None)
    if not keyed:
        return
    months = [end.year * 12 + end.month for end, _ in keyed]
    # The columns' width in months (the last may be cut short by the period's end).
    steps = Counter(b - a for a, b in itertools.pairwise(months))
    step = steps.most_common(1)[0][0] if steps else 12
    for end, key in keyed:
        column = columns[key]
        if re.search(r"\d", column.label):
            continue  # the ERP's own label names its period ("Jan 26-Mar 26")
        name = _span(end, step)
        currency = f" ({column.currency})" if column.currency else ""
        columns[key] = replace(column, label=name + currency)


def _period_end(key: str) -> dt.date | None:
    found = _PERIOD_FIELD.match(key)
    if not found:
        return None
    abbr = [m.lower() for m in calendar.month_abbr]
    month = found.group(1)
    return dt.date(int(found.group(2)), abbr.index(month), 1) if month in abbr else None


def _span(end: dt.date, months: int) -> str:
    """The months ending with ``end`` in words: "Mar 2026", "Jan–Mar 2026", "2026"."""
    if months == 1:
        return f"{calendar.month_abbr[end.month]} {end.year}"
    if months >= 12 and end.month == 12:
        return str(end.year)
    first = (end.year * 12 + end.month - 1) - (months - 1)
    start = dt.date(first // 12, first % 12 + 1, 1)
    since = calendar.month_abbr[start.month] + ("" if start.year == end.year else f" {start.year}")
    return f"{since}–{calendar.month_abbr[end.month]} {end.year}"


def year_of(definition: Any) -> int | None:
    """The calendar year a result's period lies in, when it lies in one."""
    period = definition.get("period") if isinstance(definition, dict) else None
    years = {d[:4] for d in _ISO_DATE.findall(str(period or ""))}
    return int(years.pop()) if len(years) == 1 else None


def shown(value: Any, column: Column, row: dict[str, Any], year: int | None = None) -> Any:
    """One cell as displayed: money at its currency's precision, periods and states in words,
    dates without the fraction of a second."""
    if column.money:
        return _round(value, precision(column.currency or row.get("currency")))
    if column.kind == "period":
        return period_label(value, column.grain, row, year)
    if column.key == "docstatus" and isinstance(value, int) and value in _DOCSTATUS:
        return _DOCSTATUS[value]
    if column.type == FieldType.BOOLEAN and isinstance(value, int):
        return "Yes" if value else "No"
    if isinstance(value, str) and (found := _FRACTION.match(value)):
        return found.group(1)
    if isinstance(value, float):
        return _round(value, 4)
    return value


def period_label(value: Any, grain: str | None, row: dict[str, Any], year: int | None) -> Any:
    text = str(value) if value is not None else ""
    if m := _MONTH_KEY.match(text):
        return f"{calendar.month_abbr[int(m.group(2))]} {m.group(1)}"
    if m := _QUARTER_KEY.match(text):
        return f"Q{m.group(2)} {m.group(1)}"
    if grain in ("month", "quarter") and isinstance(value, int) and not isinstance(value, bool):
        row_year = next((v for k, v in row.items() if k.startswith("year_")), None) or year
        name = calendar.month_abbr[value] if grain == "month" and 1 <= value <= 12 else f"Q{value}"
        return f"{name} {row_year}" if row_year else name
    return value


def indents(rows: list[dict[str, Any]]) -> list[int] | None:
    """A financial statement's tree depth per row (its accounts are indented like the ERP's)."""
    if not rows or not any("indent" in r for r in rows):
        return None
    return [int(r.get("indent") or 0) for r in rows]


def is_time_series(column: Column | None) -> bool:
    return column is not None and column.kind == "period"


def top_rows(rows: list[dict[str, Any]], value_key: str, top: int) -> list[dict[str, Any]]:
    """The ``top`` largest rows per currency (amounts in different currencies never compete)."""

    def amount(row: dict[str, Any]) -> float:
        value = row.get(value_key)
        return float(value) if isinstance(value, int | float) else float("-inf")

    counted: dict[Any, int] = {}
    out = []
    for row in sorted(rows, key=amount, reverse=True):
        currency = row.get("currency")
        counted[currency] = counted.get(currency, 0) + 1
        if counted[currency] <= top:
            out.append(row)
    return out


def by_currency(rows: list[dict[str, Any]]) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """Rows split per currency (one chart each), in the stored order; one group if one currency."""
    found = list(dict.fromkeys(r.get("currency") for r in rows if r.get("currency")))
    if len(found) <= 1:
        return [(found[0] if found else None, rows)]
    return [(c, [r for r in rows if r.get("currency") == c]) for c in found]


class ReportFigure(TypedDict):
    """One figure shown under a report's table (``results.summary.report_figures``)."""

    label: str  # naming its currency, e.g. "0-30 days (KES)"
    value: float
    decimals: NotRequired[int]  # an amount's places at its currency's precision


def figure_text(figure: ReportFigure) -> str:
    """A report's figure under its table as text, at the places it comes with (an amount at
    its currency's precision, an average age as computed)."""
    value, places = figure.get("value"), figure.get("decimals")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "" if value is None else str(value)
    return f"{value:,.{int(places)}f}" if places is not None else f"{value:,}"
