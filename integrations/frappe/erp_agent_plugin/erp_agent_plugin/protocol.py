"""The relay protocol's allow-list: every call specification the erp-agent relay sends is
checked here before anything runs. Plain Python (no Frappe), so it is tested outside a bench.

A call spec is ``{"id": "c1", "method": "get_list", <the Frappe arguments of that method>}``.
Only the methods below exist; each takes only its own arguments, with names and shapes checked:
no arbitrary method names, no SQL (field, order and group expressions are column names or one
aggregate over a column), no file access. Writes run only inside a confirmation the user
started (``executor.run_turn``).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_SPEC_BYTES = 200_000

# method -> the arguments it may carry (all optional unless the method needs them)
METHODS: dict[str, frozenset[str]] = {
    "get_list": frozenset({"doctype", "fields", "filters", "or_filters", "order_by", "group_by", "limit_start", "limit_page_length"}),
    "get_count": frozenset({"doctype", "filters"}),
    "get_doc": frozenset({"doctype", "name"}),
    "get_value": frozenset({"doctype", "filters", "fieldname"}),
    "insert": frozenset({"doctype", "values"}),
    "update": frozenset({"doctype", "name", "values"}),
    "run_doc_method": frozenset({"doctype", "name", "action"}),
    "delete": frozenset({"doctype", "name"}),
    "run_report": frozenset({"report_name", "filters", "ignore_prepared_report"}),
    "report_access": frozenset({"report_name"}),
    "get_meta": frozenset({"doctype"}),
    "get_transitions": frozenset({"doc"}),
    "apply_workflow": frozenset({"doc", "action"}),
    "has_permission": frozenset({"doctype", "perm_type", "docname"}),
    "get_roles": frozenset({"uid"}),
    "get_versions": frozenset(),
    "whoami": frozenset(),
    "party_details": frozenset({"party", "party_type", "company", "doctype", "posting_date", "price_list"}),
    "item_details": frozenset({"args"}),
    "taxes_and_charges": frozenset({"master_doctype", "master_name"}),
    "payment_party_details": frozenset({"company", "party_type", "party", "date", "cost_center"}),
    "bank_cash_account": frozenset({"company", "account_type", "mode_of_payment", "account"}),
}  # fmt: skip
REQUIRED: dict[str, tuple[str, ...]] = {
    "get_list": ("doctype",), "get_count": ("doctype",), "get_doc": ("doctype", "name"),
    "get_value": ("doctype", "fieldname"), "insert": ("doctype", "values"),
    "update": ("doctype", "name", "values"), "run_doc_method": ("doctype", "name", "action"),
    "delete": ("doctype", "name"), "run_report": ("report_name",), "report_access": ("report_name",),
    "get_meta": ("doctype",), "get_transitions": ("doc",), "apply_workflow": ("doc", "action"),
    "has_permission": ("doctype",), "item_details": ("args",),
    "taxes_and_charges": ("master_doctype", "master_name"),
    "payment_party_details": ("company", "party_type", "party"), "bank_cash_account": ("company",),
}  # fmt: skip
WRITES = frozenset({"insert", "update", "run_doc_method", "delete", "apply_workflow"})
DOC_ACTIONS = frozenset({"submit", "cancel"})
PERM_TYPES = frozenset(
    {"read", "write", "create", "delete", "submit", "cancel", "report", "export"}
)
FILTER_OPS = frozenset({
    "=", "!=", "<", ">", "<=", ">=", "like", "not like", "in", "not in", "between", "is",
    "descendants of", "ancestors of", "not descendants of", "not ancestors of", "timespan",
})  # fmt: skip

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9 _&()'.-]{0,139}$")  # doctype and report names
_COL = r"[a-z_][a-z0-9_]*"
_FUNC = r"(?:sum|count|avg|min|max|year|month|quarter|day|date)"
_FIELD = re.compile(
    rf"^(?:{_COL}(?:\.{_COL})?|{_FUNC}\((?:\*|{_COL})\)(?: as {_COL})?|{_COL} as {_COL})$"
)
_ORDER = re.compile(rf"^{_COL}(?: (?:asc|desc))?$")
_DICT_FIELD_KEYS = frozenset(
    {"SUM", "COUNT", "AVG", "MIN", "MAX", "YEAR", "MONTH", "QUARTER", "DAY", "as"}
)


class SpecRefused(ValueError):
    """A call specification that is not on the allow-list; nothing of it was run."""


def check(spec: Any, *, writes_allowed: bool) -> dict[str, Any]:
    """The spec, checked; SpecRefused saying what is wrong otherwise."""
    if not isinstance(spec, dict):
        raise SpecRefused("a call spec must be a JSON object")
    if len(json.dumps(spec, default=str)) > MAX_SPEC_BYTES:
        raise SpecRefused("the call spec is too large")
    call_id, method = spec.get("id"), spec.get("method")
    if not isinstance(call_id, str) or not 0 < len(call_id) <= 64:
        raise SpecRefused("a call spec needs an id (a short string)")
    if method not in METHODS:
        raise SpecRefused(f"the method {method!r} is not allowed")
    args = {k: v for k, v in spec.items() if k not in ("id", "method")}
    unknown = set(args) - METHODS[method]
    if unknown:
        raise SpecRefused(f"{method} does not take {', '.join(sorted(unknown))}")
    missing = [k for k in REQUIRED.get(method, ()) if args.get(k) in (None, "")]
    if missing:
        raise SpecRefused(f"{method} needs {', '.join(missing)}")
    if method in WRITES and not writes_allowed:
        raise SpecRefused(f"{method} writes; writes run only when the user confirms a proposal")
    for key in ("doctype", "report_name", "master_doctype", "party_type"):
        if key in args and args[key] is not None and not _is_name(args[key]):
            raise SpecRefused(f"{key} {args[key]!r} is not a document type or report name")
    for key in ("name", "docname", "uid", "master_name", "party", "company"):
        if args.get(key) is not None and not _is_value(args[key]):
            raise SpecRefused(f"{key} must be a short text")
    _fields(args.get("fields"))
    for key in ("order_by", "group_by"):
        _clauses(key, args.get(key))
    for key in ("filters", "or_filters"):
        _filters(key, args.get(key))
    if method == "run_doc_method" and args["action"] not in DOC_ACTIONS:
        raise SpecRefused(f"run_doc_method may only {', '.join(sorted(DOC_ACTIONS))}")
    if args.get("perm_type") is not None and args["perm_type"] not in PERM_TYPES:
        raise SpecRefused(f"perm_type {args['perm_type']!r} is not a permission type")
    if "fieldname" in args:
        names = args["fieldname"] if isinstance(args["fieldname"], list) else [args["fieldname"]]
        if not all(isinstance(n, str) and re.fullmatch(_COL, n) for n in names):
            raise SpecRefused("fieldname must name columns")
    if "values" in args and not isinstance(args["values"], dict):
        raise SpecRefused("values must be an object")
    for key in ("limit_start", "limit_page_length"):
        if key in args and not (isinstance(args[key], int) and args[key] >= 0):
            raise SpecRefused(f"{key} must be a whole number")
    return spec


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_NAME.match(value))


def _is_value(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= 200 and not any(ord(c) < 32 for c in value)


def _fields(fields: Any) -> None:
    if fields is None:
        return
    if not isinstance(fields, list) or len(fields) > 100:
        raise SpecRefused("fields must be a list of column names")
    for field in fields:
        if isinstance(field, str) and _FIELD.match(field):
            continue
        if (
            isinstance(field, dict)
            and set(field) <= _DICT_FIELD_KEYS
            and all(
                isinstance(v, str) and (v == "*" or re.fullmatch(_COL, v)) for v in field.values()
            )
        ):
            continue
        raise SpecRefused(f"the field {field!r} is not a column or one aggregate of a column")


def _clauses(key: str, value: Any) -> None:
    if value is None:
        return
    parts = [p.strip() for p in value.split(",")] if isinstance(value, str) else None
    if not parts or not all(_ORDER.match(p) for p in parts):
        raise SpecRefused(f"{key} must list columns (with asc or desc)")


def _filters(key: str, filters: Any) -> None:
    if filters is None:
        return
    if isinstance(filters, str):
        try:
            filters = json.loads(filters)
        except ValueError as exc:
            raise SpecRefused(f"{key} is not JSON") from exc
    if isinstance(filters, dict):
        items = [
            [k, *(v if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) else ["=", v])]
            for k, v in filters.items()
        ]
    elif isinstance(filters, list):
        items = filters
    else:
        raise SpecRefused(f"{key} must be a list of [field, operator, value]")
    for item in items:
        if not isinstance(item, list) or len(item) not in (3, 4):
            raise SpecRefused(f"{key} must be a list of [field, operator, value]")
        field, op, value = item[-3], item[-2], item[-1]
        if len(item) == 4 and not _is_name(item[0]):
            raise SpecRefused(f"{key}: {item[0]!r} is not a document type")
        if not (isinstance(field, str) and re.fullmatch(_COL, field)):
            raise SpecRefused(f"{key}: {field!r} is not a column")
        if not (isinstance(op, str) and op.lower() in FILTER_OPS):
            raise SpecRefused(f"{key}: the operator {op!r} is not allowed")
        values = value if isinstance(value, list) else [value]
        if not all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
            raise SpecRefused(f"{key}: values must be text, numbers or lists of them")
