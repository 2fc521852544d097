"""One currency per analysis: an analysis over documents in several currencies runs once per
currency (a sum of shillings and dollars is no figure), and its result says which is which.

Wraps an analytics tool's handler: the currencies the user's filters select are read from the
ERP first (one grouped count); one currency → the analysis as it is, with its currency named;
several → the analysis once per currency, merged (observations prefixed with the currency, KPIs
per currency, table rows and chart series carrying it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.connectors.query import AggregateRequest, Func, GroupKey, Measure
from erp_agent.tools.base import Args, ReadHandler, ToolContext
from erp_agent.tools.modules import _fetch

CURRENCY = "currency"


async def currencies_of(ctx: ToolContext, entity: Entity, args: Args) -> list[str]:
    """The currencies of the documents the arguments select, as the user may read them."""
    filters, _ = _fetch.base_filters(
        entity, args.get("filters") or (), str(args.get("documents", "submitted"))
    )
    request = AggregateRequest(
        measures=(Measure(Func.COUNT),), group_by=(GroupKey(CURRENCY),), filters=tuple(filters)
    )
    result = await _fetch.aggregate(ctx, entity, request)
    alias = request.group_by[0].alias
    return sorted({str(r[alias]) for r in result.rows if r.get(alias)})


def each_currency(entity_of: Callable[[Args], Entity], run: ReadHandler) -> ReadHandler:
    """``run`` once per currency of what it analyses (see the module's docstring)."""

    async def wrapped(ctx: ToolContext, args: Args) -> dict[str, Any] | None:
        entity = entity_of(args)
        filters = list(args.get("filters") or ())
        if CURRENCY not in entity.fields or any(f.get("field") == CURRENCY for f in filters):
            whole: dict[str, Any] | None = await run(ctx, args)
            return whole
        currencies = await currencies_of(ctx, entity, args)
        parts: list[tuple[str, dict[str, Any]]] = []
        for currency in currencies or [""]:
            one = [*filters, {"field": CURRENCY, "op": "=", "value": currency}]
            result = await run(ctx, {**args, "filters": one} if currency else args)
            if result is None:
                return None
            parts.append((currency, result))
        return merged(parts)

    return wrapped


def merged(parts: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Results of one analysis per currency as one result."""
    first = parts[0][1]
    named = [(c, p) for c, p in parts if c]
    if not named:
        return first
    out = {k: v for k, v in first.items() if k not in ("kpis", "chart", "observations", "table")}
    out["currencies"] = [c for c, _ in named]
    out["observations"] = [f"{c}: {o}" for c, p in named for o in p.get("observations") or []]
    out["table"] = [{CURRENCY: c, **row} for c, p in named for row in p.get("table") or []]
    if len(named) == 1:
        out["currency"] = named[0][0]
        out["kpis"], out["chart"] = first.get("kpis"), first.get("chart")
        return out
    out["kpis"] = {c: p.get("kpis") for c, p in named}
    out["chart"] = _chart(named)
    source = out.get("source")
    if isinstance(source, dict):
        counts = [p.get("source", {}).get("record_count") for _, p in named]
        if all(isinstance(n, int) for n in counts):
            out["source"] = {**source, "record_count": sum(n for n in counts if n is not None)}
    return out


def _chart(parts: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    """One chart: every currency's series over the labels of all of them."""
    charts: list[tuple[str, dict[str, Any]]] = [
        (c, p["chart"]) for c, p in parts if isinstance(p.get("chart"), dict)
    ]
    if not charts:
        return None
    labels: list[Any] = []
    for _, chart in charts:
        for label in chart["data"]["labels"]:
            if label not in labels:
                labels.append(label)
    datasets = []
    for currency, chart in charts:
        at = dict(zip(chart["data"]["labels"], range(len(chart["data"]["labels"])), strict=True))
        for ds in chart["data"]["datasets"]:
            data = ds["data"]
            datasets.append(
                {
                    "label": f"{ds['label']} ({currency})",
                    "data": [data[at[label]] if label in at else None for label in labels],
                }
            )
    return {"type": charts[0][1]["type"], "data": {"labels": labels, "datasets": datasets}}
