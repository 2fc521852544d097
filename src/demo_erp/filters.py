"""Frappe's filter grammar (list and dict forms, every operator) translated to SQLite."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dateutil.relativedelta import relativedelta

from demo_erp.context import Ctx
from demo_erp.exceptions import DataError, ValidationError
from demo_erp.meta import DATE_TYPES, NUMERIC_TYPES, DocType, get_meta

OPERATORS = (
    "=",
    "!=",
    ">",
    "<",
    ">=",
    "<=",
    "like",
    "not like",
    "in",
    "not in",
    "is",
    "between",
    "timespan",
    "previous",
    "next",
    "ancestors of",
    "descendants of",
    "not ancestors of",
    "not descendants of",
    "descendants of (inclusive)",
)
V16_OPERATORS = ("ilike", "=<", "=>")
_ALIASES = {"=<": "<=", "=>": ">=", "ilike": "like", "==": "="}
_SIMPLE = {"=", "!=", ">", "<", ">=", "<="}


@dataclass(frozen=True)
class Condition:
    doctype: str
    fieldname: str
    operator: str
    value: Any


def decode(value: Any) -> Any:
    """Query-string arguments arrive as JSON text; JSON bodies arrive decoded."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"Invalid JSON: {value[:80]}") from exc
    return value


def parse(raw: Any, doctype: str, version: int) -> list[Condition]:
    """Accept every shape Frappe accepts: list of 3/4-tuples, dict, and v16's bare name."""
    raw = decode(raw)
    if raw in (None, "", [], {}):
        return []
    if isinstance(raw, dict):
        out = []
        for key, value in raw.items():
            if isinstance(value, (list, tuple)) and value and isinstance(value[0], str):
                op = value[0]
                out.append(Condition(doctype, key, op, value[1] if len(value) > 1 else None))
            else:
                out.append(Condition(doctype, key, "=", value))
        return out
    if isinstance(raw, str):
        return [Condition(doctype, "name", "=", raw)]
    if isinstance(raw, list):
        if all(not isinstance(item, (list, tuple, dict)) for item in raw):
            if version >= 16:
                return [Condition(doctype, "name", "in", raw)]
            if len(raw) in (3, 4):
                raw = [raw]
        out = []
        for item in raw:
            if isinstance(item, dict):
                out.extend(parse(item, doctype, version))
            elif isinstance(item, (list, tuple)) and len(item) == 3:
                out.append(Condition(doctype, str(item[0]), str(item[1]), item[2]))
            elif isinstance(item, (list, tuple)) and len(item) == 4:
                out.append(Condition(str(item[0]), str(item[1]), str(item[2]), item[3]))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                out.append(Condition(doctype, str(item[0]), "=", item[1]))
            else:
                raise ValidationError(f"Invalid filter: {item!r}")
        return out
    raise ValidationError(f"Invalid filter: {raw!r}")


def _fallback(fieldtype: str) -> str:
    if fieldtype in NUMERIC_TYPES:
        return "0"
    if fieldtype in DATE_TYPES:
        return "'0001-01-01'"
    return "''"


def _coerce(value: Any, fieldtype: str) -> Any:
    if value is None:
        return None
    if fieldtype in NUMERIC_TYPES:
        if isinstance(value, bool):
            return int(value)
        try:
            number = float(value)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"Invalid number {value!r}") from exc
        return int(number) if fieldtype in ("Int", "Check") else number
    return str(value)


def _split_values(value: Any) -> list[Any]:
    value = decode(value)
    if isinstance(value, str):
        return [v.strip() for v in value.split(",")]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def timespan_range(span: str, today: dt.date) -> tuple[dt.date, dt.date]:
    span = span.strip().lower()
    month_start = today.replace(day=1)
    quarter_start = today.replace(month=(today.month - 1) // 3 * 3 + 1, day=1)
    week_start = today - dt.timedelta(days=today.weekday())
    ranges: dict[str, tuple[dt.date, dt.date]] = {
        "today": (today, today),
        "yesterday": (today - dt.timedelta(days=1),) * 2,
        "tomorrow": (today + dt.timedelta(days=1),) * 2,
        "this week": (week_start, week_start + dt.timedelta(days=6)),
        "last week": (week_start - dt.timedelta(days=7), week_start - dt.timedelta(days=1)),
        "next week": (week_start + dt.timedelta(days=7), week_start + dt.timedelta(days=13)),
        "this month": (month_start, month_start + relativedelta(months=1, days=-1)),
        "last month": (month_start - relativedelta(months=1), month_start - dt.timedelta(days=1)),
        "next month": (month_start + relativedelta(months=1), month_start + relativedelta(months=2, days=-1)),
        "this quarter": (quarter_start, quarter_start + relativedelta(months=3, days=-1)),
        "last quarter": (quarter_start - relativedelta(months=3), quarter_start - dt.timedelta(days=1)),
        "next quarter": (quarter_start + relativedelta(months=3), quarter_start + relativedelta(months=6, days=-1)),
        "this year": (today.replace(month=1, day=1), today.replace(month=12, day=31)),
        "last year": (today.replace(year=today.year - 1, month=1, day=1), today.replace(year=today.year - 1, month=12, day=31)),
        "next year": (today.replace(year=today.year + 1, month=1, day=1), today.replace(year=today.year + 1, month=12, day=31)),
        "last 6 months": (today - relativedelta(months=6), today),
        "next 6 months": (today, today + relativedelta(months=6)),
    }  # fmt: skip
    if span not in ranges:
        raise ValidationError(f"Invalid timespan: {span}")
    return ranges[span]


_PERIODS = {
    "1 week": relativedelta(weeks=1),
    "1 month": relativedelta(months=1),
    "3 months": relativedelta(months=3),
    "6 months": relativedelta(months=6),
    "1 year": relativedelta(years=1),
}


def _tree_condition(
    ctx: Ctx, column: str, tree: DocType, op: str, value: Any
) -> tuple[str, list[Any]]:
    row = ctx.conn.execute(
        f'select lft, rgt from "{tree.table_name}" where name = ?', (value,)
    ).fetchone()
    lft, rgt = (row["lft"], row["rgt"]) if row else (0, 0)
    if op.endswith("ancestors of"):
        sub = f'select name from "{tree.table_name}" where lft < ? and rgt > ?'
    elif op == "descendants of (inclusive)":
        sub = f'select name from "{tree.table_name}" where lft >= ? and rgt <= ?'
    else:
        sub = f'select name from "{tree.table_name}" where lft > ? and rgt < ?'
    neg = "not " if op.startswith("not ") else ""
    return f"ifnull({column}, '') {neg}in ({sub})", [lft, rgt]


def condition_sql(ctx: Ctx, meta: DocType, alias: str, cond: Condition) -> tuple[str, list[Any]]:
    """One condition as SQL over ``alias`` (a row of ``meta``)."""
    target = meta
    if cond.doctype != meta.name:
        child = get_meta(cond.doctype)
        if child is None or not child.istable:
            raise DataError(f"Field not permitted in query: {cond.doctype}.{cond.fieldname}")
        target = child
    elif not meta.is_valid_column(cond.fieldname):
        child = _child_with_field(meta, cond.fieldname)
        if child is None:
            raise DataError(f"Field not permitted in query: {cond.fieldname}")
        target = child
    if target is not meta:
        sql, params = condition_sql(
            ctx, target, "c", Condition(target.name, cond.fieldname, cond.operator, cond.value)
        )
        sub = (
            f'{alias}.name in (select c.parent from "{target.table_name}" c '
            f"where c.parenttype = ? and {sql})"
        )
        return sub, [meta.name, *params]
    if not target.is_valid_column(cond.fieldname):
        raise DataError(f"Field not permitted in query: {cond.fieldname}")
    return _operator_sql(ctx, meta, alias, cond)


def _child_with_field(meta: DocType, fieldname: str) -> DocType | None:
    for table in meta.table_fields:
        child = get_meta(table.options)
        if child is not None and child.is_valid_column(fieldname):
            return child
    return None


def _operator_sql(ctx: Ctx, meta: DocType, alias: str, cond: Condition) -> tuple[str, list[Any]]:
    op = cond.operator.strip().lower()
    valid = OPERATORS + (V16_OPERATORS if ctx.settings.version >= 16 else ())
    if op not in valid and op != "==":
        raise ValidationError(f"Operator must be one of {', '.join(valid)}")
    op = _ALIASES.get(op, op)
    f = meta.get_field(cond.fieldname)
    fieldtype = f.fieldtype if f else ("Int" if cond.fieldname in ("docstatus", "idx") else "Data")
    if cond.fieldname in ("creation", "modified"):
        fieldtype = "Datetime"
    column = f'{alias}."{cond.fieldname}"'
    guarded = f"ifnull({column}, {_fallback(fieldtype)})"
    value = cond.value
    if op in _SIMPLE:
        if value is None:
            return (f"{column} is null", []) if op == "=" else (f"{column} is not null", [])
        return f"{guarded} {op} ?", [_coerce(value, fieldtype)]
    if op in ("like", "not like"):
        return f"ifnull({column}, '') {op} ?", [str(value)]
    if op in ("in", "not in"):
        values = [_coerce(v, fieldtype) for v in _split_values(value)] or [""]
        marks = ", ".join("?" for _ in values)
        return f"{guarded} {op} ({marks})", values
    if op == "is":
        text = str(value).lower()
        if text not in ("set", "not set"):
            raise ValidationError(f"Invalid value for 'is' filter: {value}")
        return (
            f"ifnull({column}, '') != ''" if text == "set" else f"ifnull({column}, '') = ''"
        ), []
    if op == "between":
        bounds = _split_values(value)
        if len(bounds) != 2:
            raise ValidationError("Between filter needs two values")
        low, high = (_coerce(b, fieldtype) for b in bounds)
        if fieldtype == "Datetime":
            low, high = f"{str(low)[:10]} 00:00:00", f"{str(high)[:10]} 23:59:59.999999"
        return f"{guarded} between ? and ?", [low, high]
    if op == "timespan":
        start, end = timespan_range(str(value), ctx.today)
        return f"{guarded} between ? and ?", _date_bounds(start, end, fieldtype)
    if op in ("previous", "next"):
        delta = _PERIODS.get(str(value).strip().lower())
        if delta is None:
            raise ValidationError(f"Invalid period: {value}")
        today = ctx.today
        start, end = (today - delta, today) if op == "previous" else (today, today + delta)
        return f"{guarded} between ? and ?", _date_bounds(start, end, fieldtype)
    tree = get_meta(f.options) if f and f.fieldtype == "Link" else meta
    if tree is None or not tree.is_tree:
        raise ValidationError(f"{op} needs a tree field, not {cond.fieldname}")
    return _tree_condition(ctx, column, tree, op, value)


def _date_bounds(start: dt.date, end: dt.date, fieldtype: str) -> list[Any]:
    if fieldtype == "Datetime":
        return [f"{start} 00:00:00", f"{end} 23:59:59.999999"]
    return [start.isoformat(), end.isoformat()]


def where_sql(
    ctx: Ctx, meta: DocType, alias: str, conditions: Sequence[Condition], joiner: str = "and"
) -> tuple[str, list[Any]]:
    parts: list[str] = []
    params: list[Any] = []
    for cond in conditions:
        sql, p = condition_sql(ctx, meta, alias, cond)
        parts.append(f"({sql})")
        params.extend(p)
    return f" {joiner} ".join(parts), params
