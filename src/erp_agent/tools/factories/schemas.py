"""JSON schemas (Draft 2020-12) for tool arguments, built from canonical fields and parameters.

Schemas are strict (``additionalProperties: false``) so a model's typo is a validation error it
can correct, not an argument the ERP silently ignores.
"""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import (
    Catalog,
    Entity,
    EntityKind,
    Field,
    FieldType,
    ParamType,
    ReportParam,
)

Schema = dict[str, Any]

_SCALARS: dict[str, Schema] = {
    "string": {"type": "string"},
    "text": {"type": "string"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "money": {"type": "number"},
    "percent": {"type": "number"},
    "date": {"type": "string", "format": "date"},
    "datetime": {"type": "string", "format": "date-time"},
    "boolean": {"type": "boolean"},
}


def obj(properties: dict[str, Schema], required: list[str] | tuple[str, ...] = ()) -> Schema:
    """A strict object schema."""
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def id_schema(entity: Entity) -> Schema:
    return {
        "type": "string",
        "minLength": 1,
        "description": f"The {entity.label}'s id. {entity.identifier.description}".strip(),
    }


def link_text(catalog: Catalog, target: str) -> str:
    """How a link is described to the model: whose id it holds and where to find one."""
    linked = catalog.entities.get(target)
    if linked is None:
        return f"The id of a linked {target.replace('_', ' ')}."
    return f"The id of a linked {linked.label}."


def value_schema(field: Field, catalog: Catalog) -> Schema:
    """The schema of one value of a canonical field (a table: an array of row objects)."""
    if field.type is FieldType.ENUM:
        schema: Schema = {"type": "string", "enum": list(field.values)}
    elif field.type is FieldType.LINK:
        schema = {"type": "string", "minLength": 1}
    elif field.type is FieldType.TABLE:
        rows = writable_fields(field.fields)
        schema = {
            "type": "array",
            "items": obj(
                {n: value_schema(f, catalog) for n, f in rows.items()},
                [n for n, f in rows.items() if f.required],
            ),
        }
        if field.required:
            schema["minItems"] = 1
    else:
        schema = dict(_SCALARS[field.type.value])
    text = " ".join(
        part
        for part in (
            field.label + "." if field.label else "",
            field.description,
            link_text(catalog, field.target) if field.target else "",
        )
        if part
    )
    if text:
        schema["description"] = text
    return schema


def writable_fields(fields: dict[str, Field], *, with_id: bool = False) -> dict[str, Field]:
    """Fields a user may set: not read-only; the id only where the user names the record."""
    return {
        name: f for name, f in fields.items() if not f.read_only and (with_id or not f.identifier)
    }


def create_schema(entity: Entity, catalog: Catalog) -> Schema:
    fields = writable_fields(entity.fields)
    properties = {n: value_schema(f, catalog) for n, f in fields.items()}
    if entity.kind is EntityKind.MASTER:
        # Some masters are named by a code the user gives (an item code); others by the ERP.
        properties = {
            "id": {
                "type": "string",
                "minLength": 1,
                "description": f"{entity.identifier.description} Give it only when the user "
                "named the code; leave it out to let the ERP name the record.",
            },
            **properties,
        }
    return obj(properties, [n for n, f in fields.items() if f.required])


def update_schema(entity: Entity, catalog: Catalog) -> Schema:
    fields = writable_fields(entity.fields)
    values = obj({n: value_schema(f, catalog) for n, f in fields.items()})
    values["minProperties"] = 1
    values["description"] = "Only the fields to change, with their new values."
    return obj({"id": id_schema(entity), "values": values}, ["id", "values"])


def id_only_schema(entity: Entity) -> Schema:
    return obj({"id": id_schema(entity)}, ["id"])


# ------------------------------------------------------------------ report parameters

_PARAM_SCALARS: dict[ParamType, Schema] = {
    ParamType.STRING: {"type": "string"},
    ParamType.INTEGER: {"type": "integer"},
    ParamType.NUMBER: {"type": "number"},
    ParamType.DATE: {"type": "string", "format": "date"},
    ParamType.BOOLEAN: {"type": "boolean"},
    ParamType.LINK: {"type": "string", "minLength": 1},
}


def _param_scalar(kind: ParamType, param: ReportParam) -> Schema:
    if kind is ParamType.ENUM:
        return {"type": "string", "enum": list(param.values)}
    return dict(_PARAM_SCALARS[kind])


def param_schema(param: ReportParam, catalog: Catalog) -> Schema:
    """One report parameter; its default is documented, and applied by the connector or ERP."""
    if param.type is ParamType.LIST:
        assert param.item is not None  # the catalog validates that a list has an item type
        schema: Schema = {"type": "array", "items": _param_scalar(param.item, param)}
    else:
        schema = _param_scalar(param.type, param)
    parts = [param.label + "." if param.label else "", param.description]
    if param.target:
        parts.append(link_text(catalog, param.target))
    if param.default is not None:
        parts.append(f"Default: {_default_text(param)}.")
    schema["description"] = " ".join(p for p in parts if p)
    return schema


def _default_text(param: ReportParam) -> str:
    if param.default == "today":
        return "today (the ERP's business date)"
    if isinstance(param.default, bool):
        return "true" if param.default else "false"
    if isinstance(param.default, list):
        return "[" + ", ".join(str(v) for v in param.default) + "]"
    return str(param.default)
