"""Binding a mapping to a live database: reflect the tables it names and check every table and
column exists, so a wrong mapping fails at start with every problem listed — never a partial
start, never a missing column found by the first user."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from erp_agent.catalog import Catalog
from erp_agent.connectors.sql.mapping import Mapping
from erp_agent.connectors.sql.statements import Bound
from erp_agent.errors import ConfigError, ErpUnavailable


def _tables(mapping: Mapping) -> set[str]:
    names = {e.table for e in mapping.entities.values()}
    for spec in mapping.entities.values():
        names |= {c.table for c in spec.tables.values()}
        if spec.tombstones is not None:
            names.add(spec.tombstones.table)
    if mapping.principals.table:
        names.add(mapping.principals.table)
    return names


def reflect(engine: sa.Engine, mapping: Mapping, url: str) -> dict[str, sa.Table]:
    wanted = _tables(mapping)
    meta = sa.MetaData()
    try:
        with engine.connect() as conn:
            existing = set(sa.inspect(conn).get_table_names())
            missing = sorted(wanted - existing)
            if missing:
                raise ConfigError(
                    f"{mapping.source}: the database has no table {', '.join(missing)} "
                    f"(tables there: {', '.join(sorted(existing)) or 'none'})"
                )
            meta.reflect(bind=conn, only=sorted(wanted))
    except sa.exc.OperationalError as exc:
        raise ErpUnavailable(f"Cannot reach the database {safe_url(url)}: {exc.orig}") from exc
    tables = dict(meta.tables)
    if engine.dialect.name == "sqlite":
        # SQLite stores NUMERIC as floating point; read it as float rather than pretend.
        for table in tables.values():
            for col in table.columns:
                if isinstance(col.type, sa.Numeric) and not isinstance(col.type, sa.Float):
                    col.type = sa.Numeric(asdecimal=False)
    return tables


def safe_url(url: str) -> str:
    """The database URL without its password (for messages and logs)."""
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "<invalid database URL>"


def bind(mapping: Mapping, tables: dict[str, sa.Table], catalog: Catalog) -> dict[str, Bound]:
    problems: list[str] = []

    def need(table: sa.Table, column: str | None, where: str) -> None:
        if column is not None and column not in table.c:
            problems.append(f"{where}: table {table.name} has no column {column!r}")

    principals = mapping.principals
    if principals.table:
        t = tables[principals.table]
        for column in (principals.id, principals.password_hash, principals.tenant):
            need(t, column, "principals")
        need(t, principals.roles, "principals")
        need(t, principals.branches, "principals")
        need(t, principals.disabled, "principals")
    bound: dict[str, Bound] = {}
    for name, spec in mapping.entities.items():
        where = f"entities.{name}"
        if name not in catalog.entities:
            problems.append(f"{where}: no canonical entity {name!r} in the catalog")
            continue
        known = catalog.entities[name].fields
        table = tables[spec.table]
        for named in (spec.id, spec.modified, spec.created, spec.deleted, spec.marker,
                      *spec.scope.values()):  # fmt: skip
            need(table, named, where)
        children: dict[str, Any] = {}
        for cname, child in spec.tables.items():
            ctable = tables[child.table]
            need(ctable, child.parent, f"{where}.tables.{cname}")
            for fname, fspec in child.fields.items():
                need(ctable, fspec.column, f"{where}.tables.{cname}.{fname}")
            if cname not in known:
                problems.append(f"{where}.tables: {name} has no canonical table field {cname!r}")
            children[cname] = (child, ctable)
        if spec.tombstones is not None:
            tomb = tables[spec.tombstones.table]
            for column in (spec.tombstones.entity_column, spec.tombstones.id, spec.tombstones.at):
                need(tomb, column, f"{where}.tombstones")
            need(tomb, spec.tombstones.tenant, f"{where}.tombstones")
        for fname, fspec in spec.fields.items():
            if fname not in known:
                problems.append(f"{where}.fields: {name} has no canonical field {fname!r}")
            if fspec.link is None and fspec.const is None:
                need(table, fspec.column, f"{where}.fields.{fname}")
        bound[name] = Bound(name, spec, table, {}, children)
    for name, b in bound.items():
        for fname, fspec in b.spec.fields.items():
            if fspec.link is None:
                continue
            own = b.spec.fields.get(fspec.link)
            target_entity = known_target(catalog, name, fspec.link)
            target = bound.get(target_entity or "")
            if own is None or target is None:
                problems.append(
                    f"entities.{name}.fields.{fname}: link {fspec.link!r} must be a mapped link "
                    "field whose entity is mapped too"
                )
                continue
            need(target.table, fspec.column, f"entities.{name}.fields.{fname}")
            b.links[fspec.link] = target
    if problems:
        raise ConfigError(f"{mapping.source}: " + "; ".join(problems))
    return bound


def known_target(catalog: Catalog, entity: str, field: str) -> str | None:
    spec = catalog.entities.get(entity)
    target = spec.fields.get(field) if spec else None
    return target.target if target is not None else None
