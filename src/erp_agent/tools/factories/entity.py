"""Entity tools, ``<entity>.<operation>``, generated from the catalog for each allowed operation.

Reads call the connector as the user and return JSON-ready results. Writes are two steps: the
gateway calls ``prepare`` (which reads as the user and builds the exact ``Change``) and, once the
user confirms, ``execute`` with exactly the stored payload.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from erp_agent.catalog import Catalog, Entity, Operation
from erp_agent.catalog.lifecycle import BOOKED, CANCELLED, DRAFT
from erp_agent.connectors.query import AggregateRequest
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import (
    BASE_MODIFIED,
    Args,
    Change,
    Effect,
    ExecuteHandler,
    PrepareHandler,
    ReadHandler,
    Requirement,
    Tool,
    ToolContext,
)
from erp_agent.tools.factories import _creating, _records, _text
from erp_agent.tools.factories import documents as docs
from erp_agent.tools.factories import filters as grammar
from erp_agent.tools.factories.schemas import (
    Schema,
    create_schema,
    id_only_schema,
    id_schema,
    obj,
    update_schema,
)

DEFAULT_LIMIT = 20
MAX_LIMIT = 500

# The ERP right each operation needs (Requirement.right).
_RIGHTS = {
    Operation.LIST: "read",
    Operation.GET: "read",
    Operation.COUNT: "read",
    Operation.AGGREGATE: "read",
    Operation.CREATE: "create",
    Operation.UPDATE: "update",
    Operation.SUBMIT: "submit",
    Operation.CANCEL: "cancel",
    Operation.DELETE: "delete",
}


# ------------------------------------------------------------------ schemas per operation


def _with_documents(entity: Entity, properties: dict[str, Schema]) -> dict[str, Schema]:
    if docs.has_documents(entity):
        return {**properties, "documents": docs.documents_schema(entity)}
    return properties


def _list_schema(entity: Entity) -> Schema:
    """The field names are defined once (``$defs``) and referenced by the columns, the filters
    and the sort keys; the handler checks that a filter or sort field can be used so."""
    field: Schema = {"$ref": "#/$defs/field"}
    schema = obj(
        _with_documents(
            entity,
            {
                "fields": {
                    "type": "array",
                    "uniqueItems": True,
                    "items": field,
                    "description": "Columns to return (the id always comes back). Default: all.",
                },
                "filters": grammar.filters_schema(entity, field),
                "order_by": grammar.order_by_schema(entity, field),
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT,
                },
                "start": {"type": "integer", "minimum": 0, "default": 0},
            },
        )
    )
    schema["$defs"] = {"field": {"type": "string", "enum": grammar.list_fields(entity)}}
    return schema


def _aggregate_schema(entity: Entity) -> Schema:
    properties = {
        "measures": grammar.measures_schema(entity),
        "group_by": grammar.group_by_schema(entity),
        "filters": grammar.filters_schema(entity),
    }
    return obj(_with_documents(entity, properties), ["measures"])


def schema_for(entity: Entity, op: Operation, catalog: Catalog) -> Schema:
    """The argument schema of ``<entity>.<op>``."""
    if op is Operation.LIST:
        return _list_schema(entity)
    if op is Operation.GET:
        return obj({"id": id_schema(entity)}, ["id"])
    if op is Operation.COUNT:
        return obj(_with_documents(entity, {"filters": grammar.filters_schema(entity)}))
    if op is Operation.AGGREGATE:
        return _aggregate_schema(entity)
    if op is Operation.CREATE:
        return create_schema(entity, catalog)
    if op is Operation.UPDATE:
        return update_schema(entity, catalog)
    return id_only_schema(entity)


# ------------------------------------------------------------------ read handlers


def _scoped(ctx: ToolContext, entity: Entity, args: Args) -> tuple[list[Any], str | None]:
    """The request's filters plus the documents it means (submitted by default)."""
    filters = grammar.parse_filters(entity, args.get("filters") or ())
    return docs.scope(entity, filters, args.get("documents"), ctx.connector.document_state)


def _list(entity: Entity) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        filters, statement = _scoped(ctx, entity, args)
        page = await ctx.connector.list(
            ctx.session.credential,
            entity.name,
            fields=args.get("fields") or None,
            filters=filters,
            order_by=grammar.parse_order_by(args.get("order_by") or (), entity),
            start=int(args.get("start") or 0),
            limit=int(args.get("limit") or DEFAULT_LIMIT),
        )
        shown = f"{len(page.records)} {entity.plural}" + (" (more exist)" if page.has_more else "")
        return {
            **asdict(page),
            "definition": docs.definition(
                entity, f"A page of {entity.plural}: {shown}, from row {page.start}.",
                filters, statement, len(page.records), "ERP list",
            ),
        }  # fmt: skip

    return run


def _get(entity: Entity) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        return await ctx.connector.get(ctx.session.credential, entity.name, str(args["id"]))

    return run


def _count(entity: Entity) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        flts, statement = _scoped(ctx, entity, args)
        count = await ctx.connector.count(ctx.session.credential, entity.name, flts)
        return {
            "count": count,
            "definition": docs.definition(
                entity, f"Number of {entity.plural} matching the filters.", flts, statement,
                count, "ERP count",
            ),
        }  # fmt: skip

    return run


def _aggregate(entity: Entity) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        filters, statement = _scoped(ctx, entity, args)
        request = AggregateRequest(
            measures=grammar.parse_measures(entity, args["measures"]),
            group_by=grammar.parse_group_by(entity, args.get("group_by") or ()),
            filters=tuple(filters),
        )
        result = await ctx.connector.aggregate(ctx.session.credential, entity.name, request)
        return {
            "rows": result.rows,
            "record_count": result.record_count,
            "method": result.method,
            "detail": result.detail,
            "definition": docs.definition(
                entity, aggregate_text(entity, request), filters, statement,
                result.record_count, _source(result.method, result.detail),
            ),
        }  # fmt: skip

    return run


def aggregate_text(entity: Entity, request: AggregateRequest) -> str:
    """``Sum of Net total and count of Sales Invoices, by Customer`` (field labels)."""

    def label(name: str | None) -> str:
        return entity.fields[name].label.lower() if name and name in entity.fields else "records"

    measures = [
        f"{m.func.value} of {label(m.field)}" if m.field else "count" for m in request.measures
    ]
    text = f"{', '.join(measures).capitalize()} over {entity.plural}"
    if request.group_by:
        keys = [
            f"{g.part} of {label(g.field)}" if g.part else label(g.field) for g in request.group_by
        ]
        text += f", by {', '.join(keys)}"
    return text + "."


def _source(method: str, detail: str) -> str:
    name = {"pushdown": "ERP aggregate", "chunked": "chunked exact read"}.get(method, method)
    return f"{name}: {detail}" if detail else name


# ------------------------------------------------------------------ write handlers


def _create(entity: Entity) -> tuple[PrepareHandler, ExecuteHandler]:
    async def prepare(ctx: ToolContext, args: Args) -> Change:
        return await _creating.prepare_create(ctx, entity, args)

    async def execute(ctx: ToolContext, payload: Args) -> dict[str, Any]:
        return await ctx.connector.create(
            ctx.session.credential, entity.name, payload, marker=ctx.marker
        )

    return prepare, execute


def _base(current: dict[str, Any]) -> str | None:
    modified = current.get("modified")
    return None if modified is None else str(modified)


def _update(entity: Entity) -> tuple[PrepareHandler, ExecuteHandler]:
    async def prepare(ctx: ToolContext, args: Args) -> Change:
        record_id, values = str(args["id"]), dict(args["values"])
        current = await ctx.connector.get(ctx.session.credential, entity.name, record_id)
        changes = _records.diff(entity, current, values)
        if not changes:
            given = ", ".join(f"{k}={v!r}" for k, v in values.items())
            raise ToolInputError(
                f"{entity.label} {record_id} already has {given}: nothing would change. "
                f"Read it with {entity.name}.get and give only values that differ."
            )
        changed = {c["field"]: c["after"] for c in changes}
        labels = ", ".join(c["label"] for c in changes)
        base = _base(current)
        return Change(
            payload={"id": record_id, "values": changed, BASE_MODIFIED: base},
            summary=f"Update {entity.label} {_records.key_figures(entity, current)}: {labels}",
            diff=changes,
            base_modified=base,
        )

    async def execute(ctx: ToolContext, payload: Args) -> dict[str, Any]:
        return await ctx.connector.update(
            ctx.session.credential,
            entity.name,
            str(payload["id"]),
            payload["values"],
            modified=payload.get(BASE_MODIFIED),
        )

    return prepare, execute


# The document status an action needs, and why the others cannot take it (so the agent never
# proposes — nor reports done — a submit or cancel that would change nothing).
# The canonical state a change needs the document in (catalog/lifecycle.py).
_NEEDS_STATE = {Operation.SUBMIT: DRAFT, Operation.CANCEL: BOOKED}
_STATE_NAMES = {DRAFT: "a draft", BOOKED: "submitted", CANCELLED: "cancelled"}


def _check_state(entity: Entity, op: Operation, record_id: str, code: int) -> None:
    life, needed = entity.lifecycle, _NEEDS_STATE.get(op)
    if life is None or needed is None or life.is_state(code, needed):
        return
    now = life.state_of(code)
    state = _STATE_NAMES.get(now or "", f"in document state {code}")
    if op is Operation.SUBMIT:
        hint = "it is already submitted" if now == BOOKED else "a cancelled one is amended"
        raise ToolInputError(
            f"{entity.label} {record_id} is {state}: only a draft can be submitted ({hint})."
        )
    hint = "delete the draft instead" if now == DRAFT else "it is already cancelled"
    raise ToolInputError(
        f"{entity.label} {record_id} is {state}: only a submitted document can be cancelled "
        f"({hint})."
    )


def _by_id(entity: Entity, op: Operation) -> tuple[PrepareHandler, ExecuteHandler]:
    """submit, cancel and delete: read the document as the user, name it and its figures."""
    verb = op.value.capitalize()

    async def prepare(ctx: ToolContext, args: Args) -> Change:
        record_id = str(args["id"])
        cred = ctx.session.credential
        current = await ctx.connector.get(cred, entity.name, record_id)
        version = await ctx.connector.version(cred, entity.name, record_id)
        if version is not None:
            _check_state(entity, op, record_id, version.state)
        base = version.modified if version is not None else _base(current)
        return Change(
            payload={"id": record_id, BASE_MODIFIED: base},
            summary=f"{verb} {entity.label} {_records.key_figures(entity, current)}",
            document=current,
            base_modified=base,
        )

    async def execute(ctx: ToolContext, payload: Args) -> dict[str, Any] | None:
        cred, record_id = ctx.session.credential, str(payload["id"])
        seen = payload.get(BASE_MODIFIED)
        if op is Operation.SUBMIT:
            return await ctx.connector.submit(cred, entity.name, record_id, modified=seen)
        if op is Operation.CANCEL:
            return await ctx.connector.cancel(cred, entity.name, record_id, modified=seen)
        await ctx.connector.delete(cred, entity.name, record_id, modified=seen)
        return {"deleted": record_id}

    return prepare, execute


_READS = {
    Operation.LIST: _list,
    Operation.GET: _get,
    Operation.COUNT: _count,
    Operation.AGGREGATE: _aggregate,
}


def entity_tool(entity: Entity, op: Operation, catalog: Catalog) -> Tool:
    """The tool ``<entity>.<op>``."""
    common: dict[str, Any] = {
        "name": f"{entity.name}.{op.value}",
        "description": _text.describe(entity, op),
        "parameters": schema_for(entity, op, catalog),
        "module": entity.modules[0],
        "prompt_rules": _text.rules(entity, op),
        "requires": (Requirement(entity=entity.name, right=_RIGHTS[op]),),
        "entity": entity.name,
        "action": op.value,
    }
    if op in _READS:
        return Tool(effect=Effect.READ, run=_READS[op](entity), **common)
    if op is Operation.CREATE:
        prepare, execute = _create(entity)
    elif op is Operation.UPDATE:
        prepare, execute = _update(entity)
    else:
        prepare, execute = _by_id(entity, op)
    return Tool(effect=Effect.WRITE, prepare=prepare, execute=execute, **common)


def entity_tools(catalog: Catalog) -> list[Tool]:
    """One tool per entity and operation the catalog allows, in catalog order."""
    return [entity_tool(e, op, catalog) for e in catalog.entities.values() for op in e.operations]
