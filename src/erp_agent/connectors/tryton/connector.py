"""The Tryton connector: trytond over JSON-RPC, every data call as the signed-in user.

Sign-in is Tryton's own (``common.db.login`` with the user's password); the session it returns
is the credential, and every call carries it with the user's own preferences as the context,
so Tryton's model access, record rules (the companies a user may see) and button access decide
what the user reads and does. No service account reads data. Entities map to Tryton models
with a discriminating domain (catalog/maps/tryton); ids are Tryton's integer ids, and a human
number (``US-INV-2026-00001``) finds its record by the entity's ``id_patterns``.
"""

from __future__ import annotations

import builtins
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any
from xml.etree import ElementTree

from erp_agent.catalog import Catalog, load_catalog
from erp_agent.catalog.entities import Operation
from erp_agent.catalog.maps import ConnectorMaps
from erp_agent.connectors.base import (
    READ_OPERATIONS,
    Capability,
    ChangeSet,
    Connector,
    ConnectorProfile,
    FieldInfo,
    FilledDocument,
    Page,
    Record,
    RecordVersion,
    ReportResult,
)
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.fake import matches
from erp_agent.connectors.query import AggregateRequest, AggregateResult, Filter, Op
from erp_agent.connectors.scope import DataScope
from erp_agent.connectors.tryton import aggregates, reads, writes
from erp_agent.connectors.tryton import filling as filling
from erp_agent.connectors.tryton import reports as reports
from erp_agent.connectors.tryton.client import Session, TrytonClient
from erp_agent.connectors.tryton.native import (
    Domain,
    Native,
    entity_for,
    plain,
    refuse,
)
from erp_agent.errors import ErpRefusal

_PAGE = 500  # rows per search_read when reading everything (aggregates, sync)
_VERSIONS = 20_000  # (model, id, modified) -> _timestamp remembered for writes
_SESSIONS = 10_000  # signed-in sessions whose preferences (the call context) are remembered


class TrytonConnector(Connector):
    """A Tryton database; see the module docstring and docs/connectors.md."""

    def __init__(
        self,
        base_url: str,
        *,
        database: str | None = None,
        catalog: Catalog | None = None,
        timeout: float = 30.0,
        client: TrytonClient | None = None,
    ) -> None:
        self.name = "tryton"
        self.catalog = catalog or load_catalog()
        self.maps = self.catalog.maps("tryton")
        base, _, path = base_url.rstrip("/").partition("/#")
        db = database or path.strip("/") or None
        if db is None and base_url.count("/") > 2:
            base, _, db = base_url.rstrip("/").rpartition("/")
        if not db:
            from erp_agent.errors import ConfigError

            raise ConfigError(
                "The tryton connector needs the database name: set ERP_AGENT_TRYTON_DATABASE, "
                "or end ERP_AGENT_ERP_URL with it (http://host:8000/erp)."
            )
        self.base_url = base
        self.database = db
        self.client = client or TrytonClient(base, db, timeout=timeout)
        self._fields: dict[str, dict[str, dict[str, Any]]] = {}
        self._contexts: dict[str, dict[str, Any]] = {}
        self._versions: OrderedDict[tuple[str, int, str], str] = OrderedDict()
        self._button_rights: dict[tuple[str, str], dict[str, bool]] = {}

    async def aclose(self) -> None:
        await self.client.aclose()

    async def health(self) -> None:
        await self.client.version()

    # ------------------------------------------------------------ profile

    @property
    def profile(self) -> ConnectorProfile:
        entities: dict[str, frozenset[str]] = {}
        fields: dict[str, frozenset[str]] = {}
        for name, emap in self.maps.entities.items():
            spec = self.catalog.entities.get(name)
            if spec is None:
                continue
            ops = set(READ_OPERATIONS)
            if spec.kind != "ledger":
                ops |= {"create", "update", "delete"}
            if emap.lifecycle is not None and Operation.SUBMIT in spec.operations:
                ops |= {"submit", "cancel"}
            entities[name] = frozenset(ops)
            fields[name] = frozenset(n for n in emap.fields if n in spec.fields)
        caps = {Capability.WRITES, Capability.LIFECYCLE, Capability.REPORTS, Capability.DELTA_SYNC}
        return ConnectorProfile(
            self.name, frozenset(caps), entities, frozenset(reports.REPORTS), fields
        )

    def native_maps(self) -> ConnectorMaps:
        return self.maps

    def document_state(self, entity: str, docstatus: int) -> tuple[str, str]:
        """The state in Tryton's words: ("posted or paid", "state in ('posted', 'paid')")."""
        emap = self.maps.entities.get(entity)
        spec = self.catalog.entities.get(entity)
        if emap is None or emap.lifecycle is None or spec is None or spec.lifecycle is None:
            return super().document_state(entity, docstatus)
        native = [str(v) for v in emap.lifecycle.native(spec.lifecycle, [docstatus])]
        listed = ", ".join(f"'{v}'" for v in native)
        return " or ".join(native), f"{emap.lifecycle.field} in ({listed})"

    def is_cancelled(self, entity: str, record: Mapping[str, Any]) -> bool:
        spec = self.catalog.entities.get(entity)
        if spec is None or spec.lifecycle is None:
            return False
        return spec.lifecycle.is_state(record.get(spec.lifecycle.field), "cancelled")

    def link(self, entity: str, record: Mapping[str, Any]) -> str | None:
        emap = self.maps.entities.get(entity)
        if emap is None or emap.link is None or record.get("id") is None:
            return None
        values = {**record, "database": self.database}
        return emap.link_for(self.base_url, values)

    # ------------------------------------------------------------ identity

    async def login(self, user: str, password: str) -> Credential:
        session = await self.client.login(user, password)
        cred = Credential.session(user, f"{session.uid}:{session.token}")
        await self._context(cred)
        return cred

    async def _context(self, cred: Credential) -> dict[str, Any]:
        """The user's own preferences (company, companies, language): the context a Tryton
        client sends with every call. Record rules read the user record, not this context."""
        session = Session.of(cred)
        known = self._contexts.get(session.token)
        if known is None:
            prefs = await self.client.call(session, "model.res.user.get_preferences", [True, {}])
            known = {k: v for k, v in dict(prefs).items() if "." not in k and k != "locale"}
            known["_company_name"] = dict(prefs).get("company.rec_name")
            self._contexts[session.token] = known
            while len(self._contexts) > _SESSIONS:
                self._contexts.pop(next(iter(self._contexts)))
        return dict(known)

    async def rpc(
        self, cred: Credential, method: str, *args: Any, write: bool = False,
        context: Mapping[str, Any] | None = None,
    ) -> Any:  # fmt: skip
        """``model.<method>(*args, context)`` as the user."""
        own = {k: v for k, v in (await self._context(cred)).items() if not k.startswith("_")}
        ctx = {**own, **(context or {})}
        return await self.client.call(
            Session.of(cred), f"model.{method}", [*args, ctx], write=write
        )

    async def user_default(self, cred: Credential, key: str) -> str | None:
        """The user's current company in Tryton (their preference), by its name."""
        if key != "company":
            return None
        name = (await self._context(cred)).get("_company_name")
        return str(name) if name else None

    async def roles(self, cred: Credential) -> builtins.list[str]:
        groups = (await self._context(cred)).get("groups") or []
        rows = await self.rpc(cred, "res.group.read", list(groups), ["name"])
        return sorted(str(r["name"]) for r in rows)

    async def data_scope(self, cred: Credential) -> DataScope | None:
        # Tryton's record rules limit a user to the companies their user record allows.
        ctx = await self._context(cred)
        companies = ctx.get("companies") or []
        if ctx.get("company_filter") == "one":
            companies = [ctx["company"]] if ctx.get("company") else []
        return DataScope.of({"company": companies})

    # ------------------------------------------------------------ metadata

    async def _native(self, cred: Credential, entity: str) -> Native:
        spec, emap = entity_for(self.catalog, self.maps.entities, entity)
        fields = self._fields.get(emap.doctype)
        if fields is None:
            fields = dict(await self.rpc(cred, f"{emap.doctype}.fields_get", []))
            self._fields[emap.doctype] = fields
        return Native(spec, emap, fields)

    async def describe(self, cred: Credential, entity: str) -> builtins.list[FieldInfo]:
        native = await self._native(cred, entity)
        by_native = {native.emap.fields[n].native: n for n in native.mapped()}
        # As Tryton describes the model to this user (fields they may not read are left out).
        mine: dict[str, dict[str, Any]] = dict(
            await self.rpc(cred, f"{native.model}.fields_get", [])
        )
        out = []
        for fname, meta in sorted(mine.items()):
            name = str(by_native.get(fname, fname))
            label = native.entity.fields[name].label if name in native.entity.fields else ""
            out.append(FieldInfo(
                name, fname, label or str(meta.get("string") or fname), str(meta.get("type")),
                options=meta.get("relation"), required=bool(meta.get("required")),
                read_only=bool(meta.get("readonly")), custom=fname not in by_native,
            ))  # fmt: skip
        return out

    async def access(self, cred: Credential, entity: str) -> dict[str, bool]:
        rights = dict.fromkeys(("read", "create", "update", "submit", "cancel", "delete"), False)
        emap = self.maps.entities.get(entity)
        if emap is None:
            return rights
        got = await self.rpc(cred, "ir.model.access.get_access", [emap.doctype])
        mine = dict(got.get(emap.doctype) or {})
        ops = self.profile.operations(entity)
        rights["read"] = bool(mine.get("read"))
        rights["create"] = "create" in ops and bool(mine.get("create"))
        rights["update"] = "update" in ops and bool(mine.get("write"))
        rights["delete"] = "delete" in ops and bool(mine.get("delete"))
        if emap.lifecycle is not None and rights["read"]:
            buttons = await self._buttons(cred, emap.doctype)
            for action in ("submit", "cancel"):
                button = emap.lifecycle.buttons.get(action)
                rights[action] = action in ops and button is not None and buttons.get(button, False)
        return rights

    async def _may_read(self, cred: Credential, model: str) -> bool:
        """Whether Tryton's model access lets this user read ``model`` (asked once)."""
        key = (Session.of(cred).token, f"read:{model}")
        known = self._button_rights.get(key)
        if known is None:
            got = await self.rpc(cred, "ir.model.access.get_access", [model])
            known = {"read": bool((got.get(model) or {}).get("read"))}
            self._button_rights[key] = known
        return known["read"]

    async def _buttons(self, cred: Credential, model: str) -> dict[str, bool]:
        """Which buttons of ``model``'s form this user may click, as Tryton tells its own client:
        a button of a group the user is not in (or, without groups, of a model they may not
        write) comes marked read-only in the form view Tryton sends them."""
        key = (Session.of(cred).token, model)
        known = self._button_rights.get(key)
        if known is None:
            view = await self.rpc(cred, f"{model}.fields_view_get", None, "form")
            known = {}
            for button in ElementTree.fromstring(str(view["arch"])).iter("button"):
                states = json.loads(button.get("states") or "{}")
                known[str(button.get("name"))] = states.get("readonly") is not True
            self._button_rights[key] = known
        return known

    # ------------------------------------------------------------ reads

    async def _search_read(
        self, cred: Credential, native: Native, domain: Domain, fields: Sequence[str],
        *, start: int = 0, limit: int | None = None, order: Sequence[Sequence[str]] = (),
        deciding: bool = False,
    ) -> builtins.list[dict[str, Any]]:  # fmt: skip
        order = [*order, ["id", "ASC"]]
        fields = list(fields)
        ledger = any(f.startswith("lines_to_pay.") for f in fields)
        if ledger and not deciding and not await self._may_read(cred, "account.move.line"):
            # Due dates live on the ledger's lines: a user who may not read those (a sales
            # user) reads invoices without them, as Tryton's own form shows them.
            fields = [f for f in fields if not f.startswith("lines_to_pay.")]
        rows = await self.rpc(
            cred, f"{native.model}.search_read", domain, start, limit, order, fields
        )
        for row in rows:
            if row.get("_timestamp") is not None:
                self._remember(native.model, row)
        await reads.company_totals(self, cred, native, rows)
        return list(rows)

    def _remember(self, model: str, row: Mapping[str, Any]) -> None:
        seen = plain(row.get("write_date") or row.get("create_date"))
        if seen is None:
            return
        self._versions[(model, int(row["id"]), str(seen))] = str(row["_timestamp"])
        while len(self._versions) > _VERSIONS:
            self._versions.popitem(last=False)

    async def _domain(self, cred: Credential, native: Native, filters: Sequence[Filter]) -> Domain:
        id_like = [f for f in filters if f.field == "id" and f.op in (Op.LIKE, Op.NOT_LIKE)
                   and native.emap.fields["id"].native == "id"]  # fmt: skip
        sent = [f for f in filters if f not in id_like and not native.post_filter(f)]
        domain = native.domain(sent)
        for flt in id_like:
            domain += await reads.ids_like(self, cred, native, domain, flt)
        post = [f for f in filters if native.post_filter(f)]
        if post:
            # Conditions Tryton cannot search on (a computed amount): applied here to every row
            # Tryton returns for the rest of the domain, as the user, exactly.
            names = list(dict.fromkeys(["id", *(f.field for f in post)]))
            rows = await self._all(cred, native, domain, names, deciding=True)
            domain += [("id", "in", [r["id"] for r in rows if all(matches(r, f) for f in post)])]
        return domain

    async def _all(
        self, cred: Credential, native: Native, domain: Domain, names: Sequence[str],
        *, deciding: bool = False,
    ) -> builtins.list[Record]:  # fmt: skip
        """Every record the domain matches, read in pages, as canonical records. ``deciding``:
        the values decide which records count (a condition on a due date), so a field the user
        may not read is refused by Tryton rather than left out."""
        rows: builtins.list[Record] = []
        start = 0
        while True:
            chunk = await self._search_read(
                cred, native, domain, native.read_fields(names), start=start, limit=_PAGE,
                deciding=deciding,
            )  # fmt: skip
            rows += [native.to_record(r, names) for r in chunk]
            if len(chunk) < _PAGE:
                return rows
            start += _PAGE

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
        native = await self._native(cred, entity)
        names = [n for n in (fields or native.scalars()) if n in native.scalars()]
        names = list(dict.fromkeys(["id", *names]))
        domain = await self._domain(cred, native, filters)
        order = []
        for name, direction in order_by:
            fmap = native.fmap(name)
            sort = fmap.native
            if sort == "rec_name":  # a master's id: Tryton orders a model by its own key
                sort = "id"
            elif sort.startswith("=") or not native.fields.get(sort.split(".")[0], {}).get(
                "sortable", True
            ):
                raise refuse(f"Tryton cannot sort on {native.entity.field(name).label}.")
            order.append([sort, "DESC" if direction.lower() == "desc" else "ASC"])
        rows = await self._search_read(
            cred, native, domain, native.read_fields(names), start=start,
            limit=(limit + 1) if limit else None, order=order,
        )  # fmt: skip
        has_more = bool(limit) and len(rows) > limit
        records = [native.to_record(r, names) for r in rows[: limit or None]]
        return Page(records, start, limit, has_more)

    async def _resolve_id(self, cred: Credential, native: Native, record_id: str) -> int:
        """Tryton's integer id of ``record_id``: an id, a human number, or a mapped key."""
        text = str(record_id).strip()
        id_native = native.emap.fields["id"].native
        if id_native == "id" and text.isdigit():
            return int(text)
        if id_native != "id":
            domain = [*native.domain([]), (id_native, "=", text)]
        elif native.emap.number_field and native.emap.matches_id(text):
            domain = [*native.domain([]), (native.emap.number_field, "=", text)]
        else:
            raise refuse(f"{native.entity.label} {text} not found", "DoesNotExistError", 404)
        ids = await self.rpc(cred, f"{native.model}.search", domain, 0, 2, None)
        if len(ids) != 1:
            raise refuse(f"{native.entity.label} {text} not found", "DoesNotExistError", 404)
        return int(ids[0])

    async def get(self, cred: Credential, entity: str, record_id: str) -> Record:
        native = await self._native(cred, entity)
        rid = await self._resolve_id(cred, native, record_id)
        names = list(dict.fromkeys(["id", *native.scalars()]))
        rows = await self._search_read(
            cred, native, [*native.domain([]), ("id", "=", rid)], native.read_fields(names)
        )
        if not rows:
            # Tryton's rules hide a record from this user; read it to get Tryton's own refusal.
            await self.rpc(cred, f"{native.model}.read", [rid], ["id"])
            raise refuse(f"{native.entity.label} {record_id} not found", "DoesNotExistError", 404)
        record = native.to_record(rows[0], names)
        for name in native.mapped():
            fmap = native.fmap(name)
            if not fmap.fields or fmap.doctype is None:
                continue
            record[name] = await reads.table(self, cred, native, rid, name)
        return record

    async def count(self, cred: Credential, entity: str, filters: Sequence[Filter] = ()) -> int:
        native = await self._native(cred, entity)
        domain = await self._domain(cred, native, filters)
        return int(await self.rpc(cred, f"{native.model}.search_count", domain))

    async def aggregate(
        self, cred: Credential, entity: str, request: AggregateRequest
    ) -> AggregateResult:
        native = await self._native(cred, entity)
        domain = await self._domain(cred, native, request.filters)
        names = list(dict.fromkeys(
            [g.field for g in request.group_by] + [m.field for m in request.measures if m.field]
        ))  # fmt: skip
        for name in names:
            native.fmap(name)
        rows = await self._all(cred, native, domain, names)
        return aggregates.compute(rows, request, detail=f"read {len(rows)} records from Tryton "
                                  f"({native.model}) in pages of {_PAGE} and added up exactly")  # fmt: skip

    # ------------------------------------------------------------ writes

    async def _resolve(self, cred: Credential, relation: str, value: Any) -> Any:
        return await writes.resolve(self, cred, relation, value)

    async def _native_values(self, cred: Credential, native: Native, values: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
        return await writes.native_values(self, cred, native, values)

    async def _timestamp(self, cred: Credential, native: Native, rid: int, seen: str | None) -> dict[str, Any]:  # fmt: skip
        return await writes.stamp(self, cred, native, rid, seen, self._versions)

    async def _button(self, cred: Credential, entity: str, record_id: str, action: str, modified: str | None) -> Record:  # fmt: skip
        return await writes.click(self, cred, entity, record_id, action, modified)

    async def create(
        self, cred: Credential, entity: str, values: Mapping[str, Any], *, marker: str | None = None
    ) -> Record:
        native = await self._native(cred, entity)
        filled = await filling.prepare(self, cred, native, values)
        ids = await self.rpc(cred, f"{native.model}.create", [filled], write=True)
        return await self.get(cred, entity, str(ids[0]))

    async def update(
        self, cred: Credential, entity: str, record_id: str, values: Mapping[str, Any],
        *, modified: str | None = None,
    ) -> Record:  # fmt: skip
        native = await self._native(cred, entity)
        rid = await self._resolve_id(cred, native, record_id)
        changes = await self._native_values(cred, native, values)
        context = await self._timestamp(cred, native, rid, modified)
        await self.rpc(cred, f"{native.model}.write", [rid], changes, write=True, context=context)
        return await self.get(cred, entity, str(rid))

    async def submit(self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None) -> Record:  # fmt: skip
        return await self._button(cred, entity, record_id, "submit", modified)

    async def cancel(self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None) -> Record:  # fmt: skip
        return await self._button(cred, entity, record_id, "cancel", modified)

    async def delete(self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None) -> None:  # fmt: skip
        native = await self._native(cred, entity)
        rid = await self._resolve_id(cred, native, record_id)
        context = await self._timestamp(cred, native, rid, modified)
        await self.rpc(cred, f"{native.model}.delete", [rid], write=True, context=context)

    async def version(self, cred: Credential, entity: str, record_id: str) -> RecordVersion | None:
        native = await self._native(cred, entity)
        try:
            rid = await self._resolve_id(cred, native, record_id)
        except ErpRefusal:
            return None
        wanted = ["write_date", "create_date"]
        life = native.lifecycle
        if life is not None:
            wanted.append(life[1].field)
        rows = await self._search_read(
            cred, native, [*native.domain([]), ("id", "=", rid)], ["id", "_timestamp", *wanted]
        )
        if not rows:
            return None
        row = rows[0]
        code = life[1].canonical(life[0], row.get(life[1].field)) if life is not None else 0
        return RecordVersion(
            str(plain(row.get("write_date") or row.get("create_date"))), int(code or 0)
        )

    async def created_by(
        self, cred: Credential, entity: str, owner: str, *, after: str | None = None,
        newest_first: bool = False, limit: int = 20,
    ) -> builtins.list[Record]:  # fmt: skip
        filters = [Filter("created_by", Op.EQ, owner)]
        if after is not None:
            filters.append(Filter("created", Op.GT, after))
        page = await self.list(cred, entity, filters=filters, limit=limit,
                               order_by=[("created", "desc" if newest_first else "asc")])  # fmt: skip
        return page.records

    async def find_marked(self, cred: Credential, entity: str, marker: str) -> builtins.list[Record]:  # fmt: skip
        # Tryton keeps no field for the agent's marker; a lost create is found by owner and time.
        from erp_agent.connectors.base import CapabilityMissing

        raise CapabilityMissing(self.name, Capability.WRITES)

    # ------------------------------------------------------------ reports, sync, filling

    async def run_report(self, cred: Credential, report: str, params: Mapping[str, Any]) -> ReportResult:  # fmt: skip
        return await reports.run(self, cred, report, params)

    async def report_access(self, cred: Credential, report: str) -> bool:
        return await reports.allowed(self, cred, report)

    async def changes_since(
        self, cred: Credential, entity: str, watermark: str | None, *, limit: int = 1000
    ) -> ChangeSet:
        return await writes.changes(self, cred, await self._native(cred, entity), watermark, limit)

    async def fill_document(
        self, cred: Credential, entity: str, values: Mapping[str, Any]
    ) -> FilledDocument | None:
        native = await self._native(cred, entity)
        return await filling.fill(self, cred, native, values)
