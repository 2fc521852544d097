"""Tool descriptions and prompt rules, written for the model that chooses and calls the tools."""

from __future__ import annotations

from erp_agent.catalog import Entity, FieldType, Operation

# Rules the core prompt states for every tool (figures come from tools and are quoted as
# returned; a write is only a proposal until the user confirms) are not repeated per tool.


def _hints(entity: Entity) -> str:
    hints = []
    if entity.date_field:
        hints.append(f"periods ('this month', 'last year') filter on {entity.date_field}")
    if entity.amount_field:
        amount = entity.field(entity.amount_field)
        label = f" ({amount.label})" if amount.label.lower() != amount.name else ""
        hints.append(f"'total'/'value' means {entity.amount_field}{label}")
    if entity.status_field:
        values = ", ".join(entity.field(entity.status_field).values)
        hints.append(f"{entity.status_field} is one of {values}")
    return ("Hints: " + "; ".join(hints) + ".") if hints else ""


def _instead(entity: Entity) -> str:
    """Where figures about these records come from. Only always-offered tools are named: a
    description never sends the model to a tool it may not have."""
    return "Totals and how many come from metrics.query, never from rows."


def _tables(entity: Entity) -> list[str]:
    return [n for n, f in entity.fields.items() if f.type is FieldType.TABLE]


def describe(entity: Entity, op: Operation) -> str:
    """The description of ``<entity>.<op>``: when to use it and what it returns."""
    label, plural = entity.label, entity.plural
    about = entity.description.strip()
    tables = _tables(entity)
    texts = {
        Operation.LIST: (
            f"List {plural} with filters, sorting and paging. {about} Returns one page of "
            "rows and has_more (the next page: start). " + _instead(entity) + " " + _hints(entity)
        ),
        Operation.GET: (
            f"Get one {label} by its id, with all its fields"
            + (f" and its rows ({', '.join(tables)})" if tables else "")
            + ". Use when you know the id (from the user or a list). Returns the record."
        ),
        Operation.COUNT: (
            f"Count {plural} matching filters. Returns the exact number as count. Use for "
            f"'how many'. {_hints(entity)}"
        ),
        Operation.AGGREGATE: (
            f"Exact totals, counts, averages, minimums and maximums over {plural}, computed by "
            "the ERP, optionally grouped by fields or by year/quarter/month of a date. Returns "
            "rows (one per group; each measure as <func>_<field>, count as count_records), "
            "record_count, and how it was computed. " + _hints(entity)
        ),
        Operation.CREATE: (
            f"Prepare a new {label} for the user to confirm. Give the fields you know; "
            "the ERP fills defaults and computes totals. Returns a proposal to show the user; "
            "nothing is saved until they confirm."
        ),
        Operation.UPDATE: (
            f"Prepare changes to an existing {label}: give its id and only the fields to change. "
            "The user sees each field's value before and after, and confirms. A table given in "
            "values replaces all its rows."
        ),
        Operation.SUBMIT: (
            f"Prepare submitting a draft {label}: it becomes final (and posts to the ledgers "
            "where it does). The user confirms; the ERP may still refuse, in its own words."
        ),
        Operation.CANCEL: (
            f"Prepare cancelling a submitted {label}: it stays on record as cancelled and its "
            "postings are reversed. The user confirms; the ERP refuses if other documents "
            "depend on it."
        ),
        Operation.DELETE: (
            f"Prepare deleting a {label} for good. Only drafts or unused records can be deleted; "
            "submitted documents are cancelled instead. The user confirms."
        ),
    }
    return " ".join(texts[op].split())


def rules(entity: Entity, op: Operation) -> str:
    """A tool's own rule, sent with it; what the core prompt says for every tool is not
    repeated (figures as returned, writes only as proposals)."""
    return ""
