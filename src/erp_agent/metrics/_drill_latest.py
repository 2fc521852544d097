"""The documents behind a ``latest(...)`` figure (the last purchase rate): every document of
its group that has the item, newest first, as ``compute_latest`` read them; the first is the
one the figure was taken from, and the count is the figure's record count."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from erp_agent.catalog import Catalog
from erp_agent.connectors.query import Filter, Op
from erp_agent.metrics._latest import _key, _on_line, _wanted, compute_latest
from erp_agent.metrics.periods import Period
from erp_agent.metrics.request import MetricQuery
from erp_agent.tools.base import Definition

if TYPE_CHECKING:
    from erp_agent.metrics._drill_cells import Cut
    from erp_agent.metrics._drill_list import Figure
    from erp_agent.metrics.compute import MetricComputer


async def latest_records(
    computer: MetricComputer,
    catalog: Catalog,
    query: MetricQuery,
    period: Period,
    cut: Cut,
    figure: Figure,
) -> dict[str, Any]:
    from erp_agent.metrics._drill_cells import same
    from erp_agent.metrics._drill_list import rounded

    metric = query.metric
    entity = catalog.entity(metric.entity)
    table = str(metric.measure.field).partition(".")[0]

    def in_cut(key: tuple[Any, ...]) -> bool:
        if not same(key[-1], cut.slot):
            return False
        return cut.whole or all(same(a, b) for a, b in zip(key[:-1], cut.dims, strict=True))

    computed = await compute_latest(computer, query, metric, period)
    chosen = [c for k, c in computed.groups.items() if in_cut(k)]
    latest = max((c.latest for c in chosen if c.latest), key=lambda x: x.order, default=None)
    filters, _, _ = computer.base_filters(metric, entity, period)
    line_dims = {d.name for d in catalog.dimensions.values() if _on_line(d, entity, table)}
    lines = [f for f in query.filters if f.dimension.name in line_dims]
    others = [f for f in query.filters if f.dimension.name not in line_dims]
    extra, _, _, _ = await computer._dimension_filters(entity, metric, others)
    head_dims = [(d, str(d.path_for(entity.name, entity.fields))) for d in query.dimensions]
    slot = computer._currency_path(metric, entity)
    fields = sorted({"id", str(metric.date_field), *(p.split(".")[0] for d, p in head_dims
                                                      if d.name not in line_dims),
                     *(d for d in metric.details if "." not in d), *([slot] if slot else [])})  # fmt: skip
    rows: list[dict[str, Any]] = []
    wanted = _wanted(metric, entity, lines) if extra is not None else []
    for path, value in wanted:
        page = await computer.ctx.connector.list(
            computer.ctx.session.credential, entity.name, fields=fields,
            filters=[*filters, *(extra or []), Filter(path, Op.EQ, value)],
            order_by=[(str(metric.date_field), "desc"), ("id", "desc")], limit=0,
        )  # fmt: skip
        for record in page.records:
            if in_cut(_key(record, head_dims, line_dims, value, slot)):
                rows.append({**record, "item": value})
    date = str(metric.date_field)
    rows.sort(key=lambda r: (str(r.get(date) or "")[:10], str(r["id"])), reverse=True)
    document = latest.details.get("document") if latest else None
    value = rounded(metric, latest.value) if latest else None
    for row in rows:
        row[metric.name] = value if row["id"] == document else None
    count = sum(c.count for c in chosen)
    columns = [
        {"key": k, "label": k.replace("_", " ").capitalize(), "kind": "dimension", "currency": None}
        for k in fields if k != "id"
    ]  # fmt: skip
    columns += [
        {"key": metric.name, "label": metric.label, "kind": "measure", "currency": None},
        {"key": "id", "label": entity.identifier.label, "kind": "dimension", "currency": None},
    ]
    matches = figure.value == value and (figure.records is None or figure.records == count)
    definition: Definition = {
        "text": f"The {entity.plural} that have the item, newest first: {metric.label} is "
        "the rate on the first one's line.",
        "filters": computed.filters,
        "period": period.text(),
        "record_count": count,
        "source": "; ".join(computed.sources),
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
            "records": count,
            "value": value,
            "rows": len(rows),
            "matches": matches,
            "document": document,
        },
        "columns": columns,
        "rows": rows,
        "notes": [
            f"{metric.label} is the value on the newest of these {len(rows)} "
            f"{entity.plural.lower()} ({document}), not a total of them."
        ],
        "definition": definition,
        "id_field": "id",
    }
