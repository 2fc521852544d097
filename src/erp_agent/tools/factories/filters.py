"""The filter, sort and grouping grammar of entity tools: schemas, and arguments -> query types.

A filter is ``{field, op, value}`` on a canonical field, or on a row field of a table as
``items.item``. The gateway has checked the shape against the schema; what a schema cannot say
(an ``in`` needs a list, ``between`` two values) is checked here and reported as
``ToolInputError`` so the model can correct the call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from erp_agent.catalog import Entity, Field, FieldType
from erp_agent.catalog.fields import DATE_TYPES, NUMERIC_TYPES
from erp_agent.connectors.query import DatePart, Filter, Func, GroupKey, Measure, Op
from erp_agent.errors import ToolInputError
from erp_agent.tools.factories.schemas import Schema, obj

_LIST_OPS = frozenset({Op.IN, Op.NOT_IN, Op.BETWEEN})
_NO_VALUE_OPS = frozenset({Op.IS_SET, Op.IS_NOT_SET})
_MEASURE_TYPES = NUMERIC_TYPES | {FieldType.PERCENT}


# ------------------------------------------------------------------ which fields go where


def filterable(entity: Entity) -> list[str]:
    """Filterable fields, and filterable row fields of tables as ``table.field``."""
    names: list[str] = []
    for name, field in entity.fields.items():
        if field.type is FieldType.TABLE:
            names += [f"{name}.{child}" for child, f in field.fields.items() if f.filterable]
        elif field.filterable:
            names.append(name)
    return names


def scalar_fields(entity: Entity) -> list[str]:
    return [n for n, f in entity.fields.items() if f.is_scalar]


def sortable(entity: Entity) -> list[str]:
    return [n for n, f in entity.fields.items() if f.sortable]


def measurable(entity: Entity) -> list[str]:
    """Fields a sum/avg/min/max may take: summable ones, and any other number."""
    return [n for n, f in entity.fields.items() if f.summable or f.type in _MEASURE_TYPES]


def groupable(entity: Entity) -> list[str]:
    """Fields to group by: groupable ones, and dates (by year, quarter or month)."""
    return [n for n, f in entity.fields.items() if f.groupable or f.type in DATE_TYPES]


def _field_of(entity: Entity, name: str) -> Field | None:
    head, _, rest = name.partition(".")
    field = entity.fields.get(head)
    if field is not None and rest:
        return field.fields.get(rest)
    return field


# ------------------------------------------------------------------ schemas


def _enum(values: Iterable[str]) -> Schema:
    return {"type": "string", "enum": list(values)}


def filters_schema(entity: Entity, field: Schema | None = None) -> Schema:
    """Conditions on the entity's fields; ``field``: the schema of a field name where it is
    defined once for the whole tool (a ``$ref``). An enum field's values are in the tool's
    description, not repeated here."""
    value: Schema = {
        "type": ["string", "number", "boolean", "array"],
        "items": {"type": ["string", "number", "boolean"]},
        "description": "A list for in/not in, [from, to] for between, none for is (not) set; "
        "dates as YYYY-MM-DD.",
    }
    item = obj(
        {
            "field": field or _enum(filterable(entity)),
            "op": _enum(o.value for o in Op),
            "value": value,
        },
        ["field", "op"],
    )
    return {
        "type": "array",
        "items": item,
        "description": f"Conditions on {entity.plural}, all of which must hold.",
    }


def order_by_schema(entity: Entity, field: Schema | None = None) -> Schema:
    item = obj(
        {"field": field or _enum(sortable(entity)), "direction": _enum(["asc", "desc"])},
        ["field"],
    )
    return {"type": "array", "items": item, "description": "Sort keys, the first one first."}


def list_fields(entity: Entity) -> list[str]:
    """Every field a list shows, filters or sorts by (each use checks its own kind)."""
    names = [*scalar_fields(entity), *filterable(entity), *sortable(entity)]
    return list(dict.fromkeys(names))


def measures_schema(entity: Entity) -> Schema:
    properties: dict[str, Schema] = {"func": _enum(f.value for f in Func)}
    fields = measurable(entity)
    if fields:
        properties["field"] = _enum(fields)
    return {
        "type": "array",
        "minItems": 1,
        "items": obj(properties, ["func"]),
        "description": "What to compute: count needs no field; sum/avg/min/max need one.",
    }


def group_by_schema(entity: Entity) -> Schema:
    item = obj(
        {"field": _enum(groupable(entity)), "part": _enum(p.value for p in DatePart)},
        ["field"],
    )
    return {
        "type": "array",
        "maxItems": 3,
        "items": item,
        "description": "Group rows by these fields; for a date give part (year, quarter, month).",
    }


# ------------------------------------------------------------------ arguments -> query types


def parse_filters(entity: Entity, raw: Iterable[Mapping[str, Any]]) -> list[Filter]:
    out: list[Filter] = []
    for item in raw:
        name, op = str(item["field"]), Op(item["op"])
        value = item.get("value")
        if _field_of(entity, name) is None or name not in filterable(entity):
            raise ToolInputError(
                f"{entity.name} cannot be filtered on {name!r}; "
                f"filterable fields: {', '.join(filterable(entity))}"
            )
        if op in _NO_VALUE_OPS:
            value = None
        elif value is None:
            raise ToolInputError(f"filter on {name} with {op.value!r} needs a value")
        elif op in _LIST_OPS and not isinstance(value, list):
            raise ToolInputError(f"filter on {name} with {op.value!r} needs a list as value")
        elif op is Op.BETWEEN and len(value) != 2:
            raise ToolInputError(f"filter on {name} with 'between' needs [from, to]")
        elif op not in _LIST_OPS and isinstance(value, list):
            raise ToolInputError(
                f"filter on {name} with {op.value!r} takes one value; use 'in' for a list"
            )
        _check_size(name, value)
        out.append(Filter(name, op, value))
    return out


MAX_FILTER_TEXT = 1000  # characters in one compared value: longer is no ERP value to match
MAX_FILTER_VALUES = 10_000  # values in one "in" list (sent to the ERP in a POST body)


def _check_size(name: str, value: Any) -> None:
    """Refuse values no ERP filter can mean, in words the model can act on."""
    values = value if isinstance(value, list) else [value]
    if len(values) > MAX_FILTER_VALUES:
        raise ToolInputError(
            f"filter on {name} lists {len(values):,} values; at most {MAX_FILTER_VALUES:,} "
            "are accepted: filter on a wider condition (a group, a date range) instead"
        )
    for item in values:
        if isinstance(item, str) and len(item) > MAX_FILTER_TEXT:
            raise ToolInputError(
                f"filter on {name}: a value of {len(item):,} characters is longer than the "
                f"{MAX_FILTER_TEXT:,} accepted; compare a shorter part of it (op 'like' with %…%)"
            )


def parse_order_by(
    raw: Iterable[Mapping[str, Any]], entity: Entity | None = None
) -> list[tuple[str, str]]:
    out = [(str(o["field"]), str(o.get("direction") or "asc")) for o in raw]
    if entity is not None:
        wrong = [name for name, _ in out if name not in sortable(entity)]
        if wrong:
            raise ToolInputError(
                f"{entity.name} cannot be sorted by {wrong[0]!r}; sortable fields: "
                f"{', '.join(sortable(entity))}"
            )
    return out


def parse_measures(entity: Entity, raw: Iterable[Mapping[str, Any]]) -> tuple[Measure, ...]:
    out: list[Measure] = []
    for item in raw:
        func, field = Func(item["func"]), item.get("field")
        if field is None and func is not Func.COUNT:
            raise ToolInputError(
                f"{func.value} needs a field; numeric fields of {entity.name}: "
                f"{', '.join(measurable(entity)) or 'none'}"
            )
        out.append(Measure(func, field))
    return tuple(out)


def parse_group_by(entity: Entity, raw: Iterable[Mapping[str, Any]]) -> tuple[GroupKey, ...]:
    out: list[GroupKey] = []
    for item in raw:
        name, part = str(item["field"]), item.get("part")
        field = entity.field(name)
        is_date = field.type in DATE_TYPES
        if part is not None and not is_date:
            raise ToolInputError(f"{name} is not a date; 'part' is only for date fields")
        if part is None and is_date and not field.groupable:
            raise ToolInputError(f"group {name} by a part: year, quarter or month")
        out.append(GroupKey(name, DatePart(part) if part else None))
    return tuple(out)
