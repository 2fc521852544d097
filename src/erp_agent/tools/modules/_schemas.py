"""Argument schemas shared by the analytics tools, which take the entity as an argument.

Field names cannot be enumerated per entity in one flat schema, so they are strings here and
checked against the chosen entity in code (``ToolInputError`` lists the valid ones).
"""

from __future__ import annotations

from collections.abc import Iterable

from erp_agent.catalog import Entity
from erp_agent.connectors.query import DatePart, Func, Op
from erp_agent.tools.factories.schemas import Schema, obj

DATE: Schema = {"type": "string", "format": "date"}

MEASURES: Schema = {
    "type": "array",
    "minItems": 1,
    "maxItems": 10,
    "items": obj(
        {
            "func": {"type": "string", "enum": [f.value for f in Func]},
            "field": {"type": "string", "minLength": 1},
        },
        ["func"],
    ),
    "description": "What to compute: count needs no field; sum/avg/min/max need a numeric field.",
}

GROUP_BY: Schema = {
    "type": "array",
    "maxItems": 3,
    "items": obj(
        {
            "field": {"type": "string", "minLength": 1},
            "part": {"type": "string", "enum": [p.value for p in DatePart]},
        },
        ["field"],
    ),
    "description": "Group by these fields; for a date give part (year, quarter, month).",
}

FILTERS: Schema = {
    "type": "array",
    "items": obj(
        {
            "field": {"type": "string", "minLength": 1},
            "op": {"type": "string", "enum": [o.value for o in Op]},
            "value": {
                "type": ["string", "number", "boolean", "array"],
                "items": {"type": ["string", "number", "boolean"]},
            },
        },
        ["field", "op"],
    ),
    "description": "Conditions that must all hold: {field, op, value}; a list for 'in', "
    "[from, to] for 'between'; dates as YYYY-MM-DD.",
}

DOCUMENTS: Schema = {
    "type": "string",
    "enum": ["submitted", "all"],
    "default": "submitted",
    "description": "submitted (default) leaves out drafts and cancelled documents unless you "
    "filter on the status yourself; all counts every record.",
}


def entity_enum(entities: Iterable[Entity]) -> Schema:
    listed = list(entities)
    return {
        "type": "string",
        "enum": [e.name for e in listed],
        "description": "The entity: " + ", ".join(f"{e.name} ({e.plural})" for e in listed),
    }
