"""Canonical ↔ Tryton for one entity: the fields to read, rows to canonical records, and
canonical filters to Tryton domains (the ERP's own search syntax, so its rules apply).

Conventions of the maps (catalog/maps/tryton/_common.yaml): a Many2One is read and filtered by
its target's ``rec_name``; a dotted native is a field of the linked record; a native starting
with ``=`` is computed here from Tryton's own figures; the lifecycle field carries the
canonical code and the native state is kept beside it under ``state``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from erp_agent.catalog import Catalog, Entity
from erp_agent.catalog.lifecycle import Lifecycle, LifecycleMap
from erp_agent.catalog.maps import EntityMap, FieldMap
from erp_agent.connectors.query import Filter, Op
from erp_agent.errors import CatalogError, ErpRefusal, Refusal

Domain = list[Any]
NATIVE_STATE = "state"  # the key a record keeps Tryton's own state under
_OPS = {Op.EQ: "=", Op.NE: "!=", Op.GT: ">", Op.GE: ">=", Op.LT: "<", Op.LE: "<=",
        Op.LIKE: "ilike", Op.NOT_LIKE: "not ilike", Op.IN: "in", Op.NOT_IN: "not in",
        Op.DESCENDANTS_OF: "child_of", Op.ANCESTORS_OF: "parent_of"}  # fmt: skip
_RELATIONS = frozenset({"many2one", "one2many", "many2many", "reference"})


def refuse(message: str, exc_type: str = "ValidationError", status: int = 417) -> ErpRefusal:
    return ErpRefusal(Refusal(message, exc_type, status, [message]))


def plain(value: Any) -> Any:
    """A value read from Tryton in the shape canonical records carry."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def coerce(ftype: str | None, value: Any) -> Any:
    """A canonical value as Tryton expects it for a field of ``ftype``."""
    if value is None or isinstance(value, list | tuple):
        return [coerce(ftype, v) for v in value] if isinstance(value, list | tuple) else value
    try:
        if ftype == "date" and isinstance(value, str):
            return dt.date.fromisoformat(value[:10])
        if ftype in ("datetime", "timestamp") and isinstance(value, str):
            return dt.datetime.fromisoformat(value)
        if ftype == "numeric" and not isinstance(value, bool):
            return Decimal(str(value))
        if ftype == "integer" and isinstance(value, str) and value.lstrip("-").isdigit():
            return int(value)
        if ftype == "float" and isinstance(value, str):
            return float(value)
    except (ValueError, ArithmeticError):  # decimal.InvalidOperation is an ArithmeticError
        raise refuse(f"{value!r} is not a valid {ftype}.") from None
    return value


@dataclass
class Native:
    """One canonical entity as Tryton keeps it."""

    entity: Entity
    emap: EntityMap
    fields: Mapping[str, dict[str, Any]]  # fields_get of the model (metadata, any user)

    @property
    def model(self) -> str:
        return self.emap.doctype

    @property
    def lifecycle(self) -> tuple[Lifecycle, LifecycleMap] | None:
        if self.entity.lifecycle is None or self.emap.lifecycle is None:
            return None
        return self.entity.lifecycle, self.emap.lifecycle

    def mapped(self) -> list[str]:
        """The canonical fields this entity maps (tables included)."""
        return [n for n in self.emap.fields if n in self.entity.fields]

    def scalars(self) -> list[str]:
        return [n for n in self.mapped() if not self.emap.fields[n].fields]

    def fmap(self, name: str) -> FieldMap:
        fmap = self.emap.fields.get(name)
        if fmap is None or name not in self.entity.fields:
            raise CatalogError(f"entity {self.entity.name!r} has no field {name!r} in Tryton")
        return fmap

    def searchable(self, native: str) -> bool:
        """Whether Tryton can search on ``native`` (a Function field without a searcher
        cannot: the connector then applies the condition to the rows it reads)."""
        head = native.split(".")[0]
        return bool(self.fields.get(head, {}).get("searchable", True))

    def post_filter(self, flt: Filter) -> bool:
        """Whether ``flt`` is applied to the rows read rather than sent to Tryton."""
        head = flt.field.partition(".")[0]
        if "." in flt.field or head not in self.emap.fields:
            return False
        native = self.emap.fields[head].native
        if native == "=credit_note":
            return flt.op not in (Op.EQ, Op.NE)
        return native.startswith("=") or not self.searchable(native)

    def ftype(self, native: str) -> str | None:
        head = native.split(".")[0]
        return str(self.fields.get(head, {}).get("type") or "") or None

    # ---------------------------------------------------------------- reading

    def read_fields(self, names: Sequence[str]) -> list[str]:
        """The native field names to ask ``search_read`` for, to build ``names``."""
        out = ["id", "_timestamp"]
        for name in names:
            fmap = self.fmap(name)
            native = fmap.native
            if fmap.fields:
                continue  # tables are read on their own
            if native == "=credit_note":
                out.append("total_amount")
            elif native == "=due_date":
                out += ["lines_to_pay.maturity_date", "payment_term_date"]
            elif native == "=invoice_status":
                out += ["state", "total_amount", "amount_to_pay", "lines_to_pay.maturity_date",
                        "payment_term_date"]  # fmt: skip
            elif native.startswith("="):
                out += ["currency", "company.currency", "total_amount", "untaxed_amount", "type"]
            elif "." in native:
                out.append(native)
            elif self.ftype(native) in _RELATIONS:
                out += [native, f"{native}.rec_name"]
            else:
                out.append(native)
            if name == "modified":
                out.append("create_date")
        return list(dict.fromkeys(out))

    def to_record(self, row: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
        record: dict[str, Any] = {}
        for name in names:
            fmap = self.fmap(name)
            if fmap.fields:
                continue
            record[name] = self.value(row, name, fmap.native)
        if "id" not in record:
            record["id"] = row.get("id")
        life = self.lifecycle
        if life is not None and life[0].field in record:
            record[NATIVE_STATE] = row.get(life[1].field)
        return record

    def value(self, row: Mapping[str, Any], name: str, native: str) -> Any:
        life = self.lifecycle
        if life is not None and name == life[0].field:
            return life[1].canonical(life[0], row.get(life[1].field))
        if native == "=credit_note":
            total = row.get("total_amount")
            return isinstance(total, Decimal) and total < 0
        if native == "=invoice_status":
            return invoice_status(row, self.value(row, "due_date", "=due_date"))
        if native == "=due_date":
            # The earliest maturity of the lines to pay (a posted invoice's own due dates);
            # a draft has none yet, only the payment term date the user may have set.
            lines = row.get("lines_to_pay.") or []
            dates = [ln["maturity_date"] for ln in lines if ln.get("maturity_date")]
            return plain(min(dates) if dates else row.get("payment_term_date"))
        if native.startswith("="):
            return plain(company_amount(row, native))
        if name == "modified":
            return plain(row.get("write_date") or row.get("create_date"))
        if "." in native:
            head, _, attr = native.partition(".")
            linked = row.get(f"{head}.")
            return plain(linked.get(attr)) if isinstance(linked, Mapping) else None
        if self.ftype(native) in _RELATIONS and row.get(native) is not None:
            linked = row.get(f"{native}.")
            return linked.get("rec_name") if isinstance(linked, Mapping) else row.get(native)
        return plain(row.get(native))

    # ---------------------------------------------------------------- filtering

    def domain(self, filters: Sequence[Filter]) -> Domain:
        """The entity's own domain and every canonical filter, in Tryton's syntax."""
        out: Domain = [list(c) if isinstance(c, list) else c for c in self.emap.domain]
        for flt in filters:
            out += self.clause(flt)
        return out

    def clause(self, flt: Filter) -> Domain:
        head, _, rest = flt.field.partition(".")
        fmap = self.fmap(head)
        ftype: str | None
        if rest:  # a table row's field: items.item -> lines.product
            row = fmap.fields.get(rest)
            if row is None:
                raise CatalogError(f"table {head!r} has no field {rest!r} in Tryton")
            native, ftype = f"{fmap.native}.{row.native}", None
            if isinstance(flt.value, str) or _strings(flt.value):
                native += ".rec_name"
        else:
            native, ftype = fmap.native, self.ftype(fmap.native)
        life = self.lifecycle
        if life is not None and head == life[0].field:
            return [self._lifecycle(flt, *life)]
        if native == "=credit_note" and flt.op in (Op.EQ, Op.NE):
            # Tryton's own word: an invoice whose total is negative is a credit note.
            negative = bool(flt.value) == (flt.op is Op.EQ)
            return [("total_amount", "<" if negative else ">=", Decimal(0))]
        if native.startswith("=") or not self.searchable(native):
            label = self.entity.field(head).label
            raise refuse(f"Tryton cannot search on {label}; ask without that condition.")
        if ftype in _RELATIONS and (isinstance(flt.value, str) or _strings(flt.value)):
            native, ftype = f"{native}.rec_name", "char"
        elif native == "create_uid.login":
            ftype = "char"
        if flt.op is Op.BETWEEN:
            low, high = list(flt.value)
            return [(native, ">=", coerce(ftype, low)), (native, "<=", coerce(ftype, high))]
        if flt.op is Op.IS_SET:
            return [(native, "!=", None)]
        if flt.op is Op.IS_NOT_SET:
            return [(native, "=", None)]
        value = flt.value
        if flt.op in (Op.IN, Op.NOT_IN) and not isinstance(value, list | tuple):
            value = [value]  # "in 5" means "in [5]"
        return [(native, _OPS[flt.op], coerce(ftype, value))]

    def _lifecycle(self, flt: Filter, lifecycle: Lifecycle, lmap: LifecycleMap) -> tuple[Any, ...]:
        codes = [s.code for s in lifecycle.states.values()]
        values = flt.value if isinstance(flt.value, list | tuple) else [flt.value]
        wanted = [int(v) for v in values if str(v).lstrip("-").isdigit()]
        tests: dict[Op, Callable[[int], bool]] = {
            Op.EQ: lambda c: c in wanted, Op.IN: lambda c: c in wanted,
            Op.NE: lambda c: c not in wanted, Op.NOT_IN: lambda c: c not in wanted,
            Op.LT: lambda c: c < wanted[0], Op.LE: lambda c: c <= wanted[0],
            Op.GT: lambda c: c > wanted[0], Op.GE: lambda c: c >= wanted[0],
        }  # fmt: skip
        test = tests.get(flt.op)
        if test is None or not wanted:
            raise refuse(f"The document status cannot be filtered with {flt.op.value!r}.")
        return (lmap.field, "in", lmap.native(lifecycle, [c for c in codes if test(c)]))


def _strings(value: Any) -> bool:
    return (
        isinstance(value, list | tuple) and bool(value) and all(isinstance(v, str) for v in value)
    )


def invoice_status(row: Mapping[str, Any], due: Any, today: dt.date | None = None) -> str:
    """An invoice's status in the catalog's words, from Tryton's own state and amounts: a
    credit note is a Return, a posted invoice with something to pay is Unpaid (Partly Paid once
    some of it is paid, Overdue once its due date has passed, by Tryton's server day)."""
    state = row.get("state")
    if state in ("draft", "validated"):
        return "Draft"
    if state == "cancelled":
        return "Cancelled"
    total = row.get("total_amount")
    if isinstance(total, Decimal) and total < 0:
        return "Return"
    to_pay = row.get("amount_to_pay")
    if state == "paid" or not isinstance(to_pay, Decimal) or to_pay <= 0:
        return "Paid"
    if due is not None and str(due) < (today or dt.date.today()).isoformat():
        return "Overdue"
    return "Partly Paid" if isinstance(total, Decimal) and to_pay < total else "Unpaid"


def company_amount(row: Mapping[str, Any], native: str) -> Decimal | None:
    """An invoice amount in the company currency, as Tryton keeps it: the amount itself when
    the invoice is in the company currency; otherwise read from its move (``lines_to_pay``,
    filled in by the connector) — None when a draft has no move yet."""
    company = row.get("company.")
    company_currency = company.get("currency") if isinstance(company, Mapping) else None
    amount = row.get("untaxed_amount" if native == "=company_untaxed" else "total_amount")
    if company_currency is not None and row.get("currency") == company_currency:
        return amount if isinstance(amount, Decimal) else None
    moved = row.get("_company_total")
    if native == "=company_total" and isinstance(moved, Decimal):
        return moved
    return None


def native_values(native: Native, values: Mapping[str, Any]) -> dict[str, Any]:
    """Canonical scalar values in Tryton's names (relations still as names: resolved later)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name in ("id", "modified", "created", "created_by") or value is None:
            continue
        fmap = native.fmap(name)
        if fmap.fields or fmap.native.startswith("=") or "." in fmap.native:
            continue
        life = native.lifecycle
        if life is not None and name == life[0].field:
            continue  # states change through buttons, never by writing them
        out[fmap.native] = coerce(native.ftype(fmap.native), value)
    return out


def entity_for(catalog: Catalog, maps: Mapping[str, EntityMap], entity: str) -> tuple[Entity, EntityMap]:  # fmt: skip
    spec = catalog.entity(entity)
    emap = maps.get(entity)
    if emap is None:
        raise CatalogError(f"the tryton connector does not map entity {entity!r}")
    return spec, emap
