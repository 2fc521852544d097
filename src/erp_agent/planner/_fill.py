"""Arguments for a tool the planner only knows by its schema (analytics, search, workflow
modules written elsewhere): map named slots onto the schema's properties, or give up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Property names a slot may appear under, most specific first.
ALIASES: dict[str, tuple[str, ...]] = {
    "query": ("query", "q", "text", "question", "search"),
    "entity": ("entity", "doctype", "source", "dataset"),
    "id": ("id", "document", "document_id", "record_id", "name"),
    "measure": ("measure", "field", "value_field", "amount_field", "value", "metric"),
    "date_field": ("date_field", "date", "time_field"),
    "from_date": ("from_date", "start", "start_date", "date_from", "since"),
    "to_date": ("to_date", "end", "end_date", "date_to", "until"),
    "as_of": ("as_of_date", "as_of", "date"),
    "period": ("period", "periodicity", "freq", "frequency", "interval", "granularity", "bucket"),
    "group_by": ("group_by", "by", "dimension", "group", "party_field"),
    "top": ("top_n", "top", "n", "limit", "k"),
    "filters": ("filters", "where"),
    "horizon": ("months_ahead", "horizon", "periods", "steps", "ahead"),
    "side": ("side",),
    "company": ("company",),
}


def _coerce(value: Any, prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "array" in kinds and not isinstance(value, list):
        value = [value]
    if "integer" in kinds and isinstance(value, str) and value.isdigit():
        value = int(value)
    enum = prop.get("enum")
    if enum is not None and value not in enum:
        # month vs monthly: accept a close spelling the schema lists
        close = [
            e for e in enum if isinstance(e, str) and isinstance(value, str) and e.startswith(value)
        ]
        if not close:
            raise ValueError(value)
        value = close[0]
    return value


def fill(schema: Mapping[str, Any], slots: Mapping[str, Any]) -> dict[str, Any] | None:
    """Arguments for ``schema`` from ``slots``; None when a required property stays empty."""
    props: Mapping[str, Any] = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for slot, value in slots.items():
        if value is None or value == [] or value == "":
            continue
        for prop_name in ALIASES.get(slot, (slot,)):
            if prop_name in props and prop_name not in args:
                try:
                    args[prop_name] = _coerce(value, props[prop_name])
                except (ValueError, TypeError):
                    continue
                break
    missing = [r for r in schema.get("required") or () if r not in args]
    return None if missing else args
