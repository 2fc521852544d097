"""Statements built with SQLAlchemy Core from the mapping: every identifier comes from the
mapping, every value is a bound parameter, and every statement carries the principal's scope
(tenant, branches, not deleted) in its WHERE clause — lists, gets, counts, aggregates, sync.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlalchemy as sa

from erp_agent.connectors.query import DatePart, Filter, Func, GroupKey, Measure, Op
from erp_agent.connectors.sql.mapping import ChildTable, EntitySpec, FieldSpec
from erp_agent.connectors.sql.principals import Principal
from erp_agent.errors import CatalogError, ErpRefusal, Refusal


def invalid(message: str) -> ErpRefusal:
    return ErpRefusal(Refusal(message, "ValidationError", 417))


def coerce(column: sa.ColumnElement[Any], value: Any, name: str) -> Any:
    """A filter or write value as the column's Python type; a clear refusal if it is not one."""
    if value is None:
        return None
    kind = column.type
    try:
        if isinstance(kind, sa.DateTime):
            if isinstance(value, dt.datetime):
                return value
            text = str(value)
            return dt.datetime.fromisoformat(text if len(text) > 10 else f"{text}T00:00:00")
        if isinstance(kind, sa.Date):
            if isinstance(value, dt.date):
                return value
            return dt.date.fromisoformat(str(value)[:10])
        if isinstance(kind, sa.Boolean):
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes")
            return bool(value)
        if isinstance(kind, sa.Integer):
            if isinstance(value, bool):
                return int(value)
            return int(Decimal(str(value)))
        if isinstance(kind, sa.Numeric):
            number = Decimal(str(value))
            return number if kind.asdecimal else float(number)
    except (ValueError, InvalidOperation, ArithmeticError):
        raise invalid(f"{value!r} is not a valid value for {name}") from None
    if isinstance(value, bool | int | float | Decimal):
        return str(value)
    if isinstance(value, str) and "\x00" in value:
        raise invalid(f"the value for {name} contains a NUL character")
    return str(value)


def plain(value: Any) -> Any:
    """A value read from the database in the shape canonical records carry."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float):
        # SQLite adds NUMERIC columns in binary floating point: 354161.33999999997 is 354161.34.
        return round(value, 6)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


@dataclass
class Bound:
    """One mapped entity bound to its reflected tables."""

    entity: str
    spec: EntitySpec
    table: sa.Table
    links: dict[str, Bound]  # canonical link field -> the linked entity (for link columns)
    children: dict[str, tuple[ChildTable, sa.Table]]

    def id_column(self) -> sa.Column[Any]:
        return self.table.c[self.spec.id]

    def column(self, name: str) -> sa.ColumnElement[Any]:
        """The SQL expression of canonical field ``name`` (a linked column is a correlated
        scalar subquery, scoped to the same tenant)."""
        if name == "id":
            return self.id_column()
        fspec = self.field(name)
        if fspec.const is not None:
            return sa.literal(fspec.const)
        if fspec.link is None:
            return self.table.c[fspec.column]
        target = self.links[fspec.link]
        own = self.column(fspec.link)
        sub = sa.select(target.table.c[fspec.column]).where(
            target.id_column() == own,
            target.table.c[target.spec.scope["tenant"]] == self.table.c[self.spec.scope["tenant"]],
        )
        return sub.scalar_subquery()

    def field(self, name: str) -> FieldSpec:
        fspec = self.spec.fields.get(name)
        if fspec is None:
            if name == "modified" and self.spec.modified:
                return FieldSpec(column=self.spec.modified)
            if name == "created" and self.spec.created:
                return FieldSpec(column=self.spec.created)
            raise CatalogError(f"the sql mapping of {self.entity!r} has no field {name!r}")
        return fspec

    def scalar_fields(self) -> list[str]:
        names = ["id", *self.spec.fields]
        if self.spec.modified and "modified" not in names:
            names.append("modified")
        return list(dict.fromkeys(names))

    # ------------------------------------------------------------ scope

    def scope(self, principal: Principal, *, live: bool = True) -> list[sa.ColumnElement[bool]]:
        """The predicates every statement on this entity carries, from the principal (and,
        unless reading tombstones, "not deleted")."""
        where: list[sa.ColumnElement[bool]] = [
            self.table.c[self.spec.scope["tenant"]]
            == sa.bindparam("scope_tenant", principal.tenant)
        ]
        branch = self.spec.scope.get("branch")
        if branch is not None:
            where.append(
                self.table.c[branch].in_(sa.bindparam("scope_branches", list(principal.branches), expanding=True))
            )  # fmt: skip
        if live and self.spec.deleted is not None:
            where.append(self.table.c[self.spec.deleted].is_(None))
        return where

    # ------------------------------------------------------------ filters

    def condition(self, flt: Filter) -> sa.ColumnElement[bool]:
        head, _, rest = flt.field.partition(".")
        if rest:
            return self._child_condition(head, rest, flt)
        fspec = self.field(flt.field) if flt.field != "id" else FieldSpec(column=self.spec.id)
        if fspec.const is not None:
            return sa.true() if const_holds(fspec.const, flt) else sa.false()
        return compare(self.column(flt.field), fspec, flt, f"{self.entity}.{flt.field}")

    def _child_condition(self, head: str, rest: str, flt: Filter) -> sa.ColumnElement[bool]:
        found = self.children.get(head)
        if found is None or rest not in found[0].fields:
            raise CatalogError(f"the sql mapping of {self.entity!r} has no row field {flt.field!r}")
        child, table = found
        fspec = child.fields[rest]
        inner = compare(table.c[fspec.column], fspec, flt, f"{self.entity}.{flt.field}")
        return sa.exists(
            sa.select(sa.literal(1)).where(table.c[child.parent] == self.id_column(), inner)
        )

    def where(
        self, principal: Principal, filters: Sequence[Filter]
    ) -> list[sa.ColumnElement[bool]]:
        return [*self.scope(principal), *(self.condition(f) for f in filters)]


def const_holds(const: str | int, flt: Filter) -> bool:
    """Whether a filter holds for a constant field (the same on every row): decided here, so
    the statement carries no comparison of two bound values."""
    items = flt.value if isinstance(flt.value, list | tuple) else [flt.value]
    same = [str(v) for v in items]
    checks: dict[Op, bool] = {
        Op.EQ: str(const) == str(flt.value),
        Op.NE: str(const) != str(flt.value),
        Op.IN: str(const) in same,
        Op.NOT_IN: str(const) not in same,
        Op.IS_SET: str(const) != "",
        Op.IS_NOT_SET: str(const) == "",
    }
    if flt.op not in checks:
        raise invalid(f"'{flt.op}' is not supported on {flt.field}: it is the same on every row")
    return checks[flt.op]


def compare(
    col: sa.ColumnElement[Any], fspec: FieldSpec, flt: Filter, name: str
) -> sa.ColumnElement[bool]:
    def value(raw: Any) -> Any:
        return coerce(col, fspec.stored(raw), name)

    op = flt.op
    if op is Op.IS_SET:
        is_text = isinstance(col.type, sa.String)
        return sa.and_(col.is_not(None), col != "") if is_text else col.is_not(None)
    if op is Op.IS_NOT_SET:
        is_text = isinstance(col.type, sa.String)
        return sa.or_(col.is_(None), col == "") if is_text else col.is_(None)
    if op in (Op.IN, Op.NOT_IN):
        items = flt.value if isinstance(flt.value, list | tuple) else [flt.value]
        bound: sa.BindParameter[Any] = sa.bindparam(None, [value(v) for v in items], expanding=True)
        return col.in_(bound) if op is Op.IN else col.not_in(bound)
    if op in (Op.LIKE, Op.NOT_LIKE):
        text = sa.func.lower(sa.cast(col, sa.String))
        pattern = sa.bindparam(None, str(flt.value).lower(), type_=sa.String)
        return text.like(pattern) if op is Op.LIKE else text.not_like(pattern)
    if op is Op.BETWEEN:
        if not isinstance(flt.value, list | tuple) or len(flt.value) != 2:
            raise invalid(f"'between' on {name} takes [from, to]")
        return col.between(value(flt.value[0]), value(flt.value[1]))
    if op in (Op.DESCENDANTS_OF, Op.ANCESTORS_OF):
        raise invalid(f"'{op}' is not supported on {name}: this database has no tree of records")
    v: sa.BindParameter[Any] = sa.bindparam(None, value(flt.value), type_=col.type)
    if op is Op.EQ:
        return col == v
    if op is Op.NE:
        return col != v
    if op is Op.GT:
        return col > v
    if op is Op.GE:
        return col >= v
    if op is Op.LT:
        return col < v
    return col <= v


# ------------------------------------------------------------------ aggregates


def group_expression(bound: Bound, key: GroupKey) -> sa.ColumnElement[Any]:
    col = bound.column(key.field)
    if key.part is None:
        return col
    if key.part is DatePart.YEAR:
        return sa.extract("year", col)
    month = sa.extract("month", col)
    if key.part is DatePart.MONTH:
        return month
    return sa.case((month <= 3, 1), (month <= 6, 2), (month <= 9, 3), else_=4)


def measure_expression(bound: Bound, measure: Measure) -> sa.ColumnElement[Any]:
    if measure.func is Func.COUNT:
        return sa.func.count()
    col = bound.column(str(measure.field))
    if measure.func is Func.SUM:
        return sa.func.sum(col)
    if measure.func is Func.AVG:
        return sa.func.avg(col)
    if measure.func is Func.MIN:
        return sa.func.min(col)
    return sa.func.max(col)


def aggregate_statement(
    bound: Bound,
    principal: Principal,
    groups: Sequence[GroupKey],
    measures: Sequence[Measure],
    filters: Sequence[Filter],
) -> sa.Select[Any]:
    """One grouped aggregate: ``SELECT keys, measures, count(*) … WHERE scope AND filters
    GROUP BY keys`` — the database adds up, never the model."""
    keys = [group_expression(bound, g).label(g.alias) for g in groups]
    values = [measure_expression(bound, m).label(m.alias) for m in measures]
    if Measure(Func.COUNT) not in measures:
        values.append(sa.func.count().label(Measure(Func.COUNT).alias))
    stmt = sa.select(*keys, *values).select_from(bound.table)
    stmt = stmt.where(*bound.where(principal, filters))
    if keys:
        # By position: one expression per key (bound values in a CASE are not re-bound), and
        # no clash between an output alias and a column of the same name.
        positions: list[sa.ColumnElement[Any]] = [
            sa.literal_column(str(i + 1)) for i in range(len(keys))
        ]
        stmt = stmt.group_by(*positions).order_by(*positions)
    return stmt


# ------------------------------------------------------------------ writes


def write_values(b: Bound, values: Mapping[str, Any]) -> dict[str, Any]:
    """Column values of a write: mapped, typed, and never a scope, link or version column."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name in ("id", "modified", "created") or name in b.spec.tables:
            continue
        spec = b.field(name)
        if spec.link is not None or spec.const is not None:
            continue  # read through the link (written on the linked record), or a constant
        if spec.column in b.spec.scope.values():
            continue  # scope columns come from the principal, never from the caller
        out[spec.column] = coerce(b.table.c[spec.column], spec.stored(value), f"{b.entity}.{name}")
    return out


def next_id(conn: sa.Connection, b: Bound) -> str:
    """The next id of the entity's naming pattern ("CUS-{n:05d}"), inside the write's transaction."""
    pattern = b.spec.naming or f"{b.entity.upper()}-{{n:05d}}"
    prefix = pattern.split("{", 1)[0]
    ids = conn.execute(
        sa.select(b.id_column()).where(b.id_column().like(sa.bindparam("p", f"{prefix}%")))
    ).scalars()
    numbers = [int(m.group()) for i in ids if (m := re.search(r"\d+$", str(i)))]
    return pattern.format(n=max(numbers, default=0) + 1)
