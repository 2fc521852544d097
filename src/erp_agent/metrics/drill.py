"""A figure's documents: any figure of a ``metrics.query`` result — a total, a row of a grouped
table, a bar, an ageing bucket, the earlier period's value — opened as the list of records it
was computed from, read as the user with the same filters, period and scope.

The figure is computed again the way it was (``MetricComputer.read``: the ERP's aggregate or
the rows, links, currencies, time buckets and ageing), grouped additionally by record, and
restricted to the figure's cell; each record's share of the figure is its own cell, so the
listed records add up to the figure by the same arithmetic. The records are then listed as the
user for the columns a reader needs. What the list does not show — records beyond its cap,
records the ERP does not list to the user — is said in words, with how many.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from erp_agent.catalog import Catalog, MeasureFunc, Metric
from erp_agent.errors import ToolInputError
from erp_agent.metrics._cells import Cell
from erp_agent.metrics._drill_cells import Cut, records, same
from erp_agent.metrics._drill_list import Figure, listed
from erp_agent.metrics.compute import MetricComputer
from erp_agent.metrics.periods import Period, Shift, bucket, parse_period
from erp_agent.metrics.request import MetricQuery, parse_query

_REF = re.compile(r"^(res_[A-Za-z0-9_-]+)\.([rpt])(\d{1,6})$")
_KINDS = {"r": "row", "p": "previous", "t": "total"}


@dataclass(frozen=True)
class Target:
    """Which figure of a stored result: a row's value, its earlier period's, or a total."""

    result_id: str
    kind: str  # row | previous | total
    index: int

    @property
    def ref(self) -> str:
        return ref(self.result_id, self.kind, self.index)


def ref(result_id: str, kind: str, index: int) -> str:
    """The drill-down reference of one figure: ``res_….r3`` (row 3, counted from 0),
    ``res_….p3`` (row 3's earlier period), ``res_….t0`` (the first total)."""
    letter = {v: k for k, v in _KINDS.items()}[kind]
    return f"{result_id}.{letter}{index}"


def parse_ref(text: str) -> Target:
    found = _REF.match(str(text).strip())
    if found is None:
        raise ToolInputError(
            f"{text!r} is not a drill-down reference: one looks like res_….r3 (row 3 of a "
            "result, counted from 0), res_….t0 (its first total) or res_….p3 (row 3's earlier "
            "period)."
        )
    return Target(found[1], _KINDS[found[2]], int(found[3]))


def drillable(data: Any) -> bool:
    """Whether a stored result's figures open their documents."""
    spec = data.get("drill") if isinstance(data, Mapping) else None
    return isinstance(spec, Mapping) and bool(spec.get("listable"))


def row_refs(result_id: str, data: Any, rows: Sequence[Mapping[str, Any]]) -> list[str | None]:
    """The reference of each row's figure (None for a row without one)."""
    if not drillable(data):
        return [None] * len(rows)
    spec = data["drill"]
    metric = str(spec.get("metric"))
    everything = data.get("rows") or []
    index = {id(r): i for i, r in enumerate(everything)}
    out: list[str | None] = []
    for row in rows:
        at = index.get(id(row))
        if at is None:  # a copy of the row (a page of a tabulated result): found by equality
            at = next((i for i, r in enumerate(everything) if r == row), None)
        usable = at is not None and row.get(metric) is not None
        if usable and row.get("others") and not _others_drillable(spec):
            usable = False
        out.append(ref(result_id, "row", at) if usable and at is not None else None)
    return out


class DrillTotal(TypedDict):
    """A total of a result that opens its documents: its currency (or unit), value, records
    counted and the reference ``results.drill`` opens."""

    currency: str | None  # its currency, or a quantity's unit; None for a plain count
    value: float | int  # as the result holds it (rounded by ``metrics.answer``)
    records: int | None  # the records it counts
    ref: str  # ``res_….t0``


def total_refs(result_id: str, data: Any) -> list[DrillTotal]:
    """Each total of a result (one per currency or unit) with its reference."""
    if not drillable(data):
        return []
    out: list[DrillTotal] = []
    for i, total in enumerate(data.get("totals") or []):
        if isinstance(total, Mapping) and total.get("value") is not None:
            slot = total.get("uom") if "uom" in total else total.get("currency")
            out.append({"currency": slot, "value": total["value"],
                        "records": total.get("records"), "ref": ref(result_id, "total", i)})  # fmt: skip
    return out


def _others_drillable(spec: Mapping[str, Any]) -> bool:
    return bool(spec.get("others"))


def _slot_of(metric: Metric, row: Mapping[str, Any]) -> Any:
    if metric.unit_field:
        return row.get("uom")
    return row.get("currency") if metric.is_money else None


def _locate(
    data: Mapping[str, Any], query: MetricQuery, target: Target
) -> tuple[Cut, Figure, bool]:
    """The cut and the figure a reference names; True when it is the earlier period's."""
    metric = query.metric
    dims = [d.name for d in query.dimensions]
    if target.kind == "total":
        totals = [t for t in data.get("totals") or [] if isinstance(t, Mapping)]
        if not 0 <= target.index < len(totals):
            raise ToolInputError(
                f"Result {target.result_id} has no total {target.index} "
                f"(it has {len(totals)}, counted from 0)."
            )
        total = totals[target.index]
        slot = total.get("uom") if metric.unit_field else total.get("currency")
        whole = "the latest" if metric.measure.func is MeasureFunc.LATEST else "total"
        figure = Figure(f"{metric.label}, {whole}" + (f" ({slot})" if slot else ""),
                        total.get("value"), total.get("records"), slot)  # fmt: skip
        return Cut((), None, slot, whole=True), figure, False
    rows = [r for r in data.get("rows") or [] if isinstance(r, Mapping)]
    if not 0 <= target.index < len(rows):
        raise ToolInputError(
            f"Result {target.result_id} has no row {target.index} "
            f"(it has {len(rows)}, counted from 0)."
        )
    row = rows[target.index]
    slot = _slot_of(metric, row)
    label = str(row[query.grain]) if query.grain and row.get(query.grain) is not None else None
    previous = target.kind == "previous"
    value = row.get("previous") if previous else row.get(metric.name)
    if value is None:
        raise ToolInputError(
            f"Row {target.index} of result {target.result_id} has no "
            f"{'earlier-period ' if previous else ''}figure to open."
        )
    named = [f"{d.label} {row.get(d.name)}" for d in query.dimensions]
    if label and not row.get("others"):
        named.append(label)
    cut = Cut(tuple(row.get(d) for d in dims), label, slot)
    if row.get("others"):
        cut.others = True
        named = ["All others"] + ([label] if query.dimensions and label else [])
        above = [r for r in rows if not r.get("others") and same(_slot_of(metric, r), slot)]
        if query.grain and query.dimensions:
            cut.shown = {tuple(r.get(d) for d in dims) for r in above}
        else:
            cut.label = None
            cut.shown = {
                (*(r.get(d) for d in dims), *((r.get(query.grain),) if query.grain else ()))
                for r in above
            }
    words = f"{metric.label}: " + ", ".join(named or ["all"])
    if previous:
        words += ", the earlier period"
    if slot:
        words += f" ({slot})"
    counted = None if previous else row.get("records")
    return cut, Figure(words, value, counted, slot), previous


def _query(catalog: Catalog, spec: Mapping[str, Any]) -> MetricQuery:
    metric = catalog.metrics.get(str(spec.get("metric")))
    if metric is None:
        raise ToolInputError(
            f"The metric {spec.get('metric')!r} is no longer defined; ask the question again."
        )
    grain = [spec["grain"]] if spec.get("grain") else []
    return parse_query(
        catalog,
        {"metric": metric.name, "group_by": [*spec.get("dimensions", []), *grain],
         "filters": list(spec.get("filters") or [])},
    )  # fmt: skip


def _period(raw: Any) -> Period:
    return parse_period(raw if isinstance(raw, Mapping) else None, ())


async def drill(
    computer: MetricComputer, catalog: Catalog, data: Mapping[str, Any], target: Target
) -> dict[str, Any]:
    """The documents behind one figure of a stored ``metrics.query`` result, as a list result
    (rows, columns, the figure and what was listed of it, notes, the definition)."""
    spec = data.get("drill")
    if not isinstance(spec, Mapping):
        raise ToolInputError(
            f"Result {target.result_id} holds no figures of a metric; only metrics.query "
            "results open the documents behind their figures."
        )
    query = _query(catalog, spec)
    metric = query.metric
    if not spec.get("listable"):
        raise ToolInputError(
            f"{metric.label} is computed by the ERP's own report, whose rows are the report's, "
            "not a list of records: open the report for its lines."
        )
    if query.grain == "fiscal_year":
        await computer.load_fiscal_years()
    cut, figure, previous = _locate(data, query, target)
    period = _period(spec.get("previous") if previous else spec.get("period"))
    if previous and cut.label and query.grain:
        cut.label = _earlier_label(cut.label, query.grain, period, spec, computer)
    parts: list[tuple[str, Metric]] = [("value", metric)]
    if metric.measure.func is MeasureFunc.RATIO:
        parts = [("numerator", catalog.metric(str(metric.measure.numerator))),
                 ("denominator", catalog.metric(str(metric.measure.denominator)))]  # fmt: skip
    if metric.measure.func is MeasureFunc.LATEST:
        from erp_agent.metrics._drill_latest import latest_records

        return await latest_records(computer, catalog, query, period, cut, figure)
    cells: dict[str, dict[Any, Cell]] = {}
    sources: list[str] = []
    for role, part in parts:
        found, source = await records(computer, query, part, period, cut, spec)
        cells[role] = found
        sources.append(source)
    return await listed(computer, catalog, query, parts, cells, figure, cut, period, sources)


def _earlier_label(
    label: str, grain: str, period: Period, spec: Mapping[str, Any], computer: MetricComputer
) -> str | None:
    """The earlier period's bucket a row's bucket is compared with."""
    raw = spec.get("shift") or {}
    shift = Shift(int(raw.get("months") or 0), int(raw.get("days") or 0))
    if not (period.start and period.end):
        return None
    day = period.start
    while day <= period.end:
        earlier, start = bucket(day, grain, computer.fiscal_years)
        if bucket(shift.forward(start), grain, computer.fiscal_years)[0] == label:
            return earlier
        day += dt.timedelta(days=1)
    return None
