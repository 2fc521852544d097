"""An in-memory connector for tests: canonical records, users with roles and a row scope.

It implements the core read protocol, writes with optimistic concurrency, the document
lifecycle and delta sync with tombstones, exactly as the connector contract asks, so tests of
the engine, tools and gateway can run without a system of record. It has no reports and no
workflows, which makes it a connector whose profile leaves those tools out.
"""

from __future__ import annotations

import builtins
import datetime as dt
import itertools
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from erp_agent.catalog import Catalog, load_catalog
from erp_agent.connectors.base import (
    READ_OPERATIONS,
    Capability,
    ChangeSet,
    Connector,
    ConnectorProfile,
    FieldInfo,
    Page,
    Record,
    RecordVersion,
)
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.query import AggregateRequest, AggregateResult, DatePart, Filter, Func, Op
from erp_agent.connectors.scope import DataScope
from erp_agent.errors import (
    STALE_RECORD,
    CatalogError,
    ErpAuthenticationError,
    ErpRefusal,
    ErpSessionExpired,
    Refusal,
)

_WRITE_OPS = frozenset({"create", "update"})
_LIFECYCLE_OPS = frozenset({"submit", "cancel", "delete"})


@dataclass(frozen=True)
class FakeUser:
    """A user of the fake system: password, roles, and the values of scope fields they may
    see (``{"branch": {"Kisumu"}}``); a record without a scoped field is visible."""

    password: str
    roles: tuple[str, ...] = ()
    scope: Mapping[str, frozenset[str]] = field(default_factory=dict)


def matches(record: Mapping[str, Any], flt: Filter) -> bool:
    """Whether a canonical record satisfies one canonical filter (the contract's semantics)."""
    value = record.get(flt.field)
    want = flt.value
    if flt.op is Op.IS_SET:
        return value not in (None, "")
    if flt.op is Op.IS_NOT_SET:
        return value in (None, "")
    if flt.op in (Op.IN, Op.NOT_IN):
        found = value in list(want or [])
        return found if flt.op is Op.IN else not found
    if flt.op in (Op.LIKE, Op.NOT_LIKE):
        pattern = str(want).lower()
        text = str(value or "").lower()
        hit = _like(text, pattern)
        return hit if flt.op is Op.LIKE else not hit
    if value is None:
        return False
    if flt.op is Op.BETWEEN:
        low, high = list(want)
        return bool(_cmp(value, low) >= 0 and _cmp(value, high) <= 0)
    order = _cmp(value, want)
    return {
        Op.EQ: order == 0,
        Op.NE: order != 0,
        Op.GT: order > 0,
        Op.GE: order >= 0,
        Op.LT: order < 0,
        Op.LE: order <= 0,
    }.get(flt.op, False)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, bool | int | float | Decimal) and isinstance(b, bool | int | float | Decimal):
        return (a > b) - (a < b)
    sa, sb = str(a), str(b)
    return (sa > sb) - (sa < sb)


def _like(text: str, pattern: str) -> bool:
    import re

    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, flags=re.DOTALL) is not None


def _sort_key(name: str) -> Callable[[Record], tuple[bool, float, str]]:
    def key(r: Record) -> tuple[bool, float, str]:
        value = r.get(name)
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            return (False, float(value), "")
        return (value is None, 0.0, str(value))

    return key


def _part(value: Any, part: DatePart) -> int | None:
    if not value:
        return None
    text = str(value)
    year, month = int(text[:4]), int(text[5:7])
    return {DatePart.YEAR: year, DatePart.MONTH: month, DatePart.QUARTER: (month + 2) // 3}[part]


class FakeConnector(Connector):
    """Canonical records in memory, scoped per user; see the module docstring."""

    def __init__(
        self,
        records: Mapping[str, Iterable[Mapping[str, Any]]],
        users: Mapping[str, FakeUser],
        *,
        catalog: Catalog | None = None,
        name: str = "fake",
        writable: bool = True,
    ) -> None:
        self.name = name
        self.catalog = catalog or load_catalog()
        self.users = dict(users)
        self.writable = writable
        self.tables: dict[str, dict[str, Record]] = {}
        self.tombstones: dict[str, list[tuple[str, str]]] = {}
        self.markers: dict[tuple[str, str], str] = {}  # (entity, write marker) -> record id
        self._clock = itertools.count(1)
        self._sessions: dict[str, str] = {}
        for entity, rows in records.items():
            self.catalog.entity(entity)
            table = self.tables.setdefault(entity, {})
            for row in rows:
                record = {"modified": self._now(), **row}
                table[str(record["id"])] = record

    def _now(self) -> str:
        base = dt.datetime(2026, 1, 1)
        return (base + dt.timedelta(microseconds=next(self._clock))).isoformat(sep=" ")

    # ------------------------------------------------------------ profile and identity

    @property
    def profile(self) -> ConnectorProfile:
        caps = {Capability.DELTA_SYNC}
        if self.writable:
            caps |= {Capability.WRITES, Capability.LIFECYCLE}
        entities = {}
        for name in self.tables:
            ops = set(READ_OPERATIONS)
            if self.writable:
                ops |= _WRITE_OPS | _LIFECYCLE_OPS
            entities[name] = frozenset(ops)
        return ConnectorProfile(self.name, frozenset(caps), entities)

    async def login(self, user: str, password: str) -> Credential:
        known = self.users.get(user)
        if known is None or not secrets.compare_digest(known.password, password):
            raise ErpAuthenticationError(f"Sign-in failed for {user}: invalid login credentials")
        sid = secrets.token_urlsafe(16)
        self._sessions[sid] = user
        return Credential.session(user, sid)

    def _user(self, cred: Credential) -> FakeUser:
        user = self._sessions.get(cred.sid or "")
        if user is None or user != cred.user:
            raise ErpSessionExpired("Your session has ended; sign in again.")
        return self.users[user]

    async def data_scope(self, cred: Credential) -> DataScope | None:
        return DataScope.of(self._user(cred).scope)

    async def roles(self, cred: Credential) -> builtins.list[str]:
        return list(self._user(cred).roles)

    # ------------------------------------------------------------ reads

    def _table(self, entity: str) -> dict[str, Record]:
        self.catalog.entity(entity)
        table = self.tables.get(entity)
        if table is None:
            raise CatalogError(f"the {self.name} connector does not map entity {entity!r}")
        return table

    def _visible(
        self, cred: Credential, entity: str, filters: Sequence[Filter] = ()
    ) -> list[Record]:
        scope = self._user(cred).scope
        known = self.catalog.entity(entity).fields
        for flt in filters:
            if flt.field not in known:
                raise CatalogError(f"entity {entity!r} has no field {flt.field!r}")
        out = []
        for record in self._table(entity).values():
            if any(k in record and str(record[k]) not in v for k, v in scope.items()):
                continue
            if all(matches(record, f) for f in filters):
                out.append(record)
        return out

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
        rows = sorted(self._visible(cred, entity, filters), key=lambda r: str(r["id"]))
        for name, direction in reversed(list(order_by)):
            rows.sort(key=_sort_key(name), reverse=direction.lower() == "desc")
        window = rows[start : start + limit] if limit else rows[start:]
        wanted = set(fields or []) | {"id"} if fields else None
        records = [{k: v for k, v in r.items() if wanted is None or k in wanted} for r in window]
        return Page(records, start, limit, bool(limit) and start + limit < len(rows))

    async def get(self, cred: Credential, entity: str, record_id: str) -> Record:
        for record in self._visible(cred, entity):
            if str(record["id"]) == record_id:
                return dict(record)
        raise ErpRefusal(Refusal(f"{entity} {record_id} not found", "DoesNotExistError", 404))

    async def count(self, cred: Credential, entity: str, filters: Sequence[Filter] = ()) -> int:
        return len(self._visible(cred, entity, filters))

    async def aggregate(
        self, cred: Credential, entity: str, request: AggregateRequest
    ) -> AggregateResult:
        rows = self._visible(cred, entity, request.filters)
        groups: dict[tuple[Any, ...], list[Record]] = {}
        for row in rows:
            key = tuple(
                _part(row.get(g.field), g.part) if g.part else row.get(g.field)
                for g in request.group_by
            )
            groups.setdefault(key, []).append(row)
        out = []
        for key in sorted(groups, key=lambda k: tuple((v is None, str(v)) for v in k)):
            members = groups[key]
            group_row: dict[str, Any] = {g.alias: key[i] for i, g in enumerate(request.group_by)}
            for m in request.measures:
                values = [
                    Decimal(str(r[m.field]))
                    for r in members
                    if m.field and r.get(m.field) is not None
                ]
                if m.func is Func.COUNT:
                    group_row[m.alias] = len(members)
                elif not values:
                    group_row[m.alias] = None
                elif m.func is Func.SUM:
                    group_row[m.alias] = float(sum(values))
                elif m.func is Func.AVG:
                    group_row[m.alias] = float(sum(values) / len(values))
                else:
                    group_row[m.alias] = float(min(values) if m.func is Func.MIN else max(values))
            group_row["count_records"] = len(members)
            out.append(group_row)
        return AggregateResult(
            out, len(rows), "pushdown", f"computed in memory over {len(rows)} records",
            [g.alias for g in request.group_by], [m.alias for m in request.measures],
        )  # fmt: skip

    async def describe(self, cred: Credential, entity: str) -> builtins.list[FieldInfo]:
        self._user(cred)
        spec = self.catalog.entity(entity)
        return [
            FieldInfo(name, name, f.label, str(f.type), read_only=f.read_only)
            for name, f in spec.fields.items()
        ]

    async def access(self, cred: Credential, entity: str) -> dict[str, bool]:
        self._user(cred)
        ops = self.profile.operations(entity)
        rights = ("read", "create", "update", "submit", "cancel", "delete")
        return {r: bool(ops) and (r == "read" or r in ops) for r in rights}

    def link(self, entity: str, record: Mapping[str, Any]) -> str | None:
        return None

    # ------------------------------------------------------------ writes and lifecycle

    def _stale(self, current: str, seen: str | None) -> None:
        if seen is not None and seen != current:
            message = f"Document has been modified after you have opened it ({current}, {seen})."
            raise ErpRefusal(Refusal(message, STALE_RECORD, 417, [message]))

    async def create(
        self,
        cred: Credential,
        entity: str,
        values: Mapping[str, Any],
        *,
        marker: str | None = None,
    ) -> Record:
        table = self._table(entity)
        record_id = str(values.get("id") or f"{entity.upper()}-{len(table) + 1:05d}")
        if record_id in table:
            raise ErpRefusal(Refusal(f"{record_id} already exists", "DuplicateEntryError", 409))
        record = {**values, "id": record_id, "modified": self._now(), "created_by": cred.user}
        table[record_id] = record
        if marker is not None:
            self.markers[(entity, marker)] = record_id
        return dict(record)

    async def marks_creates(self, cred: Credential, entity: str) -> bool:
        return True  # the fake keeps every marker it is given

    async def find_marked(
        self, cred: Credential, entity: str, marker: str
    ) -> builtins.list[Record]:
        record_id = self.markers.get((entity, marker))
        visible = {str(r["id"]): r for r in self._visible(cred, entity)}
        return [dict(visible[record_id])] if record_id in visible else []

    async def update(
        self,
        cred: Credential,
        entity: str,
        record_id: str,
        values: Mapping[str, Any],
        *,
        modified: str | None = None,
    ) -> Record:
        current = await self.get(cred, entity, record_id)
        self._stale(str(current["modified"]), modified)
        record = {**current, **values, "id": record_id, "modified": self._now()}
        self._table(entity)[record_id] = record
        return dict(record)

    async def _set_status(self, cred: Credential, entity: str, record_id: str, status: int, modified: str | None) -> Record:  # fmt: skip
        return await self.update(cred, entity, record_id, {"docstatus": status}, modified=modified)

    async def submit(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> Record:
        return await self._set_status(cred, entity, record_id, 1, modified)

    async def cancel(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> Record:
        return await self._set_status(cred, entity, record_id, 2, modified)

    async def delete(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> None:
        current = await self.get(cred, entity, record_id)
        self._stale(str(current["modified"]), modified)
        del self._table(entity)[record_id]
        self.tombstones.setdefault(entity, []).append((record_id, self._now()))

    async def version(self, cred: Credential, entity: str, record_id: str) -> RecordVersion | None:
        try:
            current = await self.get(cred, entity, record_id)
        except ErpRefusal:
            return None
        return RecordVersion(str(current["modified"]), int(current.get("docstatus") or 0))

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
        rows = [r for r in self._visible(cred, entity) if r.get("created_by") == owner]
        rows = [r for r in rows if after is None or str(r["modified"]) > after]
        rows.sort(key=lambda r: str(r["modified"]), reverse=newest_first)
        return [dict(r) for r in rows[:limit]]

    # ------------------------------------------------------------ delta sync

    async def changes_since(
        self, cred: Credential, entity: str, watermark: str | None, *, limit: int = 1000
    ) -> ChangeSet:
        rows = [
            r
            for r in self._visible(cred, entity)
            if watermark is None or str(r["modified"]) >= watermark
        ]
        rows.sort(key=lambda r: (str(r["modified"]), str(r["id"])))
        complete = len(rows) <= limit
        rows = rows[:limit]
        gone = [
            (i, at)
            for i, at in self.tombstones.get(entity, [])
            if watermark is None or at >= watermark
        ]
        marks = [str(r["modified"]) for r in rows] + [at for _, at in gone]
        mark = max(marks) if marks else watermark
        if not complete and rows:
            mark = str(rows[-1]["modified"])
        records = [{**r, "_modified": r["modified"]} for r in rows]
        return ChangeSet(records, [i for i, _ in gone], mark, complete)
