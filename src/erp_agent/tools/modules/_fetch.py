"""How analytics tools read as the user: only the fields an analysis needs, every matching
record (no silent cap), pushed down to the ERP as an aggregate wherever the analysis allows."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from erp_agent.catalog import Entity
from erp_agent.connectors.query import (
    AggregateRequest,
    AggregateResult,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.tools.base import ToolContext
from erp_agent.tools.factories import documents as documents_of
from erp_agent.tools.factories import filters as grammar

# Documents that do not count in business figures: never posted, or reversed.
_NOT_COUNTED = ("Draft", "Cancelled")


@dataclass
class Source:
    """How the figures were obtained, returned with every analysis."""

    method: str
    detail: str
    records: int
    basis: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "detail": self.detail,
            "records": self.records,
            "basis": self.basis,
        }


def base_filters(
    entity: Entity, raw: Sequence[Mapping[str, Any]], documents: str
) -> tuple[list[Filter], str]:
    """The user's filters plus — unless ``documents`` is "all" or they filter the status
    themselves — leaving out drafts and cancelled documents; and a sentence saying which."""
    filters = grammar.parse_filters(entity, raw)
    if documents_of.has_documents(entity):
        # The ERP's own term: docstatus = 1 (submitted), as its reports count.
        scoped, statement = documents_of.scope(entity, filters, documents)
        return scoped, str(statement)
    status = entity.status_field
    excluded = [v for v in _NOT_COUNTED if status and v in entity.field(status).values]
    if documents == "all" or not excluded or any(f.field == status for f in filters):
        return filters, "all records matching the filters"
    assert status is not None
    filters.append(Filter(status, Op.NOT_IN, excluded))
    return filters, f"{entity.plural} with {status} not {' or '.join(excluded)}"


async def aggregate(ctx: ToolContext, entity: Entity, request: AggregateRequest) -> AggregateResult:
    return await ctx.connector.aggregate(ctx.session.credential, entity.name, request)


async def monthly_totals(
    ctx: ToolContext, entity: Entity, field: str, filters: Sequence[Filter], basis: str
) -> tuple[list[dict[str, Any]], Source]:
    """One row per month, ``{date: YYYY-MM-01, amount, count}``, summed by the ERP."""
    assert entity.date_field is not None
    request = AggregateRequest(
        measures=(Measure(Func.SUM, field), Measure(Func.COUNT)),
        group_by=(
            GroupKey(entity.date_field, DatePart.YEAR),
            GroupKey(entity.date_field, DatePart.MONTH),
        ),
        filters=tuple(filters),
    )
    result = await aggregate(ctx, entity, request)
    year, month = (g.alias for g in request.group_by)
    amount = request.measures[0].alias
    rows = [
        {
            "date": dt.date(int(r[year]), int(r[month]), 1).isoformat(),
            "amount": r.get(amount) or 0,
            "count": r.get("count_records") or 0,
        }
        for r in result.rows
        if r.get(year) is not None and r.get(month) is not None
    ]
    return rows, Source(result.method, result.detail, result.record_count, basis)


async def window_totals(
    ctx: ToolContext,
    entity: Entity,
    field: str,
    filters: Sequence[Filter],
    windows: Iterable[tuple[dt.date, dt.date]],
    basis: str,
) -> tuple[list[dict[str, Any]], Source]:
    """``{date: window start, amount, count}`` per inclusive date window, summed by the ERP
    (one aggregate per window, concurrently)."""
    assert entity.date_field is not None
    spans = list(windows)
    requests = [
        AggregateRequest(
            measures=(Measure(Func.SUM, field), Measure(Func.COUNT)),
            filters=(
                *filters,
                Filter(entity.date_field, Op.BETWEEN, [lo.isoformat(), hi.isoformat()]),
            ),
        )
        for lo, hi in spans
    ]
    results = await asyncio.gather(*(aggregate(ctx, entity, r) for r in requests))
    alias = requests[0].measures[0].alias
    rows = [
        {
            "date": lo.isoformat(),
            "amount": (res.rows[0].get(alias) if res.rows else None) or 0,
            "count": res.record_count,
        }
        for (lo, _), res in zip(spans, results, strict=True)
    ]
    methods = sorted({r.method for r in results})
    detail = "; ".join(
        f"{lo.isoformat()} to {hi.isoformat()}: {r.detail}"
        for (lo, hi), r in zip(spans, results, strict=True)
    )
    records = sum(r.record_count for r in results)
    return rows, Source(", ".join(methods), detail, records, basis)


async def all_records(
    ctx: ToolContext, entity: Entity, fields: Sequence[str], filters: Sequence[Filter], basis: str
) -> tuple[list[dict[str, Any]], Source]:
    """Every matching record with only ``fields``, in one request (limit 0: no page cap)."""
    page = await ctx.connector.list(
        ctx.session.credential, entity.name, fields=list(fields), filters=filters, limit=0
    )
    detail = f"read all {len(page.records)} matching records (fields: {', '.join(fields)})"
    return page.records, Source("rows", detail, len(page.records), basis)


def today(ctx: ToolContext) -> dt.date:
    """The user's today, in their session's time zone (or the deployment's pinned date)."""
    if ctx.today is not None:
        return ctx.today
    try:
        zone = ZoneInfo(ctx.session.timezone)
    except (KeyError, ValueError):
        zone = ZoneInfo("UTC")
    return dt.datetime.now(zone).date()
