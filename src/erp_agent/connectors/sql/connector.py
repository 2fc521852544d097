"""The SQL connector: a bespoke database (SQLite, MariaDB, PostgreSQL) through SQLAlchemy Core.

The mapping file says which tables hold which canonical entities; the principal source says who
the signed-in user is (tenant, branches, roles). Every statement is built here from the mapping,
binds every value, and carries the principal's scope; the model never writes SQL.
"""

from __future__ import annotations

import asyncio
import builtins
import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from erp_agent.catalog import Catalog, load_catalog
from erp_agent.catalog.maps import ConnectorMaps, EntityMap, FieldMap
from erp_agent.connectors.base import (
    READ_OPERATIONS,
    Capability,
    CapabilityMissing,
    ChangeSet,
    Connector,
    ConnectorProfile,
    FieldInfo,
    Page,
    Record,
    RecordVersion,
    ReportResult,
)
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.query import AggregateRequest, AggregateResult, Filter, Op
from erp_agent.connectors.scope import DataScope
from erp_agent.connectors.sql import reports, sync
from erp_agent.connectors.sql.binding import bind, reflect, safe_url
from erp_agent.connectors.sql.mapping import Mapping as SQLMapping
from erp_agent.connectors.sql.mapping import load_mapping
from erp_agent.connectors.sql.principals import Principal, PrincipalSource
from erp_agent.connectors.sql.sessions import SessionTokens
from erp_agent.connectors.sql.statements import (
    Bound,
    aggregate_statement,
    coerce,
    next_id,
    plain,
    write_values,
)
from erp_agent.errors import (
    STALE_RECORD,
    CatalogError,
    ErpRefusal,
    ErpSessionExpired,
    ErpUnavailable,
    Refusal,
)

_T = TypeVar("_T")
_PRINCIPAL_TTL = 30.0  # seconds a looked-up principal is reused before asking the source again


def _refusal(message: str, exc_type: str, status: int) -> ErpRefusal:
    return ErpRefusal(Refusal(message, exc_type, status, [message]))


class SQLConnector(Connector):
    """A bespoke database described by a mapping file (see docs/connectors.md)."""

    def __init__(
        self,
        base_url: str,
        *,
        mapping: str | Path | SQLMapping,
        catalog: Catalog | None = None,
        timeout: float = 30.0,
        engine: sa.Engine | None = None,
        session_key: str | None = None,
    ) -> None:
        self.mapping = mapping if isinstance(mapping, SQLMapping) else load_mapping(mapping)
        self.name = self.mapping.name
        self.url = base_url
        self.catalog = catalog or load_catalog()
        self.engine = engine or sa.create_engine(base_url, pool_pre_ping=True)
        self.tables = reflect(self.engine, self.mapping, base_url)
        self.bound = bind(self.mapping, self.tables, self.catalog)
        self.reports = reports.parse(self.mapping, self.catalog)
        users = self.tables.get(self.mapping.principals.table or "")
        self.principals = PrincipalSource(self.mapping.principals, self.engine, users)
        self.tokens = SessionTokens(session_key)
        self._principals: dict[str, tuple[float, Principal]] = {}

    async def aclose(self) -> None:
        await asyncio.to_thread(self.engine.dispose)

    async def _run(self, work: Callable[[sa.Connection], _T], *, write: bool = False) -> _T:
        def call() -> _T:
            try:
                if write:
                    with self.engine.begin() as conn:
                        return work(conn)
                with self.engine.connect() as conn:
                    return work(conn)
            except sa.exc.OperationalError as exc:
                raise ErpUnavailable(
                    f"The database {safe_url(self.url)} failed: {exc.orig}"
                ) from exc
            except sa.exc.IntegrityError as exc:
                raise _refusal(
                    f"The database refused the write: {exc.orig}", "IntegrityError", 417
                ) from exc
            except sa.exc.DataError as exc:
                raise _refusal(
                    f"The database refused a value: {exc.orig}", "ValidationError", 417
                ) from exc

        return await asyncio.to_thread(call)

    # ------------------------------------------------------------ profile

    @property
    def profile(self) -> ConnectorProfile:
        caps: set[Capability] = set()
        entities: dict[str, frozenset[str]] = {}
        fields: dict[str, frozenset[str]] = {}
        for name, b in self.bound.items():
            entities[name] = frozenset(READ_OPERATIONS | set(b.spec.writes))
            fields[name] = frozenset({*b.scalar_fields(), *b.spec.tables})
            if b.spec.writes:
                caps.add(Capability.WRITES)
            if b.spec.modified and (b.spec.deleted or b.spec.tombstones):
                caps.add(Capability.DELTA_SYNC)
        if self.reports:
            caps.add(Capability.REPORTS)
        return ConnectorProfile(
            self.name, frozenset(caps), entities, frozenset(self.reports), fields,
            {n: r.report for n, r in self.reports.items()},
        )  # fmt: skip

    def native_maps(self) -> ConnectorMaps:
        entities = {}
        for name, b in self.bound.items():
            fmaps = {f: FieldMap(native=s.column or f) for f, s in b.spec.fields.items()}
            fmaps.setdefault("id", FieldMap(native=b.spec.id))
            entities[name] = EntityMap(
                entity=name, doctype=b.spec.table, fields=fmaps, link=self.mapping.link,
                id_patterns=b.spec.id_patterns, keywords=b.spec.keywords, source=self.mapping.source,
            )  # fmt: skip
        return ConnectorMaps(name=self.name, entities=entities, reports={})

    async def health(self) -> None:
        await self._run(lambda conn: conn.execute(sa.text("select 1")).scalar())

    def document_state(self, entity: str, docstatus: int) -> tuple[str, str]:
        """The state as this database stores it: ("posted", "stage = 'posted'")."""
        bound = self.bound.get(entity)
        spec = bound.spec.fields.get("docstatus") if bound is not None else None
        if spec is None:
            return super().document_state(entity, docstatus)
        stored = spec.stored(docstatus)
        shown = f"'{stored}'" if isinstance(stored, str) else str(stored)
        return str(stored), f"{spec.column} = {shown}"

    # ------------------------------------------------------------ identity

    async def login(self, user: str, password: str) -> Credential:
        principal = await asyncio.to_thread(self._authenticate, user, password)
        self._principals[user] = (time.monotonic(), principal)
        return Credential.session(user, self.tokens.issue(user))

    def _authenticate(self, user: str, password: str) -> Principal:
        try:
            return self.principals.authenticate(user, password)
        except sa.exc.OperationalError as exc:
            raise ErpUnavailable(
                f"Cannot reach the database {safe_url(self.url)}: {exc.orig}"
            ) from exc

    async def principal(self, cred: Credential) -> Principal:
        """The signed-in user's principal: the session token is checked, and the principal is
        re-read from the source every half minute so scope changes apply without a new sign-in."""
        user = self.tokens.user_of(cred)
        if user is None:
            raise ErpSessionExpired("Your session with the database has ended; sign in again.")
        cached = self._principals.get(user)
        if cached is not None and time.monotonic() - cached[0] <= _PRINCIPAL_TTL:
            return cached[1]
        principal = await asyncio.to_thread(self.principals.lookup, user)
        self._principals[user] = (time.monotonic(), principal)
        return principal

    async def roles(self, cred: Credential) -> builtins.list[str]:
        return list((await self.principal(cred)).roles)

    async def data_scope(self, cred: Credential) -> DataScope | None:
        # Every read is bound to the principal's tenant and branches, and to nothing else.
        principal = await self.principal(cred)
        return DataScope.of({"tenant": [principal.tenant], "branches": principal.branches})

    # ------------------------------------------------------------ access checks

    def _bound(self, entity: str) -> Bound:
        self.catalog.entity(entity)
        found = self.bound.get(entity)
        if found is None:
            raise CatalogError(f"the {self.name} mapping does not map entity {entity!r}")
        return found

    def _label(self, entity: str) -> str:
        return self.catalog.entity(entity).label

    async def _readable(self, cred: Credential, entity: str) -> tuple[Bound, Principal]:
        b = self._bound(entity)
        principal = await self.principal(cred)
        if b.spec.roles and not set(b.spec.roles) & set(principal.roles):
            raise _refusal(f"No permission to read {self._label(entity)}", "PermissionError", 403)
        return b, principal

    def _visible_fields(self, b: Bound, principal: Principal, names: Sequence[str]) -> list[str]:
        out = []
        for name in names:
            spec = b.spec.fields.get(name)
            if spec is not None and spec.roles and not set(spec.roles) & set(principal.roles):
                continue
            out.append(name)
        return out

    def _check_fields(self, b: Bound, principal: Principal, names: Sequence[str]) -> None:
        for name in names:
            head = name.split(".")[0]
            if head not in self._visible_fields(b, principal, [head]):
                raise _refusal(
                    f"No permission to read field {head} of {self._label(b.entity)}",
                    "PermissionError", 403,
                )  # fmt: skip

    def _record(self, b: Bound, row: Mapping[str, Any]) -> Record:
        out: Record = {}
        for name, value in row.items():
            spec = b.spec.fields.get(name)
            out[name] = plain(spec.canonical(value) if spec is not None else value)
        return out

    # ------------------------------------------------------------ reads

    async def list(
        self,
        cred: Credential,
        entity: str,
        *,
        fields: Sequence[str] | None = None,
        filters: Sequence[Filter] = (),
        order_by: Sequence[tuple[str, str]] = (),
        start: int = 0,
        limit: int = 20,
    ) -> Page:
        b, principal = await self._readable(cred, entity)
        self._check_fields(b, principal, [f.field for f in filters] + [f for f, _ in order_by])
        names = [n for n in (fields or b.scalar_fields()) if n not in b.spec.tables]
        names = self._visible_fields(b, principal, list(dict.fromkeys(["id", *names])))
        stmt = sa.select(*(b.column(n).label(n) for n in names)).where(*b.where(principal, filters))
        for name, direction in order_by:
            col = b.column(name)
            stmt = stmt.order_by(col.desc() if direction.lower() == "desc" else col.asc())
        stmt = stmt.order_by(b.id_column().asc()).offset(start)
        if limit:
            stmt = stmt.limit(limit + 1)
        rows = await self._run(lambda conn: [dict(r) for r in conn.execute(stmt).mappings()])
        has_more = bool(limit) and len(rows) > limit
        return Page([self._record(b, r) for r in rows[: limit or None]], start, limit, has_more)

    async def get(self, cred: Credential, entity: str, record_id: str) -> Record:
        b, principal = await self._readable(cred, entity)
        names = self._visible_fields(b, principal, b.scalar_fields())
        stmt = sa.select(*(b.column(n).label(n) for n in names)).where(
            *b.scope(principal), b.id_column() == coerce(b.id_column(), record_id, "id")
        )

        def read(conn: sa.Connection) -> tuple[dict[str, Any] | None, dict[str, list[Any]]]:
            row = conn.execute(stmt).mappings().first()
            if row is None:
                return None, {}
            children: dict[str, list[Any]] = {}
            for cname, (child, table) in b.children.items():
                cols = [table.c[f.column].label(n) for n, f in child.fields.items()]
                sub = sa.select(*cols).where(table.c[child.parent] == row["id"])
                if child.order:
                    sub = sub.order_by(table.c[child.order])
                children[cname] = [
                    {n: plain(child.fields[n].canonical(v)) for n, v in r.items()}
                    for r in conn.execute(sub).mappings()
                ]
            return dict(row), children

        row, children = await self._run(read)
        if row is None:
            # Out of scope and absent read the same: nothing says the record exists elsewhere.
            raise _refusal(f"{self._label(entity)} {record_id} not found", "DoesNotExistError", 404)
        return {**self._record(b, row), **children}

    async def count(self, cred: Credential, entity: str, filters: Sequence[Filter] = ()) -> int:
        b, principal = await self._readable(cred, entity)
        self._check_fields(b, principal, [f.field for f in filters])
        stmt = sa.select(sa.func.count()).select_from(b.table).where(*b.where(principal, filters))
        return int(await self._run(lambda conn: conn.execute(stmt).scalar() or 0))

    async def aggregate(
        self, cred: Credential, entity: str, request: AggregateRequest
    ) -> AggregateResult:
        b, principal = await self._readable(cred, entity)
        used = [g.field for g in request.group_by] + [m.field for m in request.measures if m.field]
        self._check_fields(b, principal, used + [f.field for f in request.filters])
        stmt = aggregate_statement(
            b, principal, request.group_by, request.measures, request.filters
        )
        rows = await self._run(lambda conn: [dict(r) for r in conn.execute(stmt).mappings()])
        out = []
        for row in rows:
            clean: dict[str, Any] = {}
            for g in request.group_by:
                value = row[g.alias]
                if g.part is None and g.field in b.spec.fields:
                    value = b.spec.fields[g.field].canonical(value)
                clean[g.alias] = (
                    int(value) if g.part is not None and value is not None else plain(value)
                )
            for key, value in row.items():
                clean.setdefault(key, plain(value))
            out.append(clean)
        total = sum(int(r.get("count_records") or 0) for r in out)
        return AggregateResult(
            out, total, "pushdown", f"computed by the database in one grouped query ({self.engine.dialect.name})",
            [g.alias for g in request.group_by], [m.alias for m in request.measures],
        )  # fmt: skip

    async def describe(self, cred: Credential, entity: str) -> builtins.list[FieldInfo]:
        b, principal = await self._readable(cred, entity)
        spec = self.catalog.entity(entity)
        out = []
        for name in self._visible_fields(b, principal, b.scalar_fields()):
            col = b.column(name)
            label = spec.fields[name].label if name in spec.fields else name
            native = (b.field(name).column or name) if name != "id" else b.spec.id
            out.append(FieldInfo(name, native, label, str(col.type), read_only=name == "id"))
        return out

    async def access(self, cred: Credential, entity: str) -> dict[str, bool]:
        rights = dict.fromkeys(("read", "create", "update", "submit", "cancel", "delete"), False)
        b = self.bound.get(entity)
        if b is None:
            return rights
        principal = await self.principal(cred)
        held = set(principal.roles)
        rights["read"] = not b.spec.roles or bool(set(b.spec.roles) & held)
        may_write = rights["read"] and (
            not b.spec.write_roles or bool(set(b.spec.write_roles) & held)
        )
        for op in b.spec.writes:
            rights[op] = may_write
        return rights

    def link(self, entity: str, record: Mapping[str, Any]) -> str | None:
        if self.mapping.link is None or "id" not in record:
            return None
        return self.mapping.link.replace("{entity}", entity).replace("{id}", str(record["id"]))

    # ------------------------------------------------------------ writes

    async def _writable(self, cred: Credential, entity: str, op: str) -> tuple[Bound, Principal]:
        b, principal = await self._readable(cred, entity)
        if op not in b.spec.writes or not (await self.access(cred, entity)).get(op):
            raise _refusal(f"No permission to {op} {self._label(entity)}", "PermissionError", 403)
        return b, principal

    async def create(
        self,
        cred: Credential,
        entity: str,
        values: Mapping[str, Any],
        *,
        marker: str | None = None,
    ) -> Record:
        b, principal = await self._writable(cred, entity, "create")
        row = write_values(b, values)
        if marker is not None and b.spec.marker:
            row[b.spec.marker] = marker
        scope = b.spec.scope
        row[scope["tenant"]] = principal.tenant
        if "branch" in scope:
            canon_branch = next(
                (n for n, s in b.spec.fields.items() if s.column == scope["branch"]), None
            )
            wanted = str(values.get(canon_branch or "", "") or principal.branches[0])
            if wanted not in principal.branches:
                raise _refusal(
                    f"You may not create records in branch {wanted}", "PermissionError", 403
                )
            row[scope["branch"]] = wanted
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        row[str(b.spec.modified)] = now
        if b.spec.created:
            row[b.spec.created] = now

        def insert(conn: sa.Connection) -> str:
            record_id = values.get("id")
            if record_id is None:
                record_id = next_id(conn, b)
            row[b.spec.id] = coerce(b.id_column(), record_id, "id")
            conn.execute(sa.insert(b.table).values(**row))
            return str(record_id)

        return await self.get(cred, entity, await self._run(insert, write=True))

    async def update(
        self,
        cred: Credential,
        entity: str,
        record_id: str,
        values: Mapping[str, Any],
        *,
        modified: str | None = None,
    ) -> Record:
        b, principal = await self._writable(cred, entity, "update")
        row = write_values(b, values)
        version = b.table.c[str(b.spec.modified)]
        row[version.name] = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        where = [*b.scope(principal), b.id_column() == coerce(b.id_column(), record_id, "id")]
        if modified is not None:
            where.append(version == coerce(version, modified, "modified"))

        def change(conn: sa.Connection) -> int:
            return conn.execute(sa.update(b.table).where(*where).values(**row)).rowcount

        if await self._run(change, write=True) == 0:
            current = await self.version(cred, entity, record_id)
            if current is None:
                raise _refusal(
                    f"{self._label(entity)} {record_id} not found", "DoesNotExistError", 404
                )
            message = (
                f"Document has been modified after you have opened it ({current.modified}, "
                f"{modified}). Please refresh to get the latest document."
            )
            raise _refusal(message, STALE_RECORD, 417)
        return await self.get(cred, entity, record_id)

    async def version(self, cred: Credential, entity: str, record_id: str) -> RecordVersion | None:
        b, principal = await self._readable(cred, entity)
        if not b.spec.modified:
            return None
        status = b.spec.fields.get("docstatus")
        cols = [b.table.c[b.spec.modified].label("modified")]
        if status is not None:
            cols.append(b.table.c[status.column].label("docstatus"))
        stmt = sa.select(*cols).where(
            *b.scope(principal), b.id_column() == coerce(b.id_column(), record_id, "id")
        )
        row = await self._run(lambda conn: conn.execute(stmt).mappings().first())
        if row is None:
            return None
        docstatus = status.canonical(row["docstatus"]) if status is not None else 0
        return RecordVersion(str(plain(row["modified"])), int(docstatus or 0))

    async def marks_creates(self, cred: Credential, entity: str) -> bool:
        return self._bound(entity).spec.marker is not None

    async def find_marked(
        self, cred: Credential, entity: str, marker: str
    ) -> builtins.list[Record]:
        b, principal = await self._readable(cred, entity)
        if not b.spec.marker:
            raise CapabilityMissing(self.name, Capability.WRITES)
        # Deleted rows too: a create that was made and then deleted was still made.
        stmt = sa.select(b.id_column()).where(
            *b.scope(principal, live=False), b.table.c[b.spec.marker] == marker
        )
        ids = await self._run(lambda conn: [str(i) for i in conn.execute(stmt).scalars()])
        found: builtins.list[Record] = []
        for record_id in ids:
            try:
                found.append(await self.get(cred, entity, record_id))
            except ErpRefusal:
                found.append({"id": record_id})
        return found

    async def created_by(
        self,
        cred: Credential,
        entity: str,
        owner: str,
        *,
        after: str | None = None,
        newest_first: bool = False,
        limit: int = 20,
    ) -> builtins.list[Record]:
        b = self._bound(entity)
        if "created_by" not in b.spec.fields or not b.spec.created:
            # Nothing says who created a row and when: "none found" would be a guess.
            raise CapabilityMissing(self.name, Capability.WRITES)
        filters = [Filter("created_by", Op.EQ, owner)]
        if after is not None:
            filters.append(Filter("created", Op.GT, after))
        order = "desc" if newest_first else "asc"
        page = await self.list(
            cred, entity, filters=filters, order_by=[("created", order)], limit=limit
        )
        return page.records

    # ------------------------------------------------------------ reports

    async def run_report(
        self, cred: Credential, report: str, params: Mapping[str, Any]
    ) -> ReportResult:
        spec = self.reports.get(report)
        if spec is None:
            raise CatalogError(f"the {self.name} mapping has no report {report!r}")
        principal = await self.principal(cred)
        if spec.entity is not None:
            await self._readable(cred, spec.entity)
        stmt = spec.statement(params, principal)
        rows = await self._run(lambda conn: [dict(r) for r in conn.execute(stmt).mappings()])
        return ReportResult(
            report=report,
            columns=self.normalize_columns(list(spec.columns)),
            rows=[{k: plain(v) for k, v in r.items()} for r in rows],
        )

    async def report_access(self, cred: Credential, report: str) -> bool:
        spec = self.reports.get(report)
        if spec is None:
            return False
        if spec.entity is None:
            return True
        return (await self.access(cred, spec.entity))["read"]

    # ------------------------------------------------------------ delta sync

    async def changes_since(
        self, cred: Credential, entity: str, watermark: str | None, *, limit: int = 1000
    ) -> ChangeSet:
        b, principal = await self._readable(cred, entity)
        if not b.spec.modified:
            raise CatalogError(f"the {self.name} mapping of {entity!r} names no modified column")
        names = self._visible_fields(b, principal, b.scalar_fields())
        stmt = sync.changed(b, principal, names, watermark, limit)
        gone_stmt = sync.tombstones(b, self.tables, principal, watermark)

        def read(conn: sa.Connection) -> tuple[list[dict[str, Any]], list[tuple[str, Any]]]:
            rows = [dict(r) for r in conn.execute(stmt).mappings()]
            gone = [] if gone_stmt is None else [(str(r[0]), r[1]) for r in conn.execute(gone_stmt)]
            return rows, gone

        rows, gone = await self._run(read)
        return sync.change_set(rows, gone, watermark, limit, lambda r: self._record(b, r))
