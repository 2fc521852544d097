"""Helpers shared by the standard reports: filters, permission scope, money, trees."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from demo_erp import permissions
from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError
from demo_erp.meta import get_meta
from demo_erp.reports import as_list

# Tree doctype -> its parent field; trees are walked by parent links, so lft/rgt may be stale.
TREE_PARENT = {
    "Account": "parent_account",
    "Territory": "parent_territory",
    "Customer Group": "parent_customer_group",
    "Item Group": "parent_item_group",
    "Warehouse": "parent_warehouse",
    "Cost Center": "parent_cost_center",
    "Supplier Group": "parent_supplier_group",
}


def cents(expr: str) -> str:
    """SQL for an amount in integer minor units, so sums are exact."""
    return f"cast(round(ifnull({expr}, 0) * 100) as integer)"


def money(value: int | float | None) -> float:
    """Integer cents (from SQL) back to a 2-dp amount."""
    return round((value or 0) / 100, 2)


def scope(ctx: Ctx, doctype: str, alias: str) -> tuple[str, list[Any]]:
    """' and …' conditions that keep rows this user may not see (User Permissions) out."""
    meta = get_meta(doctype)
    if meta is None:
        return "", []
    conds, params = permissions.list_conditions(ctx, meta, alias)
    return "".join(f" and {c}" for c in conds), params


def in_list(column: str, values: Iterable[Any]) -> tuple[str, list[Any]]:
    """' and column in (…)' for a non-empty list, else nothing."""
    vals = list(values)
    if not vals:
        return "", []
    return f" and {column} in ({', '.join('?' for _ in vals)})", vals


def field_in(doctype: str, alias: str, fieldname: str, values: Any) -> tuple[str, list[Any]]:
    """' and alias.field in (…)'; matches nothing when the doctype has no such field here
    (e.g. ``project`` on GL Entry): no row can carry a value it does not store."""
    vals = as_list(values)
    meta = get_meta(doctype)
    if not vals:
        return "", []
    if meta is None or not meta.is_valid_column(fieldname):
        return " and 0", []
    return in_list(f'{alias}."{fieldname}"', vals)


def get_date(filters: dict[str, Any], key: str, default: dt.date | None = None) -> dt.date:
    value = filters.get(key)
    if value in (None, ""):
        if default is None:
            raise ValidationError(f"Missing mandatory filters: {key}", title="Missing Filters")
        return default
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError as exc:
        raise ValidationError(f"{key}: '{value}' is not a valid date") from exc


def check_dates(from_date: dt.date, to_date: dt.date) -> None:
    if from_date > to_date:
        raise ValidationError("From Date must be before To Date")


def truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def with_descendants(ctx: Ctx, doctype: str, names: Iterable[str]) -> list[str]:
    """The named tree nodes and everything below them (Frappe's tree filters include children)."""
    wanted = [n for n in names if n]
    if not wanted:
        return []
    parent_field = TREE_PARENT[doctype]
    rows = ctx.conn.execute(f'select name, "{parent_field}" as parent from "tab{doctype}"')
    children: dict[str, list[str]] = {}
    for row in rows:
        children.setdefault(row["parent"] or "", []).append(row["name"])
    out: list[str] = []
    seen: set[str] = set()
    stack = list(wanted)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        out.append(name)
        stack.extend(children.get(name, []))
    return out


def tree_filter(ctx: Ctx, doctype: str, column: str, value: Any) -> tuple[str, list[Any]]:
    """' and column in (node + descendants)' for a Link filter on a tree doctype."""
    return in_list(column, with_descendants(ctx, doctype, as_list(value)))


def company_currency(ctx: Ctx, company: str | None) -> str | None:
    row = ctx.conn.execute(
        'select default_currency from "tabCompany" where name = ?', (company,)
    ).fetchone()
    return str(row["default_currency"]) if row and row["default_currency"] else None


def fiscal_year(ctx: Ctx, day: dt.date) -> tuple[str, dt.date, dt.date]:
    """The Fiscal Year containing ``day``; the calendar year when none is defined."""
    row = ctx.conn.execute(
        'select name, year_start_date, year_end_date from "tabFiscal Year" '
        "where year_start_date <= ? and year_end_date >= ? and ifnull(disabled, 0) = 0 "
        "order by year_start_date desc limit 1",
        (day.isoformat(), day.isoformat()),
    ).fetchone()
    if row:
        return (
            str(row["name"]),
            dt.date.fromisoformat(row["year_start_date"]),
            dt.date.fromisoformat(row["year_end_date"]),
        )
    return str(day.year), dt.date(day.year, 1, 1), dt.date(day.year, 12, 31)
