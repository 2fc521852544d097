"""Tool descriptions and prompt rules, written for the model that chooses and calls the tools."""

from __future__ import annotations

from erp_agent.catalog import Entity, FieldType, Operation

WRITE_RULE = (
    "This prepares a proposal; the user must confirm it before anything changes in the ERP. "
    "Tell the user what will change and do not say it is done until they confirm."
)
LIST_RULE = "Rows from list are one page of records, not the whole set. "
COUNT_RULE = "Counts come from this tool, not from counting listed rows."
AGGREGATE_RULE = (
    "Totals, counts and averages come from this tool; never add up rows from list. "
    "Quote the figures as returned."
)
REPORT_RULE = (
    "Figures in a report are the ERP's own: quote them, never recompute or add them up yourself."
)


def _hints(entity: Entity) -> str:
    hints = []
    if entity.date_field:
        hints.append(f"periods ('this month', 'last year') filter on {entity.date_field}")
    if entity.amount_field:
        hints.append(f"'total'/'value' means {entity.amount_field}")
    if entity.status_field:
        values = ", ".join(entity.field(entity.status_field).values)
        hints.append(f"{entity.status_field} is one of {values}")
    return ("Hints: " + "; ".join(hints) + ".") if hints else ""


def _instead(entity: Entity) -> str:
    if entity.allows(Operation.AGGREGATE):
        return (
            f"For totals use {entity.name}.aggregate and for how many {entity.name}.count; "
            "never add up rows. "
        )
    return f"For how many use {entity.name}.count; never count rows. "


def _tables(entity: Entity) -> list[str]:
    return [n for n, f in entity.fields.items() if f.type is FieldType.TABLE]


def describe(entity: Entity, op: Operation) -> str:
    """The description of ``<entity>.<op>``: when to use it and what it returns."""
    name, label, plural = entity.name, entity.label, entity.plural
    about = entity.description.strip()
    tables = _tables(entity)
    texts = {
        Operation.LIST: (
            f"List {plural} with filters, sorting and paging. {about} Returns a page of rows "
            "(records, start, limit) and has_more; ask for the next page with start. "
            + _instead(entity)
            + _hints(entity)
        ),
        Operation.GET: (
            f"Get one {label} by its id, with all its fields"
            + (f" and its rows ({', '.join(tables)})" if tables else "")
            + f". Use when you know the id (from the user or {name}.list). Returns the record."
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
    if op is Operation.LIST:
        return LIST_RULE + _instead(entity).strip()
    if op is Operation.COUNT:
        return COUNT_RULE
    if op is Operation.AGGREGATE:
        return AGGREGATE_RULE
    if op is Operation.GET:
        return ""
    return WRITE_RULE
