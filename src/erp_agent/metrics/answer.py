"""From computed groups to the answer of ``metrics.query``: rows with labelled columns, per-currency
totals, having, top N with an "all others" row, the comparison period, and the definition."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from erp_agent.catalog import Catalog, MeasureFunc, Metric
from erp_agent.metrics.compute import Cell, Computed, Key, MetricComputer
from erp_agent.metrics.periods import GRAIN_LABELS, Period, Shift, bucket, comparison, parse_period
from erp_agent.metrics.request import MetricQuery
from erp_agent.tools.base import Definition

OTHERS = "All others"
_HAVING = {
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, "=": lambda a, b: a == b, "!=": lambda a, b: a != b,
}  # fmt: skip


@dataclass
class Figures:
    """Values per group key, and per-currency totals, of one metric over one period."""

    values: dict[Key, Decimal | None]
    records: dict[Key, int]
    totals: dict[Any, Decimal | None]
    total_records: dict[Any, int]
    computed: Computed
    # The groups' cells (companion figures, the latest record's details); none for a ratio.
    cells: dict[Key, Cell] = field(default_factory=dict)
    total_cells: dict[Any, Cell] = field(default_factory=dict)


def _figures(metric: Metric, computed: Computed) -> Figures:
    measure = metric.measure
    per_currency: dict[Any, Cell] = {}
    for key, cell in computed.groups.items():
        per_currency.setdefault(key[-1], Cell()).add(cell)
    return Figures(
        values={k: c.value(measure) for k, c in computed.groups.items()},
        records={k: c.count for k, c in computed.groups.items()},
        totals={cur: c.value(measure) for cur, c in per_currency.items()},
        total_records={cur: c.count for cur, c in per_currency.items()},
        computed=computed,
        cells=computed.groups,
        total_cells=per_currency,
    )


def _ratio(num: Figures, den: Figures) -> Figures:
    def pct(a: Decimal | None, b: Decimal | None) -> Decimal | None:
        return None if a is None or not b else a / b * 100

    keys = list(dict.fromkeys([*den.values, *num.values]))
    currencies = list(dict.fromkeys([*den.totals, *num.totals]))
    computed = Computed(
        groups=den.computed.groups,
        period_starts={**den.computed.period_starts, **num.computed.period_starts},
        record_count=den.computed.record_count,
        sources=[*num.computed.sources, *den.computed.sources],
        filters=[],
        notes=[*num.computed.notes, *den.computed.notes],
    )
    return Figures(
        values={k: pct(num.values.get(k, Decimal(0)), den.values.get(k)) for k in keys},
        records={k: den.records.get(k, 0) for k in keys},
        totals={c: pct(num.totals.get(c, Decimal(0)), den.totals.get(c)) for c in currencies},
        total_records={c: den.total_records.get(c, 0) for c in currencies},
        computed=computed,
    )


def _closing(metric: Metric, query: MetricQuery, figures: Figures) -> Figures:
    """A balance by time grain totals to its balance at the last period's end, not to the sum
    of every period's balance."""
    if not (metric.cumulative and query.grain) or not figures.computed.period_starts:
        return figures
    at = len(query.dimensions)
    starts = figures.computed.period_starts
    last = max(starts, key=lambda label: starts[label])
    per_currency: dict[Any, Cell] = {}
    for key, cell in figures.cells.items():
        if key[at] == last:
            per_currency.setdefault(key[-1], Cell()).add(cell)
    figures.totals = {cur: c.value(metric.measure) for cur, c in per_currency.items()}
    figures.total_records = {cur: c.count for cur, c in per_currency.items()}
    figures.total_cells = per_currency
    return figures


async def _compute(
    computer: MetricComputer, catalog: Catalog, query: MetricQuery, period: Period
) -> tuple[Figures, list[str]]:
    """The metric's figures; a ratio computes its two metrics over the same groups."""
    metric = query.metric
    if metric.measure.func is not MeasureFunc.RATIO:
        computed = await computer.compute(query, metric, period)
        return _closing(metric, query, _figures(metric, computed)), computed.filters
    num_metric = catalog.metric(str(metric.measure.numerator))
    den_metric = catalog.metric(str(metric.measure.denominator))
    num = _figures(num_metric, await computer.compute(query, num_metric, period))
    den = _figures(den_metric, await computer.compute(query, den_metric, period))
    words = [
        f"numerator {num_metric.label}: " + "; ".join(num.computed.filters),
        f"denominator {den_metric.label}: " + "; ".join(den.computed.filters),
    ]
    return _ratio(num, den), words


def _round(value: Decimal | None, metric: Metric) -> float | int | None:
    if value is None:
        return None
    if metric.measure.func in (MeasureFunc.COUNT, MeasureFunc.COUNT_DISTINCT):
        return int(value)
    places = Decimal("0.01") if metric.is_money or metric.unit == "%" else Decimal("0.0001")
    rounded = value.quantize(places, rounding=ROUND_HALF_UP)
    return (
        int(rounded)
        if rounded == rounded.to_integral_value() and not metric.is_money
        else float(rounded)
    )


async def answer(computer: MetricComputer, catalog: Catalog, query: MetricQuery) -> dict[str, Any]:
    """The whole result of one ``metrics.query`` call."""
    metric = query.metric
    needs_years = query.grain == "fiscal_year" or bool(
        query.period and "fiscal_year" in query.period
    )
    if needs_years:
        await computer.load_fiscal_years()
    period = parse_period(query.period, computer.fiscal_years)
    figures, words = await _compute(computer, catalog, query, period)
    previous: Figures | None = None
    shift: Shift | None = None
    prev_period: Period | None = None
    if query.compare_to or query.compare_period:
        how = (
            parse_period(query.compare_period, computer.fiscal_years)
            if query.compare_period
            else query.compare_to or ""
        )
        prev_period, shift = comparison(period, how)
        previous, _ = await _compute(computer, catalog, query, prev_period)
    keys = _ordered_keys(query, figures)
    keys = [k for k in keys if _keep(query, figures.values.get(k))]
    kept, others = _top(query, figures, keys)
    rows = [_row(query, metric, k, figures, previous, shift, computer) for k in kept]
    rows += _others_rows(query, metric, figures, others)
    currencies = sorted({k[-1] for k in figures.values if k[-1] is not None})
    return {
        "metric": metric.name,
        "label": metric.label,
        "columns": _columns(query, metric, currencies, previous is not None),
        "rows": rows,
        "totals": [
            {
                **_slot(metric, cur),
                "value": _round(figures.totals[cur], metric),
                "records": figures.total_records.get(cur, 0),
                **_companions(metric, figures.total_cells.get(cur)),
                **(
                    {"previous": _round(previous.totals.get(cur), metric)}
                    if previous is not None
                    else {}
                ),
            }
            for cur in sorted(figures.totals, key=lambda c: (c is None, str(c)))
            # The latest of several groups is no total of them.
            if metric.measure.func is not MeasureFunc.LATEST
            or sum(1 for k in figures.values if k[-1] == cur) == 1
        ],
        "all_units": _all_units(metric, figures.totals, figures.total_records),
        "groups": len(keys),
        "record_count": figures.computed.record_count,
        "definition": _definition(query, metric, period, prev_period, figures, words, rows),
        "drill": _drill_spec(catalog, query, period, prev_period, shift, computer),
    }


def _all_units(
    metric: Metric, totals: Mapping[Any, Decimal | None], records: Mapping[Any, int]
) -> dict[str, Any] | None:
    """A quantity kept per unit, added up across units as ERPNext's stock reports total their
    quantity column (Box, Nos and Set counted alike): asked for as "how many units in total"."""
    if not metric.unit_field or metric.measure.func is not MeasureFunc.SUM or len(totals) < 2:
        return None
    return {
        "value": _round(sum((v or Decimal(0) for v in totals.values()), Decimal(0)), metric),
        "records": sum(records.get(u, 0) for u in totals),
        "units": sorted(str(u) for u in totals if u is not None),
    }


def _span(period: Period | None) -> dict[str, str | None] | None:
    if period is None or not (period.start or period.end):
        return None
    return {
        "from": period.start.isoformat() if period.start else None,
        "to": period.end.isoformat() if period.end else None,
    }


def _drill_spec(
    catalog: Catalog,
    query: MetricQuery,
    period: Period,
    prev_period: Period | None,
    shift: Shift | None,
    computer: MetricComputer,
) -> dict[str, Any]:
    """What a drill-down of any figure of this result re-runs, as the user (``results.drill``,
    ``metrics/drill.py``): the metric, its cut, the periods as computed and the day "today"
    meant. Kept with the stored result; the model is not shown it (``results.model_view``)."""
    metric = query.metric
    parts = [metric]
    if metric.measure.func is MeasureFunc.RATIO:
        parts = [catalog.metric(str(metric.measure.numerator)),
                 catalog.metric(str(metric.measure.denominator))]  # fmt: skip
    return {
        "metric": metric.name,
        "dimensions": [d.name for d in query.dimensions],
        "grain": query.grain,
        "filters": [
            {"dimension": f.dimension.name, "op": f.op, "value": f.value} for f in query.filters
        ],
        "period": _span(period),
        "previous": _span(prev_period),
        # How the earlier period's buckets map onto this one's (a comparison by time grain).
        "shift": {"months": shift.months, "days": shift.days} if shift else None,
        "as_of": computer.today.isoformat(),
        "top": query.top,
        "others": query.others,
        "having": {"op": query.having.op, "value": query.having.value} if query.having else None,
        # A figure the ERP's own report computes has the report's rows, not a list of records.
        "listable": all(p.report is None for p in parts),
    }


def _slot(metric: Metric, value: Any) -> dict[str, Any]:
    """The last part of a group key in words: its currency, or a quantity's unit."""
    if metric.unit_field:
        return {"currency": None, "uom": value}
    return {"currency": value}


def _companions(metric: Metric, cell: Cell | None) -> dict[str, Any]:
    """The companion figures of a group (on hand, reorder level, shortfall...)."""
    if cell is None:
        return {}
    return {k: _round(cell.sum_of(c.measure), metric) for k, c in metric.also.items()}


def _details(metric: Metric, cell: Cell | None) -> dict[str, Any]:
    """The latest record behind a latest(...) figure: its date, id and details."""
    if metric.measure.func is not MeasureFunc.LATEST:
        return {}
    latest = cell.latest if cell else None
    names = ["date", "document", *(d.split(".")[-1] for d in metric.details)]
    return {n: (latest.details.get(n) if latest else None) for n in names}


def _ordered_keys(query: MetricQuery, figures: Figures) -> list[Key]:
    keys = list(figures.values)
    starts = figures.computed.period_starts
    by_value = query.order is not None or query.top is not None or not query.grain
    if by_value:
        reverse = query.order != "asc"
        keys.sort(key=lambda k: (str(k[-1]), _sortable(figures.values.get(k), reverse)))
        return keys
    grain_at = len(query.dimensions)
    keys.sort(key=lambda k: (starts.get(k[grain_at]) or dt.date.min, *map(str, k)))
    return keys


def _sortable(value: Decimal | None, reverse: bool) -> Decimal:
    if value is None:
        return Decimal("Infinity")
    return -value if reverse else value


def _keep(query: MetricQuery, value: Decimal | None) -> bool:
    if query.having is None:
        return True
    return value is not None and _HAVING[query.having.op](value, Decimal(str(query.having.value)))


def _top(query: MetricQuery, figures: Figures, keys: list[Key]) -> tuple[list[Key], list[Key]]:
    """The top N per currency (figures in different currencies are never ranked together)."""
    if query.top is None:
        return keys, []
    grain_at = len(query.dimensions) if query.grain else None
    if grain_at is None or not query.dimensions:
        seen: dict[Any, int] = {}
        kept: list[Key] = []
        rest: list[Key] = []
        for key in keys:
            seen[key[-1]] = seen.get(key[-1], 0) + 1
            (kept if seen[key[-1]] <= query.top else rest).append(key)
        return kept, rest
    # With a time grain: rank dimension combinations by their total over the whole period.
    totals: dict[Key, Decimal] = {}
    for key in keys:
        member = (*key[:grain_at], key[-1])
        totals[member] = totals.get(member, Decimal(0)) + (figures.values.get(key) or Decimal(0))
    ranked = sorted(totals, key=lambda m: (str(m[-1]), -totals[m]))
    chosen: set[Key] = set()
    per_currency: dict[Any, int] = {}
    for member in ranked:
        per_currency[member[-1]] = per_currency.get(member[-1], 0) + 1
        if per_currency[member[-1]] <= query.top:
            chosen.add(member)
    kept = [k for k in keys if (*k[:grain_at], k[-1]) in chosen]
    return kept, [k for k in keys if (*k[:grain_at], k[-1]) not in chosen]


def _key_fields(query: MetricQuery, key: Key) -> dict[str, Any]:
    out: dict[str, Any] = {d.name: key[i] for i, d in enumerate(query.dimensions)}
    if query.grain:
        out[query.grain] = key[len(query.dimensions)]
    out["currency"] = key[-1]
    return out


def _row(
    query: MetricQuery,
    metric: Metric,
    key: Key,
    figures: Figures,
    previous: Figures | None,
    shift: Shift | None,
    computer: MetricComputer,
) -> dict[str, Any]:
    row = _key_fields(query, key)
    if not metric.is_money:
        unit = row.pop("currency")
        if metric.unit_field:
            row["uom"] = unit
    value = figures.values.get(key)
    row[metric.name] = _round(value, metric)
    row.update(_companions(metric, figures.cells.get(key)))
    row.update(_details(metric, figures.cells.get(key)))
    row["records"] = figures.records.get(key, 0)
    if previous is not None and shift is not None:
        before = previous.values.get(_previous_key(query, key, previous, shift, computer))
        row["previous"] = _round(before, metric)
        change = None if value is None or before is None else value - before
        row["change"] = _round(change, metric)
        row["change_pct"] = (
            float((change / abs(before) * 100).quantize(Decimal("0.1")))
            if change is not None and before
            else None
        )
    return row


def _previous_key(
    query: MetricQuery, key: Key, previous: Figures, shift: Shift, computer: MetricComputer
) -> Key:
    if not query.grain:
        return key
    at = len(query.dimensions)
    for prev_key in previous.values:
        start = previous.computed.period_starts.get(prev_key[at])
        if start is None or prev_key[:at] != key[:at] or prev_key[-1] != key[-1]:
            continue
        label, _ = bucket(shift.forward(start), query.grain, computer.fiscal_years)
        if label == key[at]:
            return prev_key
    return (*key[:at], None, *key[at + 1 :])


def _others_rows(
    query: MetricQuery, metric: Metric, figures: Figures, others: list[Key]
) -> list[dict[str, Any]]:
    if not (query.others and others):
        return []
    grain_at = len(query.dimensions) if query.grain else None
    summed: dict[Key, tuple[Decimal, int]] = {}
    for key in others:
        bucket_key = (key[grain_at] if grain_at is not None else None, key[-1])
        value, records = summed.get(bucket_key, (Decimal(0), 0))
        summed[bucket_key] = (
            value + (figures.values.get(key) or Decimal(0)),
            records + figures.records.get(key, 0),
        )
    rows = []
    for (period_label, currency), (value, records) in summed.items():
        row: dict[str, Any] = {d.name: None for d in query.dimensions}
        if query.dimensions:
            row[query.dimensions[0].name] = OTHERS
        if query.grain:
            row[query.grain] = period_label if query.dimensions else OTHERS
        if metric.is_money:
            row["currency"] = currency
        elif metric.unit_field:
            row["uom"] = currency
        row[metric.name] = _round(value, metric)
        row["records"] = records
        row["others"] = True
        rows.append(row)
    return rows


def _columns(
    query: MetricQuery, metric: Metric, currencies: list[str], compared: bool
) -> list[dict[str, Any]]:
    cols: list[dict[str, Any]] = [
        {"key": d.name, "label": d.label, "kind": "dimension", "currency": None}
        for d in query.dimensions
    ]
    if query.grain:
        cols.append(
            {"key": query.grain, "label": GRAIN_LABELS[query.grain], "kind": "period",
             "currency": None, "grain": query.grain}
        )  # fmt: skip
    one = currencies[0] if len(currencies) == 1 else None
    if metric.is_money:
        cols.append({"key": "currency", "label": "Currency", "kind": "dimension", "currency": None})
    elif metric.unit_field:
        cols.append({"key": "uom", "label": "Unit", "kind": "dimension", "currency": None})
    if metric.unit_field:
        suffix = f" ({one})" if one else ""
    else:
        suffix = f" ({one})" if one else f" ({metric.unit})" if metric.unit else ""
    measure = {"kind": "measure", "currency": one if metric.is_money else None}
    cols.append({"key": metric.name, "label": metric.label + suffix, **measure})
    for key, companion in metric.also.items():
        cols.append({"key": key, "label": companion.label + suffix, **measure})
    if metric.measure.func is MeasureFunc.LATEST:
        for key in ("date", "document", *(d.split(".")[-1] for d in metric.details)):
            label = key.replace("_", " ").capitalize()
            cols.append({"key": key, "label": label, "kind": "detail", "currency": None})
    if compared:
        cols += [
            {"key": "previous", "label": f"Previous{suffix}", **measure},
            {"key": "change", "label": f"Change{suffix}", **measure},
            {"key": "change_pct", "label": "Change (%)", "kind": "measure", "currency": None},
        ]
    return cols


def _definition(
    query: MetricQuery,
    metric: Metric,
    period: Period,
    prev_period: Period | None,
    figures: Figures,
    words: list[str],
    rows: list[dict[str, Any]],
) -> Definition:
    entity_measure = (
        f"{metric.measure.func.value.replace('_', ' ')} of {metric.measure.field}"
        if metric.measure.field and metric.measure.func not in (MeasureFunc.NET, MeasureFunc.LATEST)
        else str(metric.measure)
    )
    if metric.report is not None:
        entity_measure = f"sum of the report's {metric.measure.field} column"
    cut = [d.label for d in query.dimensions] + ([GRAIN_LABELS[query.grain]] if query.grain else [])
    text = f"{metric.label}: {metric.description.strip()} ({entity_measure}"
    text += f", by {', '.join(cut)})." if cut else ")."
    if metric.is_money:
        text += " Amounts are per currency and never added across currencies."
    filters = list(words)
    if query.having:
        filters.append(f"only groups whose {metric.label} {query.having.op} {query.having.value:g}")
    if query.top:
        per = " per currency" if metric.is_money else " per unit" if metric.unit_field else ""
        filters.append(
            f"top {query.top}{per} by {metric.label}"
            + (", the rest summed in an 'All others' row" if query.others else "")
        )
    period_text = period.text()
    if prev_period is not None:
        period_text = f"{period_text}, compared with {prev_period.text()}"
    sources = list(dict.fromkeys(figures.computed.sources))
    source = "; ".join(sources + figures.computed.notes)
    return {
        "text": text,
        "filters": filters,
        "period": period_text,
        "record_count": figures.computed.record_count,
        "source": source,
        "metric": metric.name,
        "rows": len(rows),
    }
