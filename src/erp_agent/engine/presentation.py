"""How stored figures are shown to a finance user: column labels, not field names; amounts at the
currency's precision; periods as "Jan 2026"; financial statements with their accounts first and
indented, internal columns hidden; one chart per currency, exactly the top N asked for.

Only the presentation changes here: every value still comes from the stored result, and a
chart's values are the table's values."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

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
# Columns a report carries for its own layout: shown only when asked for by name.
INTERNAL_COLUMNS = frozenset({
    "indent", "is_group", "parent_account", "year_start_date", "year_end_date", "opening_balance",
    "account_name", "include_in_gross", "has_value", "lft", "rgt", "warn_if_negative", "_values",
})  # fmt: skip
_MONTH_KEY = re.compile(r"^(\d{4})-(\d{2})$")
_QUARTER_KEY = re.compile(r"^(\d{4})-Q([1-4])$")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = "dimension"  # dimension | period | measure
    money: bool = False
    currency: str | None = None  # the one currency of the column, when there is one
    grain: str | None = None


def precision(currency: str | None) -> int:
    return _MINOR_UNITS.get(str(currency or "").upper(), 2)


def _round(value: Any, places: int) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    try:
        exact = Decimal(str(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return value
    return int(exact) if places == 0 else float(exact)


def _currencies(rows: list[dict[str, Any]]) -> list[str]:
    return sorted({str(r["currency"]) for r in rows if r.get("currency")})


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
    one = _currencies(rows)
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
        if money and single:
            label += f" ({single})"
        return Column(key, label, "measure", money, single if money else None)
    part, _, rest = key.partition("_")
    if part in _PARTS and rest and _field(catalog, entity, rest) is not None:
        return Column(key, _PARTS[part], "period", grain=part)
    field = _field(catalog, entity, key)
    if field is not None:
        money = field.type == FieldType.MONEY
        label = field.label + (f" ({single})" if money and single else "")
        kind = "measure" if money else "dimension"
        return Column(key, label, kind, money, single if money else None)
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
    one = _currencies(rows)
    return Column(key, str(spec.get("label") or _words(key)), "measure" if money else "dimension",
                  money, one[0] if money and len(one) == 1 else None)  # fmt: skip


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
    for key in dict.fromkeys(k for r in rows for k in r):
        if key not in out:
            out[key] = _derived(key, rows, catalog, entity)
    return out


def default_columns(data: Any, rows: list[dict[str, Any]]) -> list[str]:
    """What a table shows when the model names no columns: the columns the result declares
    (a report's own order: account first, then its periods), never its internal ones."""
    declared = data.get("columns") if isinstance(data, dict) else None
    keys = list(dict.fromkeys(k for r in rows for k in r))
    if isinstance(declared, list) and declared:
        named = [
            str(s.get("key") or s.get("fieldname"))
            for s in declared
            if isinstance(s, dict) and not s.get("hidden")
        ]
        shown = [k for k in named if k in keys or not rows]
        if shown:
            return shown
    return [k for k in keys if k not in INTERNAL_COLUMNS]


def year_of(definition: Any) -> int | None:
    """The calendar year a result's period lies in, when it lies in one."""
    period = definition.get("period") if isinstance(definition, dict) else None
    years = {d[:4] for d in _ISO_DATE.findall(str(period or ""))}
    return int(years.pop()) if len(years) == 1 else None


def shown(value: Any, column: Column, row: dict[str, Any], year: int | None = None) -> Any:
    """One cell as displayed: money at its currency's precision, periods in words."""
    if column.money:
        return _round(value, precision(column.currency or row.get("currency")))
    if column.kind == "period":
        return period_label(value, column.grain, row, year)
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
    currencies = list(dict.fromkeys(r.get("currency") for r in rows if r.get("currency")))
    if len(currencies) <= 1:
        return [(currencies[0] if currencies else None, rows)]
    return [(c, [r for r in rows if r.get("currency") == c]) for c in currencies]
