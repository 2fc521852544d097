"""Canonical entities, modules and standard reports: what the engine and the model see."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Self

from pydantic import Field as PydanticField
from pydantic import model_validator

from erp_agent.catalog._base import Frozen
from erp_agent.catalog._spec import named
from erp_agent.catalog.fields import DATE_TYPES, NUMERIC_TYPES, Field, FieldType, ReportParam
from erp_agent.catalog.lifecycle import Lifecycle
from erp_agent.catalog.templates import format_value, placeholders, render
from erp_agent.errors import CatalogError


class Operation(StrEnum):
    """What a tool may do with an entity; the gateway still asks the ERP as the user."""

    LIST = "list"
    GET = "get"
    COUNT = "count"
    AGGREGATE = "aggregate"
    CREATE = "create"
    UPDATE = "update"
    SUBMIT = "submit"
    CANCEL = "cancel"
    DELETE = "delete"


WRITE_OPERATIONS = frozenset(
    {Operation.CREATE, Operation.UPDATE, Operation.SUBMIT, Operation.CANCEL, Operation.DELETE}
)


class EntityKind(StrEnum):
    """Masters are edited in place, transactions go draft -> submitted -> cancelled, and
    ledgers are written only by the ERP when a transaction posts."""

    MASTER = "master"
    TRANSACTION = "transaction"
    LEDGER = "ledger"


_NOT_ALLOWED = {
    EntityKind.MASTER: frozenset({Operation.SUBMIT, Operation.CANCEL}),
    EntityKind.LEDGER: WRITE_OPERATIONS,
    EntityKind.TRANSACTION: frozenset[Operation](),
}


class Entity(Frozen):
    """A canonical business object (``sales_invoice``), independent of any ERP's names.

    ``modules[0]`` is the module whose data file declares it. ``date_field`` is what "this
    quarter" filters on, ``amount_field`` what "revenue"/"total" sums, ``status_field`` what
    "open"/"overdue" filters on.
    """

    name: str
    label: str
    plural: str
    description: str
    kind: EntityKind
    modules: tuple[str, ...] = PydanticField(min_length=1)
    keywords: tuple[str, ...] = PydanticField(min_length=1)
    synonyms: tuple[str, ...] = ()
    operations: tuple[Operation, ...] = PydanticField(min_length=1)
    fields: dict[str, Field]
    date_field: str | None = None
    amount_field: str | None = None
    status_field: str | None = None
    fact_card: str
    # draft -> booked -> cancelled (data/common.yaml); every transaction has one
    lifecycle: Lifecycle | None = None
    source: str = ""

    @model_validator(mode="before")
    @classmethod
    def _name_fields(cls, raw: Any) -> Any:
        if isinstance(raw, dict) and "fields" in raw:
            return {**raw, "fields": named(raw["fields"])}
        return raw

    @model_validator(mode="after")
    def _check(self) -> Self:
        if len(set(self.operations)) != len(self.operations):
            raise ValueError("operations are listed twice")
        forbidden = sorted(set(self.operations) & _NOT_ALLOWED[self.kind])
        if forbidden:
            raise ValueError(f"a {self.kind} cannot allow {', '.join(forbidden)}")
        if (Operation.CANCEL in self.operations) and Operation.SUBMIT not in self.operations:
            raise ValueError("'cancel' needs 'submit': only submitted documents are cancelled")
        if self.lifecycle is not None and self.lifecycle.field not in self.fields:
            raise ValueError(f"lifecycle field {self.lifecycle.field!r} is not a field")
        if sum(f.identifier for f in self.fields.values()) != 1:
            raise ValueError("exactly one field must be the identifier ('id' flag)")
        self._check_hint("date_field", self.date_field, DATE_TYPES)
        self._check_hint("amount_field", self.amount_field, NUMERIC_TYPES)
        self._check_hint("status_field", self.status_field, frozenset({FieldType.ENUM}))
        for name in placeholders(self.fact_card):
            field = self.fields.get(name)
            if field is None:
                raise ValueError(f"fact_card uses unknown field {{{name}}}")
            if not field.is_scalar:
                raise ValueError(f"fact_card uses table field {{{name}}}; use scalar fields")
        return self

    def _check_hint(self, hint: str, name: str | None, types: frozenset[FieldType]) -> None:
        if name is None:
            return
        field = self.fields.get(name)
        if field is None:
            raise ValueError(f"{hint} {name!r} is not a field of this entity")
        if field.type not in types:
            allowed = "/".join(sorted(types))
            raise ValueError(f"{hint} {name!r} is {field.type}; it must be {allowed}")

    def field(self, name: str) -> Field:
        """The field called ``name``; ``CatalogError`` naming the known ones if absent."""
        try:
            return self.fields[name]
        except KeyError:
            known = ", ".join(self.fields)
            raise CatalogError(
                f"entity {self.name!r} has no field {name!r} (fields: {known})"
            ) from None

    def allows(self, operation: Operation | str) -> bool:
        """Whether the catalog offers this operation on the entity at all."""
        return Operation(operation) in self.operations

    @property
    def identifier(self) -> Field:
        """The field holding the record's id in the ERP."""
        return next(f for f in self.fields.values() if f.identifier)

    @property
    def title_field(self) -> Field | None:
        """The human-readable name of a record, if it has one besides its id."""
        return next((f for f in self.fields.values() if f.title), None)

    def render_fact_card(self, record: Mapping[str, object]) -> str:
        """One self-contained sentence about a canonical record (absent values show ``n/a``)."""
        # A connector that does not map a field the card names (catalog_for drops it) shows n/a.
        texts = {
            name: format_value(record.get(name), self.fields[name].type)
            if name in self.fields
            else "n/a"
            for name in placeholders(self.fact_card)
        }
        return render(self.fact_card, texts)


class Module(Frozen):
    """A functional area; routing picks modules first, then offers their entities and reports.

    ``related`` modules load with this one (a CRM question about invoices also needs selling).
    """

    name: str
    label: str
    description: str
    keywords: tuple[str, ...] = PydanticField(min_length=1)
    related: tuple[str, ...] = ()
    source: str = ""


class ReportFallback(Frozen):
    """The metric that answers what a report is asked, over documents the user may read, when
    the ERP will not let them run the report. Arguments carry over by name: a parameter named
    like a dimension of the metric filters by it, ``from_date``/``to_date`` are its period and
    ``as_of_date`` its day; it is grouped by ``group_by``, or by the value of the parameter
    ``group_by_param`` ("tree_type: customer"); ``metric_by`` picks another metric for a
    parameter's value ("based_on: sales_order" is the value of sales orders)."""

    metric: str
    metric_by: dict[str, dict[str, str]] = PydanticField(default_factory=dict)
    group_by: tuple[str, ...] = ()
    group_by_param: str | None = None


class Report(Frozen):
    """A standard ERP report with canonical, strictly typed parameters.

    ``display`` names the report's own columns (as every connector hands them over) that a
    table shows first, in that order; the rest are a "more columns" away."""

    name: str
    label: str
    description: str
    module: str
    keywords: tuple[str, ...] = PydanticField(min_length=1)
    entity: str | None = None
    params: dict[str, ReportParam]
    display: tuple[str, ...] = ()
    fallback: ReportFallback | None = None
    source: str = ""

    @model_validator(mode="before")
    @classmethod
    def _name_params(cls, raw: Any) -> Any:
        if isinstance(raw, dict) and "params" in raw:
            return {**raw, "params": named(raw["params"])}
        return raw

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the parameters a caller must give."""
        return tuple(p.name for p in self.params.values() if p.required and p.default is None)
