"""Document: one record by its id, its state, amounts and the fields the question names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import Entity, FieldType
from erp_agent.planner.answer import fmt, is_number
from erp_agent.planner.steps import (
    Call,
    Ctx,
    Step,
    call,
    failed,
    hand_over,
    missing_tool,
    rows_of,
    say,
)


def handle(ctx: Ctx) -> Step:
    e, doc_id = ctx.req.doc_ids[0]
    name = f"{e.name}.get"
    if not ctx.has(name):
        if ctx.has("records.search"):
            return hand_over("find")
        return missing_tool(ctx, e, "get")
    r = ctx.result(name, {"id": doc_id})
    if r is None:
        return call(name, {"id": doc_id})
    said = ""
    if not r.ok and r.status == "erp_refused":
        # Not our number: perhaps the other party's ("bill INV-44035" is the supplier's own
        # invoice number, kept on our Purchase Invoice).
        found, step = _by_reference(ctx, e, doc_id)
        if step is not None:
            return step
        for other in _kept_by_others(ctx, e, doc_id) if found is None else ():
            # "Their PO PO-31346" is the customer's purchase order: the number our sales
            # order keeps for it.
            found, step = _by_reference(ctx, other, doc_id, e)
            if step is not None:
                return step
            if found is not None:
                e, name = other, f"{other.name}.get"
                break
        if found is None:
            return say(
                f"No records found for {e.label} {doc_id} that you can see. The ERP said: {r.message}"
            )
        field, ours = found
        said = f" ({e.fields[field].label.lower()} {doc_id})"
        doc_id = ours
        r = ctx.result(name, {"id": doc_id})
        if r is None:
            return call(name, {"id": doc_id})
    if not r.ok:
        return failed(r)
    row = r.data if isinstance(r.data, dict) else {}
    parts: list[str] = []
    if e.status_field and row.get(e.status_field):
        parts.append(f"status {row[e.status_field]}")
    if row.get("workflow_state"):
        parts.append(f"workflow state {row['workflow_state']}")
    if e.amount_field and is_number(row.get(e.amount_field)):
        cur = f"{row['currency']} " if row.get("currency") else ""
        parts.append(f"{e.fields[e.amount_field].label.lower()} {cur}{fmt(row[e.amount_field])}")
    if is_number(row.get("outstanding")):
        parts.append(f"outstanding {fmt(row['outstanding'])}")
    for fname in ctx.req.fields_asked:
        value = row.get(fname)
        label = e.fields[fname].label.lower()
        if (
            value is not None
            and not isinstance(value, (list, dict))
            and label not in " ".join(parts)
        ):
            parts.append(f"{label} {fmt(value)}")
    parts += _standing(e, row, parts)
    text = f"{e.label} {doc_id}{said}: " + ", ".join(parts)
    return say(text if text.endswith(".") else text + ".")


_PROGRESS = re.compile(r"^(?:%|per)\s*")


def _standing(e: Entity, row: Mapping[str, Any], shown: list[str]) -> list[str]:
    """How far the document has come (received, billed, delivered) and whose it is."""
    out: list[str] = []
    for fname, f in e.fields.items():
        value = row.get(fname)
        if f.type is FieldType.PERCENT and fname.startswith("per_") and is_number(value):
            out.append(f"{_PROGRESS.sub('', f.label.lower())} {fmt(value)}%")
    for fname in ("due_date", "customer_name", "supplier_name", "party"):
        said = " ".join([*shown, *out])
        if row.get(fname) and fname.replace("_", " ") not in said and str(row[fname]) not in said:
            out.append(f"{fname.replace('_', ' ')} {row[fname]}")
    return out


def _kept_by_others(ctx: Ctx, e: Entity, ref: str) -> list[Entity]:
    """The kinds of record that keep another party's number for a record of kind ``e``, or
    of what the user calls it ("their invoice no. INV-1", "cheque CHE-1"): sales orders keep
    the customer's purchase order number, payments the cheque's."""
    terms = {e.label.lower(), e.label.split()[-1].lower(), *_called(ctx.req.text, ref)}
    return [
        other
        for other in ctx.catalog.entities.values()
        if other is not e and ctx.has(f"{other.name}.get") and _reference_fields(other, terms)
    ]


def _called(text: str, ref: str) -> list[str]:
    """The word the user calls a number by, just before it ("cheque", "invoice no.")."""
    before = text[: text.find(ref)].lower() if ref in text else ""
    words = [w for w in re.findall(r"[a-z]+", before)[-3:] if w not in _NUMBER_LABELS]
    return words[-1:]


_NUMBER_LABELS = frozenset(["no", "number", "num", "ref", "reference", "their", "our", "the", "id"])


def _reference_fields(e: Entity, terms: set[str] | None = None) -> list[str]:
    """The reference fields of ``e`` (another party's number); with ``terms``, those whose
    description says they hold such a number."""
    return [
        n
        for n, f in e.fields.items()
        if f.filterable and f.type.value == "string" and n.endswith(("_no", "_po"))
        and (terms is None or any(re.search(rf"\b{re.escape(t)}\b", f.description.lower())
                                  for t in terms))
    ]  # fmt: skip


def _by_reference(
    ctx: Ctx, e: Entity, ref: str, of: Entity | None = None
) -> tuple[tuple[str, str] | None, Step | None]:
    """(field, our id) of the record whose reference field holds ``ref`` (the supplier's
    invoice number, the customer's PO number), or the look-ups still to make."""
    terms = None if of is None else {of.label.lower(), of.label.split()[-1].lower(),
                                     *_called(ctx.req.text, ref)}  # fmt: skip
    fields = _reference_fields(e, terms)
    if not fields or not ctx.has(f"{e.name}.list"):
        return None, None
    calls = [Call(f"{e.name}.list", {"filters": [{"field": f, "op": "=", "value": ref}],
                                     "fields": ["id"], "limit": 2}) for f in fields]  # fmt: skip
    pending = [c for c in calls if ctx.result(c.name, c.args) is None]
    if pending:
        return None, Step(calls=pending)
    for c, field in zip(calls, fields, strict=True):
        got = ctx.result(c.name, c.args)
        rows = rows_of(got) if got is not None and got.ok else []
        if len(rows) == 1 and rows[0].get("id"):
            return (field, str(rows[0]["id"])), None
    return None, None
