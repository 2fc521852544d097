"""The ERPNext connector: canonical entities and fields in, Frappe REST calls as the user out."""

from __future__ import annotations

import asyncio
import builtins
import html
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from erp_agent.catalog import Catalog, EntityMap, ReportMap, load_catalog
from erp_agent.connectors import base
from erp_agent.connectors.base import (
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
    Transition,
    WorkflowInfo,
)
from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe import aggregates, filling, payment_filling, projection
from erp_agent.connectors.frappe.client import FrappeClient
from erp_agent.connectors.frappe.errors import stale_refusal
from erp_agent.connectors.frappe.scope import OwnerRules, data_scope
from erp_agent.connectors.query import AggregateRequest, AggregateResult, Filter, Op
from erp_agent.connectors.scope import DataScope
from erp_agent.errors import CatalogError, ErpError, ErpRefusal

CANCELLED = "Cancelled"  # the status Frappe gives a cancelled document
# The Custom Field (Data, read only, hidden, no copy, unique) in which a create carries the
# agent's write marker, so a create whose answer was lost can be found (docs/connectors.md).
# Added through Customize Form, Frappe names it with the custom_ prefix.
MARKER_FIELDS = ("erp_agent_write_id", "custom_erp_agent_write_id")
MARKER_RECHECK = 300.0  # seconds before a doctype without the field is asked about again
_SESSION_DEFAULTS = "frappe.core.doctype.session_default_settings.session_default_settings.get_session_default_values"
_PTYPES = {
    "read": "read",
    "create": "create",
    "update": "write",
    "submit": "submit",
    "cancel": "cancel",
    "delete": "delete",
}
_NATIVE_OPS = {
    Op.IS_SET: ("is", "set"),
    Op.IS_NOT_SET: ("is", "not set"),
}


class ERPNextConnector(Connector):
    """ERPNext (v15 or v16) over its REST API. Every data call runs with the user's credential."""

    name = "erpnext"

    def __init__(
        self,
        base_url: str,
        *,
        catalog: Catalog | None = None,
        service: Credential | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        allow_pushdown: bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.catalog = catalog or load_catalog()
        self.client = FrappeClient(self.base_url, timeout=timeout, transport=transport)
        self.service = service
        self.allow_pushdown = allow_pushdown
        # doctype -> (its write-marker field or None, when to ask again if None)
        self._markers: dict[str, tuple[str | None, float]] = {}
        self._owner_rules = OwnerRules(self.client)

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def profile(self) -> ConnectorProfile:
        maps = self.catalog.maps(self.name)
        return ConnectorProfile(
            name=self.name,
            capabilities=frozenset(Capability),
            entities={
                name: frozenset(op.value for op in self.catalog.entity(name).operations)
                for name in maps.entities
            },
            reports=frozenset(maps.reports),
        )

    async def health(self) -> None:
        await self.client.ping()

    def is_cancelled(self, entity: str, record: Mapping[str, Any]) -> bool:
        return record.get("status") == CANCELLED or record.get("docstatus") == 2

    def normalize_columns(self, columns: Sequence[Any]) -> builtins.list[dict[str, Any]]:
        """Frappe report columns come as dicts or as ``"Label:Type/Options:Width"`` strings."""
        out: builtins.list[dict[str, Any]] = []
        for col in columns:
            if isinstance(col, Mapping):
                name = str(col.get("fieldname") or col.get("label") or "")
                out.append({**col, "fieldname": name, "label": str(col.get("label") or name),
                            "fieldtype": str(col.get("fieldtype") or "Data")})  # fmt: skip
            else:
                label, _, rest = str(col).partition(":")
                kind = rest.split("/")[0].split(":")[0] or "Data"
                out.append({"fieldname": label, "label": label, "fieldtype": kind})
        return out

    # ------------------------------------------------------------ mapping

    def map(self, entity: str) -> EntityMap:
        return self.catalog.native(self.name, entity)

    def native_filter(self, emap: EntityMap, flt: Filter) -> list[Any]:
        head, _, rest = flt.field.partition(".")
        fmap = emap.field(head)
        doctype = emap.doctype
        if rest:
            if not fmap.fields or fmap.doctype is None:
                raise CatalogError(
                    f"{emap.entity}.{head} is not a table; cannot filter on {flt.field}"
                )
            doctype = fmap.doctype
            fmap = fmap.fields.get(rest) or emap.field(f"{head}.{rest}")
        op, value = _NATIVE_OPS.get(flt.op, (str(flt.op), flt.value))
        if isinstance(value, list):
            value = [fmap.native_value(v) for v in value]
        else:
            value = fmap.native_value(value)
        return [doctype, fmap.native, op, value]

    def native_filters(self, emap: EntityMap, filters: Sequence[Filter]) -> list[list[Any]]:
        return [self.native_filter(emap, f) for f in filters]

    def _scalar_natives(self, emap: EntityMap, fields: Sequence[str] | None) -> list[str]:
        names = fields or [n for n, m in emap.fields.items() if not m.fields]
        return [emap.native_field(n) for n in names if not emap.field(n).fields]

    # ------------------------------------------------------------ identity

    async def login(self, user: str, password: str) -> Credential:
        return await self.client.login(user, password)

    async def api_credential(self, admin: Credential, user: str) -> Credential | None:
        # Frappe keeps the user's api_key and issues a new api_secret (the old one ends).
        keys = await self.client.method(
            admin, "frappe.core.doctype.user.user.generate_keys", write=True, user=user
        )
        secret = keys.get("api_secret") if isinstance(keys, dict) else None
        api_key = keys.get("api_key") if isinstance(keys, dict) else None
        if not api_key:  # Frappe 15 answers with the secret only
            api_key = await self.client.method(
                admin, "frappe.client.get_value", doctype="User", filters=user,
                fieldname="api_key",
            )  # fmt: skip
            api_key = api_key.get("api_key") if isinstance(api_key, dict) else api_key
        if not secret or not api_key:
            return None
        return Credential.token(user, str(api_key), str(secret))

    async def notify(
        self, cred: Credential, subject: str, message: str, link: str | None = None
    ) -> str | None:
        # A ToDo allocated to the user, created as the user: every ERPNext user may create
        # ToDos for themselves, and the desk lists them (and counts them in the navbar).
        lines = "".join(f"<p>{html.escape(line)}</p>" for line in message.splitlines() if line)
        body = f"<p><strong>{html.escape(subject)}</strong></p>{lines}"
        if link:
            body += f'<p><a href="{html.escape(link, quote=True)}">Ask it again</a></p>'
        row = await self.client.insert(
            cred, "ToDo",
            {"description": body, "allocated_to": cred.user, "assigned_by": cred.user,
             "status": "Open", "priority": "Medium"},
        )  # fmt: skip
        return str(row.get("name") or "") or None

    async def roles(self, cred: Credential) -> list[str]:
        return await self.client.roles(self.service or cred, cred.user)

    async def whoami(self, cred: Credential) -> str:
        return await self.client.whoami(cred)

    async def canonical_user(self, name: str) -> str | None:
        # Only the service credential may ask before the user has signed in.
        if self.service is None:
            return None
        try:
            return await self.client.user_named(self.service, name)
        except ErpError:
            return None

    async def data_scope(self, cred: Credential) -> DataScope | None:
        return await data_scope(self.client, cred)

    async def owner_only(
        self, cred: Credential, roles: frozenset[str], entities: Sequence[str]
    ) -> frozenset[str] | None:
        maps = self.catalog.maps(self.name).entities
        doctypes = {e: self.map(e).doctype for e in entities if e in maps}
        return await self._owner_rules.owner_only(cred, roles, doctypes)

    async def user_default(self, cred: Credential, key: str) -> str | None:
        """A User Default as the desk pre-fills it (Frappe's session defaults), read as the
        user; None when the ERP has none or does not offer the method."""
        try:
            raw = await self.client.method(cred, _SESSION_DEFAULTS)
            fields = json.loads(raw) if isinstance(raw, str) else raw
        except (ErpError, ValueError):
            return None
        for f in fields if isinstance(fields, list) else []:
            if isinstance(f, dict) and f.get("fieldname") == key and f.get("default"):
                return str(f["default"])
        return None

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
        emap = self.map(entity)
        natives = self._scalar_natives(emap, fields)
        if "name" not in natives:
            natives.insert(0, "name")
        order = ", ".join(
            f"{emap.native_field(f)} {'desc' if d.lower() == 'desc' else 'asc'}"
            for f, d in order_by
        )
        rows = await self.client.get_list(
            cred,
            emap.doctype,
            fields=natives,
            filters=self.native_filters(emap, filters),
            order_by=order or None,
            start=start,
            page_length=limit + 1 if limit else 0,
        )
        has_more = bool(limit) and len(rows) > limit
        records = emap.rows_to_canonical(rows[: limit or None])
        return Page(records, start, limit, has_more)

    async def get(self, cred: Credential, entity: str, record_id: str) -> Record:
        emap = self.map(entity)
        return emap.to_canonical(await self.client.get_doc(cred, emap.doctype, record_id))

    async def count(self, cred: Credential, entity: str, filters: Sequence[Filter] = ()) -> int:
        emap = self.map(entity)
        return await self.client.get_count(cred, emap.doctype, self.native_filters(emap, filters))

    async def aggregate(
        self, cred: Credential, entity: str, request: AggregateRequest
    ) -> AggregateResult:
        emap = self.map(entity)
        groups = [(g, emap.native_field(g.field)) for g in request.group_by]
        measures = [(m, emap.native_field(m.field) if m.field else None) for m in request.measures]
        return await aggregates.aggregate(
            self.client,
            cred,
            emap.doctype,
            groups,
            measures,
            self.native_filters(emap, request.filters),
            allow_pushdown=self.allow_pushdown,
        )

    # ------------------------------------------------------------ writes

    async def create(
        self,
        cred: Credential,
        entity: str,
        values: Mapping[str, Any],
        *,
        marker: str | None = None,
    ) -> Record:
        emap = self.map(entity)
        native = emap.to_native(values)
        field = await self._marker_field(cred, emap.doctype) if marker else None
        if field is not None:
            native[field] = marker
        return emap.to_canonical(await self.client.insert(cred, emap.doctype, native))

    async def marks_creates(self, cred: Credential, entity: str) -> bool:
        return await self._marker_field(cred, self.map(entity).doctype) is not None

    async def find_marked(
        self, cred: Credential, entity: str, marker: str
    ) -> builtins.list[Record]:
        emap = self.map(entity)
        field = await self._marker_field(cred, emap.doctype) or MARKER_FIELDS[0]
        # A field that is gone makes the ERP refuse the filter: an error, never "none found".
        rows = await self.client.get_list(
            cred, emap.doctype, fields=sorted({"name", *self._scalar_natives(emap, None)}),
            filters=[[field, "=", marker]], order_by="creation asc", page_length=5,
        )  # fmt: skip
        return emap.rows_to_canonical(rows)

    async def _marker_field(self, cred: Credential, doctype: str) -> str | None:
        """The doctype's write-marker field, from its meta (asked once per process; a doctype
        without one is asked again after MARKER_RECHECK seconds, so a field added is found)."""
        known = self._markers.get(doctype)
        if known is not None and (known[0] is not None or time.monotonic() < known[1]):
            return known[0]
        docs = await self.client.getdoctype(self.service or cred, doctype)
        meta = next((d for d in docs if d.get("name") == doctype), {})
        names = {str(f.get("fieldname")) for f in meta.get("fields") or []}
        field = next((f for f in MARKER_FIELDS if f in names), None)
        self._markers[doctype] = (field, time.monotonic() + MARKER_RECHECK)
        return field

    async def project(
        self, cred: Credential, entity: str, record_id: str, action: str
    ) -> base.Projection | None:
        return await projection.project(
            self.client, cred, self.map(entity).doctype, record_id, action
        )

    async def fill_document(
        self, cred: Credential, entity: str, values: Mapping[str, Any]
    ) -> FilledDocument | None:
        emap = self.map(entity)
        if emap.doctype == payment_filling.DOCTYPE:
            return await payment_filling.fill(self.client, cred, emap, values)
        if not filling.fillable(emap.doctype):
            return None
        return await filling.fill(self.client, cred, emap, values)

    async def update(
        self,
        cred: Credential,
        entity: str,
        record_id: str,
        values: Mapping[str, Any],
        *,
        modified: str | None = None,
    ) -> Record:
        emap = self.map(entity)
        native = emap.to_native(values)
        if modified is not None:
            # Frappe's update_doc puts the body on the stored document, then save() runs
            # check_if_latest against the ``modified`` given: a stale write is refused.
            native["modified"] = modified
        row = await self.client.update(cred, emap.doctype, record_id, native)
        return emap.to_canonical(row)

    async def submit(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> Record:
        return await self._set_docstatus(cred, entity, record_id, 1, modified)

    async def cancel(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> Record:
        return await self._set_docstatus(cred, entity, record_id, 2, modified)

    async def _set_docstatus(
        self, cred: Credential, entity: str, record_id: str, docstatus: int, modified: str | None
    ) -> Record:
        """Submit (1) or cancel (2) through the document's save, as the desk form does: the
        same controller hooks as run_method, and check_if_latest sees the version shown."""
        emap = self.map(entity)
        if modified is None:
            method = "submit" if docstatus == 1 else "cancel"
            return emap.to_canonical(
                await self.client.run_doc_method(cred, emap.doctype, record_id, method)
            )
        body = {"docstatus": docstatus, "modified": modified}
        return emap.to_canonical(await self.client.update(cred, emap.doctype, record_id, body))

    async def delete(
        self, cred: Credential, entity: str, record_id: str, *, modified: str | None = None
    ) -> None:
        # Frappe's delete reads the record afresh, so the version is checked here, just before.
        await self._check_version(cred, entity, record_id, modified)
        await self.client.delete(cred, self.map(entity).doctype, record_id)

    async def version(self, cred: Credential, entity: str, record_id: str) -> RecordVersion | None:
        emap = self.map(entity)
        rows = await self.client.get_list(
            cred, emap.doctype, fields=["name", "modified", "docstatus"],
            filters=[["name", "=", record_id]], page_length=1,
        )  # fmt: skip
        if not rows:
            return None
        return RecordVersion(str(rows[0]["modified"]), int(rows[0].get("docstatus") or 0))

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
        # owner and creation are standard columns Frappe stores with every document.
        emap = self.map(entity)
        filters: builtins.list[builtins.list[Any]] = [["owner", "=", owner]]
        if after is not None:
            filters.append(["creation", ">", after])
        natives = sorted({"name", "creation", *self._scalar_natives(emap, None)})
        direction = "desc" if newest_first else "asc"
        rows = await self.client.get_list(
            cred, emap.doctype, fields=natives, filters=filters,
            order_by=f"creation {direction}, name {direction}", page_length=limit,
        )  # fmt: skip
        return emap.rows_to_canonical(rows)

    async def _check_version(
        self, cred: Credential, entity: str, record_id: str, modified: str | None
    ) -> None:
        if modified is None:
            return
        current = await self.version(cred, entity, record_id)
        if current is not None and current.modified != modified:
            raise ErpRefusal(stale_refusal(current.modified, modified))

    # ------------------------------------------------------------ reports, metadata, workflow

    async def run_report(
        self, cred: Credential, report: str, params: Mapping[str, Any]
    ) -> ReportResult:
        rmap = self.catalog.native_report(self.name, report)
        given = dict(params)
        for name, param in self.catalog.report(report).params.items():
            # "today" is left for the ERP to resolve in its own business date and timezone.
            if given.get(name) is None and param.default not in (None, "today"):
                given[name] = param.default
        if rmap.method:
            args: dict[str, Any] = dict(rmap.native_filters(given))
            served = await self.client.method(cred, rmap.method, **args)
            return _method_report(report, rmap, served)
        reply = await self.client.run_report(cred, rmap.native, rmap.native_filters(given))
        if reply.get("prepared_report") and "result" not in reply:
            return ReportResult(
                report, [], [], prepared=True,
                message=f"{rmap.native} is a prepared report: the ERP queued it instead of running it.",
            )  # fmt: skip
        rows = list(reply.get("result") or [])
        total = rows.pop() if rows and isinstance(rows[-1], list) else None
        return ReportResult(
            report=report,
            columns=self.normalize_columns(list(reply.get("columns") or [])),
            rows=[r for r in rows if isinstance(r, dict)],
            total_row=total,
            summary=list(reply.get("report_summary") or []),
            chart=reply.get("chart"),
            message=reply.get("message"),
        )

    async def describe(self, cred: Credential, entity: str) -> builtins.list[FieldInfo]:
        emap = self.map(entity)
        docs = await self.client.getdoctype(self.service or cred, emap.doctype)
        meta = next((d for d in docs if d.get("name") == emap.doctype), None)
        if meta is None:
            return []
        canonical = {m.native: name for name, m in emap.fields.items()}
        out = []
        for f in meta.get("fields") or []:
            native = str(f.get("fieldname"))
            out.append(
                FieldInfo(
                    name=canonical.get(native, native),
                    native=native,
                    label=str(f.get("label") or native),
                    type=str(f.get("fieldtype")),
                    options=f.get("options"),
                    required=bool(f.get("reqd")),
                    read_only=bool(f.get("read_only")),
                    custom=bool(f.get("is_custom_field")),
                    permlevel=int(f.get("permlevel") or 0),
                )
            )
        return out

    async def workflow(
        self, cred: Credential, entity: str, record_id: str | None = None
    ) -> WorkflowInfo | None:
        emap = self.map(entity)
        meta_cred = self.service or cred
        found = await self.client.get_list(
            meta_cred,
            "Workflow",
            filters=[["document_type", "=", emap.doctype], ["is_active", "=", 1]],
            page_length=1,
        )
        if not found:
            return None
        definition = await self.client.get_doc(meta_cred, "Workflow", str(found[0]["name"]))
        transitions = [_transition(t) for t in definition.get("transitions") or []]
        info = WorkflowInfo(
            name=str(definition["name"]),
            entity=entity,
            state_field=str(definition.get("workflow_state_field") or "workflow_state"),
            states=[
                {
                    "state": s.get("state"),
                    "doc_status": s.get("doc_status"),
                    "allow_edit": s.get("allow_edit"),
                }
                for s in definition.get("states") or []
            ],
            transitions=transitions,
        )
        if record_id:
            doc = await self.client.get_doc(cred, emap.doctype, record_id)
            info.document = record_id
            info.current_state = doc.get(info.state_field)
            allowed = await self.client.get_transitions(cred, doc)
            info.available_actions = [_transition(t) for t in allowed]
        return info

    async def apply_workflow_action(
        self,
        cred: Credential,
        entity: str,
        record_id: str,
        action: str,
        *,
        modified: str | None = None,
    ) -> Record:
        emap = self.map(entity)
        doc = await self.client.get_doc(cred, emap.doctype, record_id)
        if modified is not None and str(doc.get("modified")) != modified:
            # apply_workflow reloads the document before acting: the version is checked here.
            raise ErpRefusal(stale_refusal(str(doc.get("modified")), modified))
        return emap.to_canonical(await self.client.apply_workflow(cred, doc, action))

    # ------------------------------------------------------------ delta sync

    async def changes_since(
        self, cred: Credential, entity: str, watermark: str | None, *, limit: int = 1000
    ) -> ChangeSet:
        """Records modified at or after ``watermark`` (oldest first) and deletions since it.

        Ties on ``modified`` are re-read rather than skipped: upserts downstream are idempotent.
        """
        emap = self.map(entity)
        filters = [["modified", ">=", watermark]] if watermark else []
        natives = ["name", "modified", *self._scalar_natives(emap, None)]
        rows = await self.client.get_list(
            cred, emap.doctype, fields=sorted(set(natives)), filters=filters,
            order_by="modified asc, name asc", page_length=limit + 1,
        )  # fmt: skip
        complete = len(rows) <= limit
        rows = rows[:limit]
        deleted_filters: builtins.list[builtins.list[Any]] = [
            ["deleted_doctype", "=", emap.doctype]
        ]
        if watermark:
            deleted_filters.append(["creation", ">=", watermark])
        tombstones = await self.client.get_list(
            cred, "Deleted Document", fields=["deleted_name", "creation"], filters=deleted_filters,
            order_by="creation asc", page_length=0,
        )  # fmt: skip
        marks = [str(r["modified"]) for r in rows] + [str(t["creation"]) for t in tombstones]
        new_mark = max(marks) if marks else watermark
        if not complete and rows:
            new_mark = str(rows[-1]["modified"])
        records = [{**emap.to_canonical(r), "_modified": r["modified"]} for r in rows]
        return ChangeSet(records, [str(t["deleted_name"]) for t in tombstones], new_mark, complete)

    async def access(self, cred: Credential, entity: str) -> dict[str, bool]:
        emap = self.map(entity)
        rights = {
            op: ptype
            for op, ptype in _PTYPES.items()
            if op == "read" or self.catalog.entity(entity).allows(op)
        }
        answers = await asyncio.gather(
            *(self.client.has_permission(cred, emap.doctype, ptype) for ptype in rights.values())
        )
        return dict(zip(rights, answers, strict=True))

    async def report_access(self, cred: Credential, report: str) -> bool:
        rmap = self.catalog.native_report(self.name, report)
        if rmap.method:
            return True  # a form's helper: the ERP checks the record it is asked about
        return await self.client.report_access(cred, rmap.native)

    def link(self, entity: str, record: Mapping[str, Any]) -> str | None:
        return self.map(entity).link_for(self.base_url, record)


def _method_report(report: str, rmap: ReportMap, served: Any) -> ReportResult:
    """A whitelisted method's reply as report rows: one per key of its ``rows`` object."""
    found = served.get(rmap.rows) if isinstance(served, Mapping) else None
    rows = [
        {rmap.key: key, **values}
        for key, values in (found.items() if isinstance(found, Mapping) else ())
        if isinstance(values, Mapping)
    ]
    names = list(dict.fromkeys(k for row in rows for k in row))
    columns = [
        {"fieldname": n, "label": n.replace("_", " ").capitalize(),
         "fieldtype": "Float" if isinstance(rows[0].get(n), int | float) else "Data"}
        for n in names
    ]  # fmt: skip
    return ReportResult(report=report, columns=columns, rows=rows, total_row=None)


def _transition(raw: Mapping[str, Any]) -> Transition:
    return Transition(
        state=str(raw.get("state")),
        action=str(raw.get("action")),
        next_state=str(raw.get("next_state")),
        allowed_role=str(raw.get("allowed")),
        allow_self_approval=bool(raw.get("allow_self_approval")),
        condition=raw.get("condition") or None,
    )


__all__ = ["ERPNextConnector", "base"]
