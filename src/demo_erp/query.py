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
DATE_PARTS = {
    "year": "cast(strftime('%Y', {}) as integer)",
    "month": "cast(strftime('%m', {}) as integer)",
    "quarter": "((cast(strftime('%m', {}) as integer) + 2) / 3)",
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
            return Select("count(*)", "count", aggregate=True, numeric=True)
        if arg.strip().lower().startswith("distinct ") and func == "count":
            col, _ = self.column(arg.strip()[9:])
            return Select(f"count(distinct {col})", "count", aggregate=True, numeric=True)
        col, fieldname = self.column(arg)
        f = self.meta.get_field(fieldname)
        if func in ("sum", "avg") and f and f.fieldtype == "Currency":
            # Exact money sums: add integer minor units, divide once.
            exact = f"sum(cast(round(ifnull({col}, 0) * 100) as integer))"
            sql = f"({exact} / 100.0)" if func == "sum" else f"({exact} / 100.0 / count(*))"
            return Select(sql, f"{func}({fieldname})", aggregate=True, numeric=True)
        return Select(f"{func}({col})", f"{func}({fieldname})", aggregate=True, numeric=True)

    def _function(self, func: str, args: str) -> Select:
        lower = func.lower()
        if lower in BLOCKED_FUNCTIONS:
            raise DataError(f"Use of function {func} in field is restricted")
        if lower in AGGREGATES:
            return self._aggregate(lower, args)
        if lower in DATE_PARTS:
            col, fieldname = self.column(args)
            return Select(
                DATE_PARTS[lower].format(col), f"{lower}({fieldname})", numeric=lower != "date"
            )
        if lower == "date_format":
            field_arg, _, fmt = args.partition(",")
            fmt = fmt.strip().strip("'\"")
            if fmt not in _DATE_FORMATS:
                raise DataError(f"Unsupported date format in field: {fmt}")
            col, fieldname = self.column(field_arg)
            return Select(f"strftime('{_DATE_FORMATS[fmt]}', {col})", f"date_format({fieldname})")
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
            select = Select(sql, fieldname, numeric=self._is_numeric(fieldname))
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
    sql = "select " + ", ".join(f'{s.sql} as "{s.alias}"' for s in selects)
    sql += f' from "{meta.table_name}" t'
    if clauses:
        sql += " where " + " and ".join(clauses)
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
