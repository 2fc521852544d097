"""Which columns a table shows when nobody named them, the same rule on every channel (the web
app, the terminal, markdown for MCP and the OpenAI-compatible API):

- a list of records shows its entity's title fields first, read from the catalog: the party by
  name (not its code), the date, the date it is due, the amount, what is outstanding, the status
  in words, then the record's id (its link);
- a report that lists records shows the columns its catalog entry lists under ``display``
  first, then its own; a statement or a figure (no ``display``) shows all its columns, periods
  and all, in its own order;
- a list never shows more than ``MAX_COLUMNS`` at first: the others are one "more columns" away
  (a control in the web app, a hint in text); columns that are empty on every row, repeat
  another column, or only serve the ERP's bookkeeping (document status codes,
  created/modified) come last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from erp_agent.catalog import Catalog, Entity
from erp_agent.catalog.fields import FieldType
from erp_agent.results.blocks import MoreColumn, TableBlock
from erp_agent.results.presentation import currencies

MAX_COLUMNS = 7
# Columns a report or a result carries for its own layout: shown only when asked for by name.
INTERNAL_COLUMNS = frozenset({
    "indent", "is_group", "parent_account", "year_start_date", "year_end_date", "opening_balance",
    "account_name", "include_in_gross", "has_value", "lft", "rgt", "warn_if_negative", "_values",
    "others", "bold",
})  # fmt: skip
# The ERP's bookkeeping on every record: behind "more columns", never first.
_BOOKKEEPING = ("docstatus", "created", "modified", "created_by")
# The date a document is due by, when it has one besides its own date.
_DEADLINES = ("due_date", "valid_till", "delivery_date", "required_by", "expected_closing")
# The party-like links whose name a list shows instead of their code.
_NOT_PARTIES = ("company", "currency", "uom", "price_list")


@dataclass(frozen=True)
class Layout:
    """The columns shown first, the others the user can expand to, and the column whose cells
    link to the record's page (its id, or the first column when the id is not shown)."""

    shown: list[str]
    more: list[str]
    link: str | None = None


def _keys(rows: Sequence[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def _empty(key: str, rows: Sequence[dict[str, Any]]) -> bool:
    return bool(rows) and all(r.get(key) in (None, "", []) for r in rows)


def _repeats(key: str, chosen: Sequence[str], rows: Sequence[dict[str, Any]]) -> bool:
    """The column's words are an already chosen column's, on every row ("Customer Name" beside
    "Party"); amounts that happen to be equal are different figures and never repeat."""
    if not rows or any(isinstance(r.get(key), int | float) for r in rows):
        return False
    return any(all(r.get(key) == r.get(c) for r in rows) for c in chosen)


def _tidy(
    first: Sequence[str], rest: Sequence[str], rows: Sequence[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """The columns in order, and the noise moved behind: columns empty on every row, and
    others than ``first`` that repeat a column before them."""
    kept = [k for k in first if not _empty(k, rows)]
    noise = [k for k in first if k not in kept]
    for key in rest:
        (noise if _empty(key, rows) or _repeats(key, kept, rows) else kept).append(key)
    return kept, noise


def _capped(order: list[str], rest: list[str], link: str | None = None) -> Layout:
    shown = order[:MAX_COLUMNS]
    more = [k for k in [*order[MAX_COLUMNS:], *rest] if k not in shown]
    if link is not None and link not in shown:
        link = shown[0] if shown else None
    return Layout(shown, list(dict.fromkeys(more)), link)


def layout(
    data: Any,
    rows: Sequence[dict[str, Any]],
    catalog: Catalog | None = None,
    entity: str | None = None,
    tool: str = "",
) -> Layout:
    """The columns of a stored result's table (``tool`` made it; ``entity`` is its entity)."""
    declared = data.get("columns") if isinstance(data, dict) else None
    keys = _keys(rows)
    if isinstance(declared, list) and declared:
        named = [
            str(s.get("key") or s.get("fieldname"))
            for s in declared
            if isinstance(s, dict) and not s.get("hidden") and (s.get("key") or s.get("fieldname"))
        ]
        visible = [k for k in named if (k in keys or not rows) and k not in INTERNAL_COLUMNS]
        if visible:
            first = [k for k in _report_display(catalog, tool) if k in visible]
            rest = [k for k in visible if k not in first]
            if len(visible) <= MAX_COLUMNS or not first:
                # A statement's or a figure's own columns (its periods) are all shown; a report
                # that lists records (its catalog entry says which columns come first) is capped.
                # Records of an entity (a figure's documents) link from their id.
                record = _entity(catalog, entity)
                ident = record.identifier.name if record is not None else None
                return Layout([*first, *rest], [], ident if ident in visible else None)
            kept, noise = _tidy(first, rest, rows)
            return _capped(kept, noise)
    record = _entity(catalog, entity)
    if record is not None and "id" in keys:
        return _record_layout(record, rows, keys)
    # A figure's table (an aggregate, an analysis): its own columns, all of them.
    plain = [k for k in keys if k not in INTERNAL_COLUMNS and k not in _BOOKKEEPING]
    return Layout(plain, [k for k in keys if k in _BOOKKEEPING])


def default_columns(
    data: Any,
    rows: Sequence[dict[str, Any]],
    catalog: Catalog | None = None,
    entity: str | None = None,
    tool: str = "",
) -> list[str]:
    """The columns a table shows first when the model names none."""
    return layout(data, rows, catalog, entity, tool).shown


def _report_display(catalog: Catalog | None, tool: str) -> tuple[str, ...]:
    kind, _, name = tool.partition(".")
    if catalog is None or kind != "report":
        return ()
    report = catalog.reports.get(name)
    return report.display if report is not None else ()


def _entity(catalog: Catalog | None, name: str | None) -> Entity | None:
    if catalog is None or not name:
        return None
    return catalog.entities.get(name)


def _party_names(entity: Entity) -> list[str]:
    """The fields that name the record's party: its title field, else the name beside each
    required link ("customer_name" for "customer"), else any "…_name" field."""
    fields = entity.fields
    if entity.title_field is not None:
        return [entity.title_field.name]
    links = [
        n for n, f in fields.items()
        if f.type is FieldType.LINK and f.required and n not in _NOT_PARTIES
    ]  # fmt: skip
    named = [f"{n}_name" for n in links if f"{n}_name" in fields]
    return named or [n for n in fields if n.endswith("_name")][:1] or links[:1]


def _record_layout(entity: Entity, rows: Sequence[dict[str, Any]], keys: list[str]) -> Layout:
    fields = entity.fields
    ident = entity.identifier.name
    first: list[str] = [*_party_names(entity)]
    if entity.date_field:
        first.append(entity.date_field)
    first += [n for n in fields if n in _DEADLINES][:1]
    if entity.amount_field:
        first.append(entity.amount_field)
        if len(currencies(list(rows))) > 1:
            first.append("currency")  # amounts in several currencies: each row says which
    if "outstanding" in fields:
        first.append("outstanding")
    if entity.status_field:
        first.append(entity.status_field)
    first.append(ident)
    first = [k for k in dict.fromkeys(first) if k in keys]
    if first[0] != ident and _repeats(ident, first[:1], rows):
        first.remove(ident)  # a master named by its id: the name is shown once, as the link
    codes = {n.removesuffix("_name") for n in first if n.endswith("_name")}
    skip = {*first, *codes, ident, *_BOOKKEEPING, *INTERNAL_COLUMNS}
    # Then the record's other plain fields, in the catalog's order: short values a reader
    # scans (no text blocks, no company-currency twins of the amounts shown).
    plain = [
        n for n in fields
        if n in keys and n not in skip and fields[n].is_scalar
        and fields[n].type is not FieldType.TEXT and not n.startswith("base_")
    ]  # fmt: skip
    chosen, noise = _tidy(first, plain, rows)
    if ident in chosen and chosen.index(ident) >= MAX_COLUMNS:
        chosen.remove(ident)
        chosen.insert(MAX_COLUMNS - 1, ident)  # the link is never cut off
    rest = [k for k in keys if k not in chosen and k not in INTERNAL_COLUMNS]
    rest = [*noise, *(k for k in rest if k not in noise)]
    return _capped(chosen, rest, link=ident)


def more_columns_hint(more: Sequence[MoreColumn], limit: int = 6) -> str:
    """The text channels' "more columns" control: what else the table holds, by label."""
    labels = [str(m.get("label") or m.get("key")) for m in more]
    if not labels:
        return ""
    named = ", ".join(labels[:limit]) + (
        f" and {len(labels) - limit} more" if len(labels) > limit else ""
    )
    word = "column" if len(labels) == 1 else "columns"
    return f"{len(labels)} more {word} ({named}): ask to show any of them."


def link_index(block: TableBlock) -> int:
    """Where a table block's links go: the column holding the record's id (else the first)."""
    columns = list(block.get("columns") or [])
    key = block.get("link_column")
    return columns.index(key) if key in columns else 0
