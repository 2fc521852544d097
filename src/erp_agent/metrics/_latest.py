"""``latest(items.rate)``: the value on an item's line of the latest document that has it (the
last purchase rate), with that document's date, id and details, per group.

The documents are listed as the user, newest first (by date, then by id, as ERPNext orders its
last purchase), one listing per item asked about; only the newest document of each group is
read whole, for its line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from erp_agent.catalog import Entity, Metric
from erp_agent.catalog.metrics import Dimension
from erp_agent.connectors.query import Filter, Op
from erp_agent.errors import ToolInputError
from erp_agent.metrics._cells import Cell, Computed, Key, Latest, dec
from erp_agent.metrics.periods import Period
from erp_agent.metrics.request import DimensionFilter, MetricQuery

if TYPE_CHECKING:
    from erp_agent.metrics.compute import MetricComputer

MAX_ITEMS = 50


async def compute_latest(
    computer: MetricComputer, query: MetricQuery, metric: Metric, period: Period
) -> Computed:
    entity = computer.catalog.entity(metric.entity)
    table, _, column = str(metric.measure.field).partition(".")
    if query.grain:
        raise ToolInputError(
            f"{metric.name} is the latest value, not a total: it has no time grain; give a "
            "period instead"
        )
    filters, row_level, words = computer.base_filters(metric, entity, period)
    if row_level:
        raise ToolInputError(f"{metric.name} cannot apply comparisons between fields")
    line_dims = {d.name for d in computer.catalog.dimensions.values() if _on_line(d, entity, table)}
    lines = [f for f in query.filters if f.dimension.name in line_dims]
    others = [f for f in query.filters if f.dimension.name not in line_dims]
    extra, dim_words, notes, ages = await computer._dimension_filters(entity, metric, others)
    words += dim_words + [f.text() for f in lines]
    if extra is None:
        return Computed({}, {}, 0, ["nothing matched the filters"], words, notes)
    if ages:
        raise ToolInputError(f"{metric.name} cannot be filtered by age")
    filters += extra
    items = _wanted(metric, entity, lines)
    head_dims = [(d, str(d.path_for(entity.name, entity.fields))) for d in query.dimensions]
    for dim, path in head_dims:
        if "." in path and dim.name not in line_dims:
            raise ToolInputError(f"{metric.name} cannot be grouped by {dim.name}")
    slot = computer._currency_path(metric, entity)
    fields = {metric.date_field or "", *(p.split(".")[0] for d, p in head_dims
                                         if d.name not in line_dims)}  # fmt: skip
    fields |= {d for d in metric.details if "." not in d}
    if slot:
        fields.add(slot)
    fields.discard("")
    groups: dict[Key, Cell] = {}
    read = 0
    cred = computer.ctx.session.credential
    for path, value in items:
        page = await computer.ctx.connector.list(
            cred, entity.name, fields=sorted(fields),
            filters=[*filters, Filter(path, Op.EQ, value)],
            order_by=[(str(metric.date_field), "desc"), ("id", "desc")], limit=0,
        )  # fmt: skip
        read += len(page.records)
        chosen: dict[Key, dict[str, Any]] = {}
        counts: dict[Key, int] = {}
        for record in page.records:
            key = _key(record, head_dims, line_dims, value, slot)
            counts[key] = counts.get(key, 0) + 1
            chosen.setdefault(key, record)
        for key, record in chosen.items():
            doc = await computer.ctx.connector.get(cred, entity.name, str(record["id"]))
            row_field = path.partition(".")[2]
            line = next((r for r in doc.get(table) or [] if r.get(row_field) == value), None)
            if line is None:
                continue
            details: dict[str, Any] = {
                "date": str(record.get(metric.date_field or ""))[:10],
                "document": record["id"],
            }
            for name in metric.details:
                head, _, sub = name.partition(".")
                details[sub or head] = line.get(sub) if sub else record.get(head)
            order = (details["date"], str(record["id"]))
            cell = Cell(count=counts[key], latest=Latest(order, dec(line.get(column)), details))
            groups.setdefault(key, Cell()).add(cell)
    words.append(
        f"the latest {entity.label} by {metric.date_field} (then by its number) that has the "
        "item, as ERPNext picks the last purchase"
    )
    source = (
        f"{read} {entity.plural} with the item listed as you, newest first; the newest "
        "one's line read whole"
    )
    return Computed(groups, {}, read, [source], words, notes)


def _on_line(dim: Dimension, entity: Entity, table: str) -> bool:
    path = dim.path_for(entity.name, entity.fields)
    return bool(path and path.split(".")[0] == table)


def _wanted(metric: Metric, entity: Entity, lines: list[DimensionFilter]) -> list[tuple[str, Any]]:
    """(row path, value) for every item asked about; at least one is needed."""
    wanted: list[tuple[str, Any]] = []
    for flt in lines:
        if flt.op not in ("=", "in"):
            raise ToolInputError(f"{metric.name}: filter {flt.dimension.name} with = or in")
        values = flt.value if isinstance(flt.value, list) else [flt.value]
        path = str(flt.dimension.path_for(entity.name, entity.fields))
        wanted += [(path, v) for v in values]
    if not wanted:
        raise ToolInputError(
            f"{metric.name} is per item: filter by item (one or more item codes, up to {MAX_ITEMS})"
        )
    if len(wanted) > MAX_ITEMS:
        raise ToolInputError(f"{metric.name}: at most {MAX_ITEMS} items at a time")
    return wanted


def _key(
    record: dict[str, Any],
    dims: list[tuple[Dimension, str]],
    line_dims: set[str],
    value: Any,
    slot: str | None,
) -> Key:
    parts = [value if d.name in line_dims else record.get(p.split(".")[0]) for d, p in dims]
    return (*parts, record.get(slot) if slot else None)
