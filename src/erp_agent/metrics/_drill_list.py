"""The records behind a figure as a list result: the columns a reader needs, each record's
share under the metric's own label, the count and sum against the figure, and what the list
does not show, in words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from erp_agent.catalog import Catalog, Entity, MeasureFunc, Metric
from erp_agent.catalog.fields import FieldType
from erp_agent.connectors.query import Filter, Op
from erp_agent.metrics._cells import Cell
from erp_agent.metrics._drill_cells import ID_CHUNK, Cut
from erp_agent.metrics.answer import _round
from erp_agent.metrics.compute import MetricComputer
from erp_agent.metrics.periods import Period
from erp_agent.metrics.request import MetricQuery
from erp_agent.results.presentation import with_currency
from erp_agent.tools.base import Definition

MAX_LISTED = 5000  # records listed at most; the count and the sum always cover them all
# Fields a reader identifies a record by, when the entity names no title field.
_PARTIES = ("customer", "supplier", "party", "employee", "item", "account", "project")


@dataclass
class Figure:
    """The figure as the answer showed it: in words, its value, its record count, its currency."""

    words: str
    value: Any
    records: int | None
    slot: Any


def _display_fields(entity: Entity, metric: Metric) -> list[str]:
    """What a reader identifies each record by, then the figures it contributes."""
    fields = entity.fields
    wanted: list[str] = []
    if entity.title_field is not None and entity.title_field.name != "id":
        wanted.append(entity.title_field.name)
    else:  # the party by name, not its code
        named = [f"{p}_name" for p in _PARTIES if f"{p}_name" in fields][:1]
        wanted += named or [p for p in _PARTIES if p in fields][:1]
        wanted += ["warehouse"] if "warehouse" in fields else []  # a stock balance's other half
    date = metric.date_field or entity.date_field
    if date:
        wanted.append(date)
    func, measured = metric.measure.func, [f for f in metric.measure.fields if "." not in f]
    if func is MeasureFunc.NET or func is MeasureFunc.COUNT_DISTINCT:
        wanted += measured  # a net's two fields; the value counted once
    # (a sum's or an average's one field is the record's share, shown as the metric's column)
    money = any(f in fields and fields[f].type is FieldType.MONEY for f in metric.measure.fields)
    if entity.amount_field and not money:
        wanted.append(entity.amount_field)  # what a counted record is worth
    if metric.currency not in ("none", "company") and metric.currency in fields:
        wanted.append(metric.currency)
    if entity.status_field:
        wanted.append(entity.status_field)
    wanted.append(entity.identifier.name)
    return [f for f in dict.fromkeys(wanted) if f in fields and fields[f].is_scalar]


async def _list_ids(
    computer: MetricComputer, entity: Entity, ids: list[Any], fields: list[str]
) -> dict[Any, dict[str, Any]]:
    ident = entity.identifier.name
    found: dict[Any, dict[str, Any]] = {}
    cred = computer.ctx.session.credential
    for start in range(0, len(ids), ID_CHUNK):
        chunk = ids[start : start + ID_CHUNK]
        page = await computer.ctx.connector.list(
            cred, entity.name, fields=fields, filters=[Filter(ident, Op.IN, chunk)], limit=0
        )
        for row in page.records:
            found[row.get(ident)] = row
    return found


def rounded(metric: Metric, value: Decimal | None) -> float | int | None:
    """A figure rounded as metrics.query rounds it (so the two compare exactly)."""
    return _round(value, metric)


async def listed(
    computer: MetricComputer,
    catalog: Catalog,
    query: MetricQuery,
    parts: list[tuple[str, Metric]],
    cells: dict[str, dict[Any, Cell]],
    figure: Figure,
    cut: Cut,
    period: Period,
    sources: list[str],
) -> dict[str, Any]:
    metric = query.metric
    main = parts[-1][1]  # the records listed: a ratio's denominator, else the metric's own
    entity = catalog.entity(main.entity)
    ident = entity.identifier.name
    order: list[Any] = list(dict.fromkeys(k for role, _ in parts for k in cells[role]))
    counted = cells[parts[-1][0]]
    totals = {role: _sum(cells[role]) for role, _ in parts}
    if metric.measure.func is MeasureFunc.RATIO:
        num, den = totals["numerator"], totals["denominator"]
        a = num.value(parts[0][1].measure)
        b = den.value(parts[1][1].measure)
        value = None if a is None or not b else a / b * 100
    else:
        value = totals["value"].value(metric.measure)
    records = sum(c.count for c in counted.values())
    fields = _display_fields(entity, main)
    shown_ids = order[:MAX_LISTED]
    read = await _list_ids(computer, entity, shown_ids, fields)
    rows: list[dict[str, Any]] = []
    for record_id in shown_ids:
        row = read.get(record_id)
        if row is None:
            continue
        out = {f: row.get(f) for f in fields}
        for role, part in parts:
            cell = cells[role].get(record_id)
            key = part.name if role != "value" else metric.name
            out[key] = rounded(part, _share(part, cell)) if cell is not None else None
        rows.append(out)
    notes = _notes(entity, order, shown_ids, read, figure, value, records, metric)
    columns = _columns(entity, fields, parts, metric, figure.slot)
    listed_value = rounded(metric, value)
    definition: Definition = {
        "text": f"The {entity.plural} behind {figure.words}: each one's share of the figure "
        f"is its {metric.label.lower()} column; together they are the figure.",
        "filters": [
            *_cut_words(query, cut),
            *(f"{f.dimension.label} {f.op} {f.value}" for f in query.filters),
        ],
        "period": period.text(),
        "record_count": records,
        "source": "; ".join(dict.fromkeys(s for s in sources if s)),
        "metric": metric.name,
        "rows": len(rows),
    }
    return {
        "entity": entity.name,
        "title": f"The {entity.plural.lower()} behind {figure.words}",
        "figure": {
            "words": figure.words,
            "value": figure.value,
            "records": figure.records,
            "currency": figure.slot,
        },
        "listed": {
            "records": records,
            "value": listed_value,
            "rows": len(rows),
            "matches": _matches(figure, listed_value, records),
        },
        "columns": columns,
        "rows": rows,
        "notes": notes,
        "definition": definition,
        "id_field": ident,
    }


def _sum(cells: Mapping[Any, Cell]) -> Cell:
    total = Cell()
    for cell in cells.values():
        total.add(cell)
    return total


def _share(metric: Metric, cell: Cell) -> Decimal | None:
    """A record's share of its metric: its own value (for an average, its amount; for a
    count of distinct values, one record of the value)."""
    func = metric.measure.func
    if func is MeasureFunc.AVG:
        return cell.total
    if func is MeasureFunc.COUNT_DISTINCT:
        return Decimal(cell.count)
    return cell.value(metric.measure)


def _matches(figure: Figure, value: Any, records: int) -> bool:
    same_value = (
        figure.value is None or value is None or Decimal(str(figure.value)) == Decimal(str(value))
    )
    same_count = figure.records is None or int(figure.records) == records
    return same_value and same_count


def _cut_words(query: MetricQuery, cut: Cut) -> list[str]:
    if cut.whole:
        return [f"every {d.label.lower()}" for d in query.dimensions]
    if cut.others:
        return ["the groups summed in 'All others'"]
    words = [f"{d.label} = {v}" for d, v in zip(query.dimensions, cut.dims, strict=True)]
    if cut.label:
        words.append(f"{query.grain} {cut.label}")
    return words


def _notes(
    entity: Entity,
    order: list[Any],
    shown_ids: list[Any],
    read: Mapping[Any, Any],
    figure: Figure,
    value: Decimal | None,
    records: int,
    metric: Metric,
) -> list[str]:
    notes = []
    plural = entity.plural.lower()
    if len(order) > len(shown_ids):
        notes.append(
            f"{len(order) - len(shown_ids):,} {plural} not listed: a drill-down lists at most "
            f"{MAX_LISTED:,}; the count and the total above cover all {len(order):,}."
        )
    unseen = [i for i in shown_ids if i not in read]
    if unseen:
        notes.append(
            f"{len(unseen):,} of the {plural} counted in the figure were not returned when "
            "listed as you (the ERP does not list them to you, or they were removed since): "
            "they are not shown."
        )
    shown_value = rounded(metric, value)
    if not _matches(figure, shown_value, records):
        notes.append(
            f"The figure was {figure.value} over {figure.records} records when it was "
            f"computed; the ERP now gives {shown_value} over {records}: records changed since."
        )
    return notes


def _columns(
    entity: Entity, fields: list[str], parts: list[tuple[str, Metric]], metric: Metric, slot: Any
) -> list[dict[str, Any]]:
    money = slot if metric.is_money and isinstance(slot, str) else None
    cols: list[dict[str, Any]] = []
    ident = entity.identifier.name
    for name in fields:
        if name == ident:
            continue
        fld = entity.fields[name]
        kind = "measure" if fld.type is FieldType.MONEY else "dimension"
        # A document's own amounts are in its currency, not necessarily the figure's.
        cols.append({"key": name, "label": fld.label, "currency": None, "kind": kind})
    for role, part in parts:
        key = metric.name if role == "value" else part.name
        label = part.label if role == "value" else f"{part.label} ({role})"
        currency = money if part.is_money else None
        cols.append({"key": key, "label": with_currency(label, currency), "kind": "measure",
                     "currency": currency})  # fmt: skip
    cols.append({"key": ident, "label": entity.identifier.label, "kind": "dimension",
                 "currency": None})  # fmt: skip
    return cols
