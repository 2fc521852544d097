"""Which documents a read counts, and the ``definition`` every figure-bearing result carries.

Business figures count submitted documents (docstatus = 1): drafts are not transactions yet and
cancelled ones never happened. Reads over transactions default to that unless the request asks
for drafts, cancelled or all documents, or filters the docstatus/status itself; the result says
which statuses were included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from erp_agent.catalog import Entity
from erp_agent.connectors.query import Filter, Op
from erp_agent.tools.base import Definition
from erp_agent.tools.factories.schemas import Schema

DOCUMENTS = {"submitted": 1, "draft": 0, "cancelled": 2, "all": None}
_NAMES = {0: "draft", 1: "submitted", 2: "cancelled"}


def documents_schema(entity: Entity) -> Schema:
    return {
        "type": "string",
        "enum": list(DOCUMENTS),
        "default": "submitted",
        "description": f"Which {entity.plural} count: submitted (default; drafts and cancelled "
        "left out, as the ERP's reports count), draft, cancelled, or all. Ignored when you "
        "filter docstatus or status yourself.",
    }


def state_field(entity: Entity) -> str:
    """The canonical field carrying the entity's lifecycle state (catalog ``lifecycle:``)."""
    return entity.lifecycle.field if entity.lifecycle is not None else "docstatus"


def has_documents(entity: Entity) -> bool:
    """Whether the entity's records go draft -> submitted (booked) -> cancelled."""
    return state_field(entity) in entity.fields


States = Callable[[str, int], tuple[str, str]]  # Connector.document_state


def _canonical_state(entity: str, docstatus: int) -> tuple[str, str]:
    return _NAMES.get(docstatus, str(docstatus)), f"docstatus = {docstatus}"


def documents_text(entity: Entity, status: int | None, states: States | None = None) -> str:
    """Which documents were counted, in the system's own words (its state names and stored
    condition: "docstatus = 1" in ERPNext, "stage = 'posted'" in a bespoke database)."""
    state = states or _canonical_state
    if status is None:
        words = [state(entity.name, d) for d in (0, 1, 2)]
        names = f"{words[0][0]}s, {words[1][0]} and {words[2][0]}"
        conditions = "; ".join(w[1] for w in words)
        return f"all {entity.plural}: {names} ({conditions})"
    name, condition = state(entity.name, status)
    if status == 1:
        draft, cancelled = state(entity.name, 0)[0], state(entity.name, 2)[0]
        drafts = draft if " " in draft else f"{draft}s"  # "draft or validated" stays as said
        return f"{name} {entity.plural} only ({condition}); {drafts} and {cancelled} excluded"
    return f"{name} {entity.plural} only ({condition})"


def scope(
    entity: Entity, filters: Sequence[Filter], documents: str | None, states: States | None = None
) -> tuple[list[Filter], str | None]:
    """``filters`` plus the docstatus the request means, and a sentence saying which statuses
    were included (None for entities without documents)."""
    out = list(filters)
    if not has_documents(entity):
        return out, None
    own = [f for f in out if f.field in (state_field(entity), entity.status_field)]
    if own:
        said = "; ".join(filter_text(entity, f) for f in own)
        return out, f"{entity.plural} with the statuses filtered ({said})"
    status = DOCUMENTS.get(documents or "submitted", 1)
    if status is not None:
        out.append(Filter(state_field(entity), Op.EQ, status))
    return out, documents_text(entity, status, states)


def filter_text(entity: Entity, flt: Filter) -> str:
    field = entity.fields.get(flt.field.split(".")[0])
    label = field.label.lower() if field is not None else flt.field
    if "." in flt.field and field is not None:
        child = field.fields.get(flt.field.split(".", 1)[1])
        label += f" {child.label.lower()}" if child is not None else ""
    if flt.op in (Op.IS_SET, Op.IS_NOT_SET):
        return f"{label} {flt.op.value}"
    value = flt.value
    if flt.op is Op.BETWEEN and isinstance(value, list) and len(value) == 2:
        return f"{label} between {value[0]} and {value[1]}"
    shown = ", ".join(map(str, value)) if isinstance(value, list) else value
    return f"{label} {flt.op.value} {shown}"


def definition(
    entity: Entity,
    text: str,
    filters: Sequence[Filter],
    statement: str | None,
    record_count: int | None,
    source: str,
) -> Definition:
    """The definition block of a figure-bearing entity result (the brief's contract)."""
    words = [statement] if statement else []
    words += [
        filter_text(entity, f)
        for f in filters
        if not (statement and f.field == state_field(entity) and f.op is Op.EQ)
    ]
    period = next(
        (
            filter_text(entity, f)
            for f in filters
            if entity.date_field and f.field == entity.date_field
        ),
        None,
    )
    return {
        "text": text,
        "filters": words,
        "period": period,
        "record_count": record_count,
        "source": source,
    }
