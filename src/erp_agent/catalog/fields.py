"""Canonical fields of entities and typed parameters of reports."""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any, Self

from pydantic import Field as PydanticField
from pydantic import JsonValue, model_validator

from erp_agent.catalog._base import Frozen
from erp_agent.catalog._spec import default_label, expand, named, split_type


class FieldType(StrEnum):
    """The canonical value types of entity fields."""

    STRING = "string"
    TEXT = "text"
    INTEGER = "integer"
    NUMBER = "number"
    MONEY = "money"
    PERCENT = "percent"
    DATE = "date"
    DATETIME = "datetime"
    BOOLEAN = "boolean"
    ENUM = "enum"
    LINK = "link"
    TABLE = "table"


NUMERIC_TYPES = frozenset({FieldType.INTEGER, FieldType.NUMBER, FieldType.MONEY})
DATE_TYPES = frozenset({FieldType.DATE, FieldType.DATETIME})

_FIELD_FLAGS = {
    "id": "identifier",
    "title": "title",
    "filter": "filterable",
    "sort": "sortable",
    "group": "groupable",
    "sum": "summable",
    "req": "required",
    "ro": "read_only",
}


def _known_type(kind: object, types: type[StrEnum]) -> None:
    # Checked before the "(arg)" is read, so "range(integer)" says "unknown type", not "no arg".
    if isinstance(kind, str) and kind not in {t.value for t in types}:
        known = ", ".join(t.value for t in types)
        raise ValueError(f"unknown type {kind!r} (known: {known})")


def _enum_values(arg: str) -> list[str]:
    return [v.strip() for v in arg.split("|") if v.strip()]


class Field(Frozen):
    """One canonical field: ``"money ro sum sort -- What the customer owes"`` in a data file."""

    name: str
    type: FieldType
    label: str
    description: str = ""
    values: tuple[str, ...] = ()
    target: str | None = None
    fields: dict[str, Field] = PydanticField(default_factory=dict)
    identifier: bool = False
    title: bool = False
    filterable: bool = False
    sortable: bool = False
    groupable: bool = False
    summable: bool = False
    required: bool = False
    read_only: bool = False
    # A yes/no field whose records people call by their own name ("credit notes" are the
    # invoices with is_return set): those phrases, which then mean the field is true.
    named_by: tuple[str, ...] = ()
    # A quantity whose records at nil people name in a phrase ("out of stock": the stock
    # balances with no quantity on hand): those phrases, which then mean the field is <= 0.
    none_named_by: tuple[str, ...] = ()
    # An enum's values as people name them ("stock transfers" are the entries of type Material
    # Transfer): value → those phrases, which then mean the field is that value.
    value_names: dict[str, tuple[str, ...]] = PydanticField(default_factory=dict)
    # The value the ERP's own form gives a new document when nothing says another
    # (a Material Request is for Purchase unless said).
    default: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, raw: Any) -> Any:
        data = expand(raw, _FIELD_FLAGS)
        if not isinstance(data, dict):
            return data
        _known_type(data.get("type"), FieldType)
        arg = data.pop("_arg", None)
        if arg is not None:
            if data.get("type") == FieldType.ENUM:
                data.setdefault("values", _enum_values(arg))
            elif data.get("type") == FieldType.LINK:
                data.setdefault("target", arg.strip())
            else:
                raise ValueError(f"type {data.get('type')!r} takes no '(...)' argument")
        if "fields" in data:
            data["fields"] = named(data["fields"])
        data.setdefault("label", default_label(str(data.get("name", ""))))
        return data

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.type is FieldType.ENUM and not self.values:
            raise ValueError("an enum needs values, e.g. enum(Open|Closed)")
        if self.type is not FieldType.ENUM and self.values:
            raise ValueError(f"only enum fields have values; this one is {self.type}")
        if (self.type is FieldType.LINK) != (self.target is not None):
            raise ValueError(
                "a link needs a target entity, e.g. link(customer), and only links have one"
            )
        if self.type is FieldType.TABLE and not self.fields:
            raise ValueError("a table needs the fields of its rows")
        if self.type is not FieldType.TABLE and self.fields:
            raise ValueError("only table fields have row fields")
        if self.named_by and self.type is not FieldType.BOOLEAN:
            raise ValueError(f"only boolean fields are named by phrases; this one is {self.type}")
        unknown = set(self.value_names) - set(self.values)
        if unknown:
            raise ValueError(f"value_names names values the enum does not have: {sorted(unknown)}")
        if self.none_named_by and self.type not in NUMERIC_TYPES:
            raise ValueError(
                f"only quantities are named at nil by phrases; this one is {self.type}"
            )
        if any(child.type is FieldType.TABLE for child in self.fields.values()):
            raise ValueError("tables cannot nest")
        if self.summable and self.type not in NUMERIC_TYPES:
            raise ValueError(f"'sum' is for money/number/integer fields, not {self.type}")
        return self

    @property
    def is_scalar(self) -> bool:
        """Whether the value is one value (not a table of rows)."""
        return self.type is not FieldType.TABLE


class ParamType(StrEnum):
    """The types a report parameter may have (a strict JSON-schema-able subset)."""

    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    DATE = "date"
    BOOLEAN = "boolean"
    ENUM = "enum"
    LINK = "link"
    LIST = "list"


# Symbolic defaults the caller resolves at run time (the catalog holds no clock).
DATE_DEFAULTS = frozenset({"today"})

_PARAM_FLAGS = {"req": "required"}


class ReportParam(Frozen):
    """One report filter as a canonical parameter: ``"list(link(customer)) -- Only these"``.

    A list parameter says what its items are with ``item`` (and ``target``/``values`` for link or
    enum items).
    """

    name: str
    type: ParamType
    label: str
    description: str = ""
    item: ParamType | None = None
    target: str | None = None
    values: tuple[str, ...] = ()
    required: bool = False
    default: JsonValue = None

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, raw: Any) -> Any:
        data = expand(raw, _PARAM_FLAGS)
        if not isinstance(data, dict):
            return data
        _known_type(data.get("type"), ParamType)
        arg = data.pop("_arg", None)
        if arg is not None:
            kind = data.get("type")
            if kind == ParamType.LIST:
                item, item_arg, rest = split_type(arg)
                if rest.strip():
                    raise ValueError(f"list({arg}) has trailing text {rest.strip()!r}")
                _known_type(item, ParamType)
                data["item"] = item
                arg, kind = item_arg, item
            if arg is not None and kind == ParamType.ENUM:
                data.setdefault("values", _enum_values(arg))
            elif arg is not None and kind == ParamType.LINK:
                data.setdefault("target", arg.strip())
            elif arg is not None:
                raise ValueError(f"type {kind!r} takes no '(...)' argument")
        data.setdefault("label", default_label(str(data.get("name", ""))))
        return data

    @model_validator(mode="after")
    def _check(self) -> Self:
        scalar = self.item if self.type is ParamType.LIST else self.type
        if self.type is ParamType.LIST and self.item in {None, ParamType.LIST}:
            raise ValueError("a list needs a scalar item type, e.g. list(integer)")
        if self.type is not ParamType.LIST and self.item is not None:
            raise ValueError("only list parameters have an item type")
        if (scalar is ParamType.ENUM) != bool(self.values):
            raise ValueError(
                "an enum needs values, e.g. enum(monthly|yearly), and only enums have them"
            )
        if (scalar is ParamType.LINK) != (self.target is not None):
            raise ValueError(
                "a link needs a target entity, e.g. link(company), and only links have one"
            )
        if self.default is not None:
            self._check_default(self.default)
        return self

    def _check_default(self, default: JsonValue) -> None:
        if self.type is ParamType.LIST:
            if not isinstance(default, list):
                raise ValueError(f"default {default!r} of a list parameter must be a list")
            for value in default:
                self._check_scalar(value, self.item)
        else:
            self._check_scalar(default, self.type)

    def _check_scalar(self, value: JsonValue, kind: ParamType | None) -> None:
        ok = {
            ParamType.STRING: isinstance(value, str),
            ParamType.LINK: isinstance(value, str),
            ParamType.INTEGER: isinstance(value, int) and not isinstance(value, bool),
            ParamType.NUMBER: isinstance(value, int | float) and not isinstance(value, bool),
            ParamType.BOOLEAN: isinstance(value, bool),
            ParamType.ENUM: value in self.values,
            ParamType.DATE: isinstance(value, str) and _is_date(value),
        }.get(kind or ParamType.LIST, False)
        if not ok:
            raise ValueError(f"default {value!r} is not a valid {kind}")


def _is_date(value: str) -> bool:
    if value in DATE_DEFAULTS:
        return True
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True
