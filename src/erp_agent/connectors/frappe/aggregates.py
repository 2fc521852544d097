"""Exact aggregates over Frappe: pushed down in the syntax of the ERP's version, or — when the
ERP refuses that syntax — computed here from every row, read in chunks. Never a silent cap."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient
from erp_agent.connectors.query import AggregateResult, DatePart, Func, GroupKey, Measure
from erp_agent.errors import ErpRefusal

CHUNK = 5000
_FALLBACK_ON = frozenset({"ValidationError", "DataError", "FrappeTypeError"})


def _v15_field(key: GroupKey | Measure, native: str | None) -> str:
    if isinstance(key, GroupKey):
        return f"{key.part}({native}) as {key.alias}" if key.part else f"{native} as {key.alias}"
    if key.func is Func.COUNT and not native:
        return f"count(*) as {key.alias}"
    return f"{key.func}({native}) as {key.alias}"


def _v16_field(key: GroupKey | Measure, native: str | None) -> Any:
    if isinstance(key, GroupKey):
        return (
            {str(key.part).upper(): native, "as": key.alias}
            if key.part
            else f"{native} as {key.alias}"
        )
    if key.func is Func.COUNT and not native:
        return {"COUNT": "*", "as": key.alias}
    return {str(key.func).upper(): native, "as": key.alias}


async def pushdown(
    client: FrappeClient,
    cred: Credential,
    doctype: str,
    groups: list[tuple[GroupKey, str]],
    measures: list[tuple[Measure, str | None]],
    filters: list[list[Any]],
    version: int,
) -> AggregateResult:
    make = _v16_field if version >= 16 else _v15_field
    count = Measure(Func.COUNT)
    fields = [make(g, n) for g, n in groups] + [make(m, n) for m, n in measures]
    if count not in [m for m, _ in measures]:
        fields.append(make(count, None))
    rows = await client.get_list(
        cred,
        doctype,
        fields=fields,
        filters=filters,
        group_by=", ".join(g.alias for g, _ in groups) or None,
        order_by=", ".join(f"{g.alias} asc" for g, _ in groups) or None,
        page_length=0,  # every group: no cap
    )
    total = sum(int(r.get(count.alias) or 0) for r in rows)
    syntax = "dict fields (v16)" if version >= 16 else "SQL function strings (v15)"
    return AggregateResult(
        rows=[dict(r) for r in rows],
        record_count=total,
        method="pushdown",
        detail=f"computed by the ERP in one query using {syntax}",
        group_by=[g.alias for g, _ in groups],
        measures=[m.alias for m, _ in measures],
    )


def _date_key(value: Any, part: DatePart) -> int | None:
    if not value:
        return None
    text = str(value)
    year, month = int(text[:4]), int(text[5:7])
    return {DatePart.YEAR: year, DatePart.MONTH: month, DatePart.QUARTER: (month + 2) // 3}[part]


async def chunked(
    client: FrappeClient,
    cred: Credential,
    doctype: str,
    groups: list[tuple[GroupKey, str]],
    measures: list[tuple[Measure, str | None]],
    filters: list[list[Any]],
    chunk: int = CHUNK,
) -> AggregateResult:
    """Read every matching row (only the needed fields) and aggregate exactly with Decimal."""
    natives = sorted({n for _, n in groups} | {n for _, n in measures if n})
    acc: dict[tuple[Any, ...], dict[str, Any]] = defaultdict(dict)
    counts: dict[tuple[Any, ...], int] = defaultdict(int)
    start = 0
    seen = 0
    while True:
        rows = await client.get_list(
            cred, doctype, fields=["name", *natives], filters=filters, order_by="name asc",
            start=start, page_length=chunk,
        )  # fmt: skip
        for row in rows:
            key = tuple(
                _date_key(row.get(native), g.part) if g.part else row.get(native)
                for g, native in groups
            )
            counts[key] += 1
            bucket = acc[key]
            for measure, native in measures:
                if measure.func is Func.COUNT:
                    continue
                raw = row.get(native or "")
                if raw is None:
                    continue
                value = Decimal(str(raw))
                current = bucket.get(measure.alias)
                if measure.func in (Func.SUM, Func.AVG):
                    bucket[measure.alias] = (current or Decimal(0)) + value
                elif measure.func is Func.MIN:
                    bucket[measure.alias] = value if current is None else min(current, value)
                else:
                    bucket[measure.alias] = value if current is None else max(current, value)
        seen += len(rows)
        if len(rows) < chunk:
            break
        start += chunk
    out = []
    for key in sorted(counts, key=lambda k: tuple((v is None, str(v)) for v in k)):
        group_row: dict[str, Any] = {g.alias: key[i] for i, (g, _) in enumerate(groups)}
        for measure, _ in measures:
            if measure.func is Func.COUNT:
                group_row[measure.alias] = counts[key]
                continue
            total: Decimal | None = acc[key].get(measure.alias)
            if total is not None and measure.func is Func.AVG:
                total = total / counts[key]
            group_row[measure.alias] = float(total) if total is not None else None
        group_row[Measure(Func.COUNT).alias] = counts[key]
        out.append(group_row)
    pages = (seen // chunk) + 1
    return AggregateResult(
        rows=out,
        record_count=seen,
        method="chunked",
        detail=f"computed exactly from all {seen} records, read in {pages} page(s) of up to {chunk}",
        group_by=[g.alias for g, _ in groups],
        measures=[m.alias for m, _ in measures],
    )


async def aggregate(
    client: FrappeClient,
    cred: Credential,
    doctype: str,
    groups: list[tuple[GroupKey, str]],
    measures: list[tuple[Measure, str | None]],
    filters: list[list[Any]],
    *,
    allow_pushdown: bool = True,
) -> AggregateResult:
    if allow_pushdown:
        version = await client.version(cred)
        try:
            return await pushdown(client, cred, doctype, groups, measures, filters, version)
        except ErpRefusal as exc:
            if exc.refusal.exc_type not in _FALLBACK_ON:
                raise
            result = await chunked(client, cred, doctype, groups, measures, filters)
            result.detail += f" (the ERP refused the pushed-down query: {exc.refusal.message})"
            return result
    return await chunked(client, cred, doctype, groups, measures, filters)
