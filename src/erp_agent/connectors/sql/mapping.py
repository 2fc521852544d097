"""The mapping file of a bespoke SQL database: tables and columns → canonical entities and
fields, the scope columns, links between tables, the principal source, named reports.

One YAML file says everything the connector needs (docs/connectors.md shows a whole one).
Identifiers in generated SQL come only from here; values are always bound parameters.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic import Field as PydanticField

from erp_agent.errors import ConfigError

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _ident(value: str, what: str) -> str:
    if not _IDENT.match(value):
        raise ValueError(f"{what} {value!r} is not a plain SQL identifier")
    return value


class FieldSpec(_Model):
    """A canonical field: a ``column`` of the entity's table, or — through ``link`` (a field
    of this entity naming a record of another) — a column of the linked entity's table.
    ``values`` maps canonical values to stored ones where they differ; ``roles``, when given,
    are the only roles that may read it."""

    column: str = ""
    link: str | None = None
    values: dict[str | int, str | int] = PydanticField(default_factory=dict)
    roles: tuple[str, ...] = ()
    # The same value on every row, stored nowhere: a payments table that holds only receipts
    # maps ``payment_type: {const: Receive}``. Read-only; a filter on it is true or false.
    const: str | int | None = None

    @model_validator(mode="before")
    @classmethod
    def _short(cls, raw: Any) -> Any:
        return {"column": raw} if isinstance(raw, str) else raw

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.const is not None:
            if self.column or self.link:
                raise ValueError("a field with 'const' names no column or link")
            return self
        _ident(self.column, "column")
        return self

    def stored(self, value: Any) -> Any:
        return self.values.get(value, value) if isinstance(value, str | int) else value

    def canonical(self, value: Any) -> Any:
        for canon, stored in self.values.items():
            if stored == value:
                return canon
        return value


class ChildTable(_Model):
    """Row fields of a canonical table field (invoice lines), stored in their own table."""

    table: str
    parent: str  # the column holding the parent record's id
    order: str | None = None
    fields: dict[str, FieldSpec]


class Tombstones(_Model):
    """A table that records deletions: which entity (``entity_column`` holds the mapped table's
    name), which id and when."""

    table: str
    tenant: str = "tenant_id"
    entity_column: str = "table_name"
    id: str = "record_id"
    at: str = "deleted_at"


class EntitySpec(_Model):
    table: str
    id: str
    fields: dict[str, FieldSpec]
    scope: dict[Literal["tenant", "branch"], str] = PydanticField(default_factory=dict)
    modified: str | None = None  # the updated_at column: delta sync watermark, write version
    created: str | None = None
    # A text column kept for the agent's write marker (unique if the database allows): a
    # create whose answer was lost is then found by it, or known not to have happened.
    marker: str | None = None
    deleted: str | None = None  # a deleted_at column (soft delete) …
    tombstones: Tombstones | None = None  # … or a tombstones table
    tables: dict[str, ChildTable] = PydanticField(default_factory=dict)
    roles: tuple[str, ...] = ()  # roles that may read; empty: every signed-in principal
    writes: tuple[Literal["create", "update"], ...] = ()  # read-only by default
    write_roles: tuple[str, ...] = ()
    naming: str | None = None  # "CUST-{n:05d}": ids of created records
    id_patterns: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> Self:
        if "tenant" not in self.scope:
            raise ValueError(
                "every entity names its tenant scope column (scope: {tenant: <column>}): "
                "no query may run without the principal's tenant"
            )
        if self.writes and not self.modified:
            raise ValueError("writable entities need a 'modified' column (optimistic concurrency)")
        return self


class PrincipalSpec(_Model):
    """Who may sign in: a ``table`` of users, or a YAML ``file`` for small installs.

    Table columns: ``id`` (the sign-in name), ``password_hash`` (``pbkdf2_sha256$iterations$
    salt$hash``), ``tenant``, ``branches`` and ``roles`` (comma-separated text), ``disabled``."""

    table: str | None = None
    file: str | None = None
    id: str = "email"
    password_hash: str = "password_hash"
    tenant: str = "tenant_id"
    branches: str = "branches"
    roles: str = "roles"
    disabled: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Self:
        if (self.table is None) == (self.file is None):
            raise ValueError("principals: give exactly one of 'table' or 'file'")
        return self


class ReportSpec(_Model):
    """A named report: a hand-written parameterised statement. ``params`` use the catalog's
    report parameter syntax; the statement binds them as ``:name``, and must bind the
    principal's ``:tenant`` (and ``:branches``, an expanding list) itself."""

    label: str
    description: str
    module: str
    keywords: tuple[str, ...]
    entity: str | None = None
    params: dict[str, Any] = PydanticField(default_factory=dict)
    sql: str
    columns: tuple[dict[str, str], ...]

    @model_validator(mode="after")
    def _check(self) -> Self:
        if ":tenant" not in self.sql:
            raise ValueError("a report's statement must bind :tenant (the principal's scope)")
        return self


class Mapping(_Model):
    name: str = "sql"
    principals: PrincipalSpec
    entities: dict[str, EntitySpec]
    reports: dict[str, ReportSpec] = PydanticField(default_factory=dict)
    link: str | None = None  # page URL template of a record, if the database has an app
    source: str = ""


def load_mapping(path: str | Path) -> Mapping:
    """Read and validate the mapping file; every problem names where it is."""
    file = Path(path)
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read the SQL mapping {file}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{file}: expected a mapping with principals: and entities:")
    try:
        mapping = Mapping.model_validate({**raw, "source": str(file)})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ConfigError(f"{file}: {problems}") from None
    if mapping.principals.file and not Path(mapping.principals.file).is_absolute():
        resolved = str((file.parent / mapping.principals.file).resolve())
        mapping = mapping.model_copy(
            update={"principals": mapping.principals.model_copy(update={"file": resolved})}
        )
    return mapping
