"""Native maps: how one connector's ERP names canonical entities, fields, values and reports.

Everything ERP-specific lives here (doctypes, fieldnames, naming series, page URLs, report
names), so the engine can stay on canonical names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Self
from urllib.parse import quote

from pydantic import Field as PydanticField
from pydantic import JsonValue, model_validator

from erp_agent.catalog._base import Frozen
from erp_agent.catalog.lifecycle import LifecycleMap
from erp_agent.catalog.templates import render
from erp_agent.errors import CatalogError


def _short_form(raw: Any) -> Any:
    # `total: grand_total` is shorthand for `total: {native: grand_total}`.
    return {"native": raw} if isinstance(raw, str) else raw


class FieldMap(Frozen):
    """A canonical field's native name; enum ``values`` (canonical -> native) when they differ;
    for a table, the child ``doctype`` and the maps of its row fields."""

    native: str
    values: dict[str, str] = PydanticField(default_factory=dict)
    doctype: str | None = None
    fields: dict[str, FieldMap] = PydanticField(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _short(cls, raw: Any) -> Any:
        return _short_form(raw)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if len(set(self.values.values())) != len(self.values):
            raise ValueError("two canonical values map to the same native value")
        if bool(self.fields) != (self.doctype is not None):
            raise ValueError("a table map needs both 'doctype' and 'fields'")
        return self

    def native_value(self, value: object) -> object:
        """The ERP's spelling of a canonical value (unchanged when not mapped)."""
        return self.values.get(value, value) if isinstance(value, str) else value

    def canonical_value(self, value: object) -> object:
        """The canonical spelling of a value read from the ERP."""
        if not isinstance(value, str):
            return value
        return next((c for c, n in self.values.items() if n == value), value)


class EntityMap(Frozen):
    """One entity in one ERP: its native object, field names, id patterns and page link."""

    entity: str
    doctype: str
    fields: dict[str, FieldMap]
    link: str | None = None
    id_patterns: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    # The native records that are this entity when the native object holds more than one
    # (Tryton's account.invoice with type = out is a sales invoice), in the ERP's own syntax.
    domain: tuple[JsonValue, ...] = ()
    # The native field a human id in ``id_patterns`` is matched on, when the record's id is
    # not it (Tryton: the integer id, and the invoice ``number`` once posted).
    number_field: str | None = None
    lifecycle: LifecycleMap | None = None
    source: str = ""

    @model_validator(mode="after")
    def _check(self) -> Self:
        for pattern in self.id_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"id pattern {pattern!r} is not a valid regex: {exc}") from None
        return self

    def field(self, name: str) -> FieldMap:
        """The map of canonical field ``name``; ``CatalogError`` if the connector lacks it."""
        try:
            return self.fields[name]
        except KeyError:
            raise CatalogError(
                f"{self.source}: entity {self.entity!r} has no native map for field {name!r}"
            ) from None

    def native_field(self, name: str) -> str:
        """The native fieldname of canonical field ``name``."""
        return self.field(name).native

    def to_native(self, record: Mapping[str, object]) -> dict[str, object]:
        """A canonical record (values included, child rows too) in the ERP's names."""
        out: dict[str, object] = {}
        for name, value in record.items():
            fmap = self.field(name)
            if fmap.fields and isinstance(value, list):
                value = [_rename(row, fmap.fields, to_native=True) for row in value]
            out[fmap.native] = fmap.native_value(value)
        return out

    def to_canonical(self, row: Mapping[str, object]) -> dict[str, object]:
        """A native row in canonical names; native fields the catalog does not know are dropped."""
        return _rename(row, self.fields, to_native=False)

    def rows_to_canonical(self, rows: list[dict[str, object]]) -> list[dict[str, object]]:
        """Many flat rows (a list page) in canonical names; the name index is built once."""
        index = {fmap.native: (name, fmap) for name, fmap in self.fields.items() if not fmap.fields}
        out = []
        for row in rows:
            record: dict[str, object] = {}
            for native, value in row.items():
                hit = index.get(native)
                if hit is not None:
                    record[hit[0]] = hit[1].canonical_value(value) if hit[1].values else value
            out.append(record)
        return out

    def matches_id(self, text: str) -> bool:
        """Whether ``text`` is exactly a document id of this entity."""
        return any(re.fullmatch(p, text.strip()) for p in self.id_patterns)

    def find_ids(self, text: str) -> list[str]:
        """Document ids of this entity mentioned anywhere in ``text``, in order."""
        found: list[str] = []
        for pattern in self.id_patterns:
            found += [m.group() for m in re.finditer(rf"(?<![\w-])(?:{pattern})(?![\w-])", text)]
        return found

    def link_for(self, base_url: str, record: Mapping[str, object]) -> str | None:
        """The URL of the record's page in the ERP, if this connector has pages."""
        if self.link is None:
            return None
        # Ids may hold spaces or slashes ("Sal Slip/00001"): quote every value but the base.
        values = {k: quote(str(v), safe="") for k, v in record.items() if v is not None}
        return render(self.link, {**values, "base_url": base_url.rstrip("/")})


def _rename(
    row: Mapping[str, object], fields: Mapping[str, FieldMap], *, to_native: bool
) -> dict[str, object]:
    if to_native:
        return {fields[k].native: fields[k].native_value(v) for k, v in row.items() if k in fields}
    out: dict[str, object] = {}
    for name, fmap in fields.items():
        if fmap.native in row:
            value = row[fmap.native]
            if fmap.fields and isinstance(value, list):
                value = [
                    _rename(r, fmap.fields, to_native=False)
                    for r in value
                    if isinstance(r, Mapping)
                ]
            out[name] = fmap.canonical_value(value)
    return out


class Transform(StrEnum):
    """How a canonical parameter value becomes the native filter value."""

    NONE = "none"
    JOIN = "join"  # [30, 60, 90] -> "30, 60, 90" (one comma-separated text filter)
    BOOL_INT = "bool_int"  # True -> 1 (Check filters)


class ParamMap(Frozen):
    """A report parameter's native filter name, value map and transform."""

    native: str
    transform: Transform = Transform.NONE
    values: dict[str, str] = PydanticField(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _short(cls, raw: Any) -> Any:
        return _short_form(raw)

    def apply(self, value: object) -> object:
        """The native filter value for a canonical one."""
        if isinstance(value, list):
            value = [self.values.get(v, v) if isinstance(v, str) else v for v in value]
        elif isinstance(value, str):
            value = self.values.get(value, value)
        if self.transform is Transform.JOIN and isinstance(value, list):
            return ", ".join(str(v) for v in value)
        if self.transform is Transform.BOOL_INT:
            return 1 if value else 0
        return value


class ReportMap(Frozen):
    """A standard report in one ERP: native name, fixed filters, parameter maps."""

    report: str
    native: str
    fixed: dict[str, JsonValue] = PydanticField(default_factory=dict)
    params: dict[str, ParamMap]
    # A report the ERP serves as a whitelisted method (a form's helper) rather than a query
    # report: its reply's ``rows`` holds one row per key, the key filling column ``key``.
    method: str | None = None
    rows: str = ""
    key: str = ""
    source: str = ""

    def native_filters(self, params: Mapping[str, object]) -> dict[str, object]:
        """Native filters for canonical parameter values (``None`` values are left out)."""
        filters: dict[str, object] = dict(self.fixed)
        for name, value in params.items():
            if value is None:
                continue
            pmap = self.params.get(name)
            if pmap is None:
                raise CatalogError(f"report {self.report!r} has no parameter {name!r}")
            filters[pmap.native] = pmap.apply(value)
        return filters


class ConnectorMaps(Frozen):
    """All native maps of one connector (``erpnext``). A ``partial`` connector maps only some
    fields of an entity; the rest are left out of its profile (so no tool offers them)."""

    name: str
    partial: bool = False
    entities: dict[str, EntityMap]
    reports: dict[str, ReportMap]
