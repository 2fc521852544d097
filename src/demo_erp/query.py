"""``get_list`` and ``get_count``: the permission-aware list query behind the REST API."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from demo_erp import permissions
from demo_erp.context import Ctx
from demo_erp.exceptions import DataError, DoesNotExistError, PermissionError, ValidationError
from demo_erp.filters import decode, parse, where_sql
from demo_erp.meta import NUMERIC_TYPES, DocType, get_meta

BLOCKED_FUNCTIONS = {
    "concat", "concat_ws", "if", "ifnull", "nullif", "coalesce", "connection_id", "current_user",
    "database", "last_insert_id", "session_user", "system_user", "user", "version", "global",
}  # fmt: skip
AGGREGATES = {"sum", "count", "avg", "min", "max"}
# Dates are stored as ISO text (YYYY-MM-DD[ HH:MM:SS]): their parts are substrings, a third of
# strftime's cost per row (which parses the date first) and the same values, NULL for NULL.
DATE_PARTS = {
    "year": "cast(substr({}, 1, 4) as integer)",
    "month": "cast(substr({}, 6, 2) as integer)",
    "quarter": "((cast(substr({}, 6, 2) as integer) + 2) / 3)",
    "date": "date({})",
}
_FUNC_RE = re.compile(r"^(\w+)\s*\((.*)\)$", re.S)
_ALIAS_RE = re.compile(r"^(.*?)\s+as\s+`?(\w+)`?$", re.I | re.S)
_COLUMN_RE = re.compile(r"^(?:`?tab([\w ]+)`?\.)?`?(\w+)`?$")
_DATE_FORMATS = {"%Y-%m": "%Y-%m", "%Y": "%Y", "%Y-%m-%d": "%Y-%m-%d"}


@dataclass
class Select:
    sql: str
    alias: str
    aggregate: bool = False
    numeric: bool = False
    # For a rollup (see _rollup): a date function's column and its SQL template, or an
    # aggregate's partial expressions per (column, date) group and how they combine ({0}, {1}).
    column: str | None = None
    template: str | None = None
    partials: tuple[str, ...] = ()
    combine: str | None = None


class QueryBuilder:
    def __init__(self, ctx: Ctx, meta: DocType, alias: str = "t") -> None:
        self.ctx = ctx
        self.meta = meta
        self.alias = alias
        self.hidden = permissions.hidden_fields(ctx, meta)
        self.v16 = ctx.settings.version >= 16

    def column(self, token: str) -> tuple[str, str]:
        """A plain field reference -> (sql, fieldname). Unknown or hidden -> DataError."""
        match = _COLUMN_RE.match(token.strip())
        if not match or (match[1] and match[1].strip() != self.meta.name):
            raise DataError(f"Field not permitted in query: {token}")
        fieldname = match[2]
        if not self.meta.is_valid_column(fieldname):
            raise DataError(f"Field not permitted in query: {fieldname}")
        return f'{self.alias}."{fieldname}"', fieldname

    def _is_numeric(self, fieldname: str) -> bool:
        f = self.meta.get_field(fieldname)
        return bool(f and f.fieldtype in NUMERIC_TYPES) or fieldname in ("docstatus", "idx")

    def _aggregate(self, func: str, arg: str) -> Select:
        func = func.lower()
        if arg.strip() in ("*", "1") and func == "count":
            return Select(
                "count(*)", "count", True, True, partials=("count(*)",), combine="sum({0})"
            )
        if arg.strip().lower().startswith("distinct ") and func == "count":
            col, _ = self.column(arg.strip()[9:])
            return Select(f"count(distinct {col})", "count", aggregate=True, numeric=True)
        col, fieldname = self.column(arg)
        f = self.meta.get_field(fieldname)
        if func in ("sum", "avg") and f and f.fieldtype == "Currency":
            # Exact money sums: add integer minor units, divide once.
            exact = f"sum(cast(round(ifnull({col}, 0) * 100) as integer))"
            sql = f"({exact} / 100.0)" if func == "sum" else f"({exact} / 100.0 / count(*))"
            combine = "(sum({0}) / 100.0)" if func == "sum" else "(sum({0}) / 100.0 / sum({1}))"
            return Select(sql, f"{func}({fieldname})", True, True, None, None,
                          (exact, "count(*)"), combine)  # fmt: skip
        # Sums of integers and minima/maxima combine exactly; float sums would not (the order
        # of additions changes the last digits), so those queries are not rolled up.
        exact_sum = func == "sum" and f is not None and f.fieldtype in ("Int", "Check")
        nests = {"min": "min({0})", "max": "max({0})"}.get(func, "sum({0})" if exact_sum else None)
        return Select(f"{func}({col})", f"{func}({fieldname})", True, True, None, None,
                      (f"{func}({col})",) if nests else (), nests)  # fmt: skip

    def _function(self, func: str, args: str) -> Select:
        lower = func.lower()
        if lower in BLOCKED_FUNCTIONS:
            raise DataError(f"Use of function {func} in field is restricted")
        if lower in AGGREGATES:
            return self._aggregate(lower, args)
        if lower in DATE_PARTS:
            col, fieldname = self.column(args)
            return Select(
                DATE_PARTS[lower].format(col), f"{lower}({fieldname})", numeric=lower != "date",
                column=col, template=DATE_PARTS[lower],
            )  # fmt: skip
        if lower == "date_format":
            field_arg, _, fmt = args.partition(",")
            fmt = fmt.strip().strip("'\"")
            if fmt not in _DATE_FORMATS:
                raise DataError(f"Unsupported date format in field: {fmt}")
            col, fieldname = self.column(field_arg)
            template = f"strftime('{_DATE_FORMATS[fmt]}', {{}})"
            return Select(
                template.format(col), f"date_format({fieldname})", column=col, template=template
            )
        raise DataError(f"Use of function {func} in field is not supported")

    def select_string(self, token: str) -> list[Select]:
        token = token.strip()
        alias_match = _ALIAS_RE.match(token)
        expr, alias = (alias_match[1].strip(), alias_match[2]) if alias_match else (token, "")
        if expr in ("*", "`*`"):
            return [
                Select(f'{self.alias}."{name}"', name, numeric=self._is_numeric(name))
                for name in self.meta.column_names
                if name not in self.hidden
            ]
        func = _FUNC_RE.match(expr)
        if func:
            if self.v16:
                raise ValidationError(
                    f"SQL functions are not allowed as strings in SELECT: {token}. "
                    "Use dict syntax like {'COUNT': '*'} instead."
                )
            select = self._function(func[1], func[2])
        else:
            if "." in expr and not expr.startswith(("`tab", "tab")):
                raise DataError(f"Field not permitted in query: {expr}")
            sql, fieldname = self.column(expr)
            if fieldname in self.hidden:
                return []
            select = Select(sql, fieldname, numeric=self._is_numeric(fieldname), column=sql)
        if alias:
            select.alias = alias
        return [select]

    def select_dict(self, spec: dict[str, Any]) -> Select:
        if not self.v16:
            raise ValidationError(f"Invalid field format for SELECT: {spec}")
        alias = str(spec.get("as", ""))
        if alias and not re.fullmatch(r"\w+", alias):
            raise ValidationError(f"Invalid alias format: {alias}")
        keys = [k for k in spec if k != "as"]
        if len(keys) != 1:
            raise ValidationError(f"Invalid field format for SELECT: {spec}")
        func = keys[0]
        if func != func.upper() or func.lower() not in AGGREGATES | set(DATE_PARTS) | {"abs"}:
            raise ValidationError(f"Unsupported function or invalid field name: {func}")
        arg = spec[func]
        if isinstance(arg, list):
            arg = arg[0] if arg else ""
        arg = str(arg)
        if arg == "*" and func != "COUNT":
            raise ValidationError(f"'*' is only allowed in COUNT, not {func}")
        if func == "ABS":
            col, fieldname = self.column(arg)
            select = Select(f"abs({col})", f"abs({fieldname})", numeric=True)
        else:
            select = self._function(func, arg)
        if alias:
            select.alias = alias
        return select

    def selects(self, fields: Any) -> list[Select]:
        fields = decode(fields)
        if fields in (None, "", []):
            fields = ["name"]
        if isinstance(fields, str):
            fields = [f for f in fields.split(",") if f.strip()] if "(" not in fields else [fields]
        if isinstance(fields, dict):
            fields = [fields]
        out: list[Select] = []
        for item in fields:
            if isinstance(item, dict):
                out.append(self.select_dict(item))
            elif isinstance(item, str):
                out.extend(self.select_string(item))
            else:
                raise ValidationError(f"Invalid field format for SELECT: {item!r}")
        return out


def _order_sql(qb: QueryBuilder, order_by: Any, selects: list[Select]) -> str:
    aliases = {s.alias: s for s in selects}
    parts = []
    for token in str(order_by).split(","):
        token = token.strip()
        if not token:
            continue
        if re.search(r"\b(select|sleep)\b", token, re.I):
            raise ValidationError("Cannot use sub-query or function in order by")
        words = token.rsplit(None, 1)
        direction = "asc"
        if len(words) == 2 and words[1].lower() in ("asc", "desc"):
            token, direction = words[0], words[1].lower()
        if token.strip("`") in aliases:
            parts.append(f'"{token.strip("`")}" {direction}')
            continue
        func = _FUNC_RE.match(token)
        if func:
            parts.append(f"{qb._function(func[1], func[2]).sql} {direction}")
        else:
            parts.append(f"{qb.column(token)[0]} {direction}")
    return ", ".join(parts)


def _group_sql(qb: QueryBuilder, group_by: Any, selects: list[Select]) -> str:
    group_by = decode(group_by)
    tokens = group_by if isinstance(group_by, list) else str(group_by).split(",")
    aliases = {s.alias: s for s in selects}
    parts = []
    for token in tokens:
        token = str(token).strip().strip("`")
        if not token:
            continue
        if token in aliases:
            parts.append(f'"{token}"')
            continue
        func = _FUNC_RE.match(token)
        parts.append(qb._function(func[1], func[2]).sql if func else qb.column(token)[0])
    return ", ".join(parts)


def _rollup(selects: list[Select], source: str, group_by: Any, order_by: Any) -> str | None:
    """A GROUP BY over date parts (revenue by year and month) as two steps: partial aggregates
    per (column, date) first, then the parts and the totals from those few rows. SQLite groups
    by sorting every row; grouped by the raw columns, an index on them (posting_date, company)
    hands the rows over in order and nothing is sorted, and the date functions run once per
    day instead of once per row. The same figures exactly: money adds integer minor units in
    both steps, counts add up, minima and maxima nest. None when the query is not of that kind
    (an aggregate that does not combine exactly, a column not grouped, an order not by alias)."""
    group = [str(t).strip().strip("`") for t in _tokens(group_by) if str(t).strip()]
    order = [str(t).strip().rsplit(None, 1) for t in str(order_by).split(",") if str(t).strip()]
    by_alias = {s.alias: s for s in selects}
    keys = [s for s in selects if not s.aggregate]
    if (
        not any(s.template for s in keys)
        or sorted(s.alias for s in keys) != sorted(group)
        or any(s.column is None for s in keys)
        or any(s.aggregate and not s.combine for s in selects)
        or any(o[0].strip("`") not in by_alias for o in order)
        or any(len(o) == 2 and o[1].lower() not in ("asc", "desc") for o in order)
    ):
        return None
    columns = list(dict.fromkeys(str(s.column) for s in keys))
    inner = [f'{c} as "_g{i}"' for i, c in enumerate(columns)]
    outer = []
    for s in selects:
        if not s.aggregate:
            raw = f'r."_g{columns.index(str(s.column))}"'
            outer.append(f'{s.template.format(raw) if s.template else raw} as "{s.alias}"')
            continue
        names = []
        for expr in s.partials:
            names.append(f'r."_a{len(inner)}"')
            inner.append(f'{expr} as "_a{len(inner)}"')
        outer.append(f'{str(s.combine).format(*names)} as "{s.alias}"')
    ordering = ", ".join(
        f'"{o[0].strip("`")}" {o[1].lower() if len(o) == 2 else "asc"}' for o in order
    )
    regroup = ", ".join(f'"{g}"' for g in group)
    return (
        f"select {', '.join(outer)} from (select {', '.join(inner)} from {source} group by "
        f"{', '.join(columns)}) r group by {regroup} order by {ordering}"
    )


def _tokens(group_by: Any) -> list[Any]:
    group_by = decode(group_by)
    return group_by if isinstance(group_by, list) else str(group_by).split(",")


def _permitted_meta(ctx: Ctx, doctype: str, parent: str | None) -> tuple[DocType, DocType]:
    meta = get_meta(doctype)
    if meta is None:
        raise DoesNotExistError(f"DocType {doctype} not found")
    owner = meta
    if meta.istable:
        parent_meta = get_meta(parent or "")
        if parent_meta is None:
            raise PermissionError("Parent DocType Required: Please specify a valid parent DocType")
        owner = parent_meta
    if not permissions.has_doctype_permission(ctx, owner, "read"):
        raise permissions.doctype_denied(ctx, owner.name)
    return meta, owner


def _scope(ctx: Ctx, meta: DocType, owner: DocType, alias: str) -> tuple[list[str], list[Any]]:
    """Conditions that keep rows the user may not see out of any list, count or aggregate."""
    if owner is meta:
        return permissions.list_conditions(ctx, meta, alias)
    conds, params = permissions.list_conditions(ctx, owner, "p")
    where = " and ".join(conds) or "1=1"
    sub = f'{alias}.parent in (select p.name from "{owner.table_name}" p where {where})'
    return [sub, f"{alias}.parenttype = ?"], [*params, owner.name]


def _normalise(value: Any, numeric: bool) -> Any:
    if numeric and isinstance(value, float):
        return round(value, 9)
    return value


def get_list(
    ctx: Ctx,
    doctype: str,
    fields: Any = None,
    filters: Any = None,
    or_filters: Any = None,
    order_by: Any = None,
    group_by: Any = None,
    limit_start: Any = 0,
    limit_page_length: Any = 20,
    as_dict: bool = True,
    parent: str | None = None,
) -> list[Any]:
    meta, owner = _permitted_meta(ctx, doctype, parent)
    qb = QueryBuilder(ctx, meta)
    selects = qb.selects(fields)
    if not selects:
        raise DataError("No permitted fields in query")
    where, params = where_sql(ctx, meta, "t", parse(filters, doctype, ctx.settings.version))
    clauses = [where] if where else []
    or_where, or_params = where_sql(
        ctx, meta, "t", parse(or_filters, doctype, ctx.settings.version), "or"
    )
    if or_where:
        clauses.append(f"({or_where})")
        params += or_params
    scope, scope_params = _scope(ctx, meta, owner, "t")
    clauses += scope
    params += scope_params
    source = f'"{meta.table_name}" t' + (" where " + " and ".join(clauses) if clauses else "")
    sql = _rollup(selects, source, group_by, order_by) if group_by and order_by else None
    if sql is None:
        sql = "select " + ", ".join(f'{s.sql} as "{s.alias}"' for s in selects)
        sql += f" from {source}"
        if group_by:
            sql += " group by " + _group_sql(qb, group_by, selects)
        has_aggregate = any(s.aggregate for s in selects)
        if order_by:
            sql += " order by " + _order_sql(qb, order_by, selects)
        elif not has_aggregate and not group_by:
            sql += " order by t.modified desc"
    try:
        start = int(limit_start or 0)
        length = int(limit_page_length if limit_page_length not in (None, "") else 20)
    except (TypeError, ValueError) as exc:
        raise ValidationError("limit_start and limit_page_length must be integers") from exc
    if length > 0:
        sql += f" limit {length} offset {max(start, 0)}"
    elif start:
        sql += f" limit -1 offset {start}"
    rows = ctx.conn.execute(sql, params).fetchall()
    if as_dict:
        return [
            {s.alias: _normalise(row[i], s.numeric) for i, s in enumerate(selects)} for row in rows
        ]
    return [[_normalise(row[i], s.numeric) for i, s in enumerate(selects)] for row in rows]


def get_count(ctx: Ctx, doctype: str, filters: Any = None, check_permissions: bool = True) -> int:
    """Count rows. ``check_permissions=False`` imitates Frappe v15's frappe.client.get_count."""
    meta = get_meta(doctype)
    if meta is None:
        raise DoesNotExistError(f"DocType {doctype} not found")
    owner = meta
    if check_permissions:
        meta, owner = _permitted_meta(ctx, doctype, None)
    where, params = where_sql(ctx, meta, "t", parse(filters, doctype, ctx.settings.version))
    clauses = [where] if where else []
    if check_permissions:
        scope, scope_params = _scope(ctx, meta, owner, "t")
        clauses += scope
        params += scope_params
    sql = f'select count(*) from "{meta.table_name}" t'
    if clauses:
        sql += " where " + " and ".join(clauses)
    return int(ctx.conn.execute(sql, params).fetchone()[0])
