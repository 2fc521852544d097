"""A metric the ERP's own report computes: the report runs as the user once per company (its
required filter) and per time bucket, and the figure is its column summed over the rows, per
dimension value the rows carry. The report decides what counts (the Gross Profit report's
buying amount from the stock ledger, the Employee Leave Balance report's leave ledger)."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from erp_agent.catalog import Metric
from erp_agent.catalog.metrics import ReportSource
from erp_agent.connectors.base import ReportResult
from erp_agent.errors import ToolInputError
from erp_agent.metrics._cells import Cell, Computed, Key, dec
from erp_agent.metrics._rows import compare
from erp_agent.metrics.periods import Period, bucket
from erp_agent.metrics.request import DimensionFilter, MetricQuery

if TYPE_CHECKING:
    from erp_agent.metrics.compute import MetricComputer

_FALLBACK_START = dt.date(2000, 1, 1)


async def compute_report(
    computer: MetricComputer, query: MetricQuery, metric: Metric, period: Period
) -> Computed:
    source = metric.report
    assert source is not None
    report = computer.catalog.report(source.name)
    start, end = await _bounds(computer, source, period)
    params, post, companies, words = await _params(computer, query, metric, source)
    buckets = _buckets(computer, query.grain, start, end)
    currencies = await computer.company_currencies()
    column = str(metric.measure.field)
    columns = [source.cuts[d.name].column for d in query.dimensions if d.name != "company"]
    groups: dict[Key, Cell] = {}
    starts: dict[str, dt.date] = {}
    rows_read = runs = 0
    for company in companies:
        for label, first, last in buckets:
            result = await _run(computer, source.name, {
                **params, "company": company,
                "from_date": first.isoformat(), "to_date": last.isoformat(),
            })  # fmt: skip
            runs += 1
            for row in result.rows:
                if row.get(column) is None or not all(_matches(row, source, f) for f in post):
                    continue
                rows_read += 1
                key: list[Any] = []
                for dim, col in zip(
                    (d for d in query.dimensions), _with_company(query, columns), strict=True
                ):
                    key.append(company if dim.name == "company" else row.get(str(col)))
                if label is not None:
                    key.append(label)
                    starts[label] = first
                key.append(currencies.get(company) if metric.is_money else None)
                cell = Cell(count=1, total=dec(row.get(column)))
                cell.sums = {
                    f: dec(row.get(f)) for c in metric.also.values() for f in c.measure.fields
                }
                groups.setdefault(tuple(key), Cell()).add(cell)
    words.append(f"the ERP's {report.label} report, {start.isoformat()} to {end.isoformat()}")
    if metric.returns_text:
        words.append(str(metric.returns_text))
    text = (
        f"ERP report ({report.label}), computed by the ERP as you: {runs} run(s), once per "
        f"company{' and ' + str(query.grain) if query.grain else ''}; column {column} summed "
        f"over {rows_read} row(s)"
    )
    return Computed(groups, starts, rows_read, [text], words, [])


def _with_company(query: MetricQuery, columns: list[str | None]) -> list[str | None]:
    """The report column of each query dimension (None for the company, known per run)."""
    out: list[str | None] = []
    others = iter(columns)
    for dim in query.dimensions:
        out.append(None if dim.name == "company" else next(others))
    return out


async def _bounds(
    computer: MetricComputer, source: ReportSource, period: Period
) -> tuple[dt.date, dt.date]:
    """The report's from/to dates: the period, or the metric's default period."""
    if source.default_period == "calendar_year":
        anchor = period.end or period.start or computer.today
        start = period.start or dt.date(anchor.year, 1, 1)
        end = period.end or dt.date(start.year, 12, 31)
        return start, end
    end = period.end or computer.today
    if period.start is not None:
        return period.start, end
    years = computer.fiscal_years or await computer.load_fiscal_years()
    return (min(fy.start for fy in years) if years else _FALLBACK_START), end


async def _params(
    computer: MetricComputer, query: MetricQuery, metric: Metric, source: ReportSource
) -> tuple[dict[str, Any], list[DimensionFilter], list[str], list[str]]:
    """The report's parameters for the query's cuts and filters, the filters applied to its
    rows here, the companies it runs for, and the words for each."""
    params: dict[str, Any] = dict(source.params)
    cut_params: dict[str, Any] = {}
    for dim in query.dimensions:
        if dim.name == "company":
            continue
        if source.cuts[dim.name].column is None:
            raise ToolInputError(
                f"{metric.name} can be filtered by {dim.name} but not grouped by it; its "
                f"groupings: company, {', '.join(n for n, c in source.cuts.items() if c.column)}"
            )
        for name, value in source.cuts[dim.name].params.items():
            if cut_params.get(name, value) != value:
                raise ToolInputError(
                    f"{metric.name} comes from one report run per grouping: it cannot be cut "
                    f"by {', '.join(d.name for d in query.dimensions)} together"
                )
            cut_params[name] = value
    post: list[DimensionFilter] = []
    words: list[str] = []
    companies = sorted(str(c) for c in await computer.company_currencies())
    for flt in query.filters:
        words.append(flt.text())
        values = flt.value if isinstance(flt.value, list) else [flt.value]
        if flt.dimension.name == "company":
            if flt.op not in ("=", "in"):
                raise ToolInputError(f"{metric.name}: filter company with = or in")
            companies = [c for c in companies if c in values]
            continue
        cut = source.cuts[flt.dimension.name]
        if cut.filter_param and flt.op == "=":
            params[cut.filter_param] = flt.value
        elif cut.column:
            # The report's rows carry the column only when it groups by it ("gross profit on
            # Red Widgets" runs it by item and keeps that item's row).
            for name, value in cut.params.items():
                if cut_params.get(name, value) != value:
                    raise ToolInputError(
                        f"{metric.name} comes from one report run per grouping: it cannot be "
                        f"filtered by {flt.dimension.name} and cut by "
                        f"{', '.join(d.name for d in query.dimensions)} together"
                    )
                cut_params[name] = value
            post.append(flt)
        else:
            raise ToolInputError(
                f"{metric.name} can be filtered by {flt.dimension.name} only with '='"
            )
    params |= cut_params or source.plain
    return params, post, companies, words


def _matches(row: dict[str, Any], source: ReportSource, flt: DimensionFilter) -> bool:
    return compare(row.get(str(source.cuts[flt.dimension.name].column)), flt.op, flt.value)


def _buckets(
    computer: MetricComputer, grain: str | None, start: dt.date, end: dt.date
) -> list[tuple[str | None, dt.date, dt.date]]:
    """(label, first day, last day) of each time bucket in [start, end]; one without a grain."""
    if grain is None:
        return [(None, start, end)]
    out: dict[str, list[dt.date]] = {}
    day = start
    while day <= end:
        label, _ = bucket(day, grain, computer.fiscal_years)
        out.setdefault(label, [day, day])[1] = day
        day += dt.timedelta(days=1)
    return [(label, first, last) for label, (first, last) in out.items()]


async def _run(computer: MetricComputer, report: str, params: dict[str, Any]) -> ReportResult:
    """The report run as the user, once per parameters within one tool call."""
    key = json.dumps([report, params], sort_keys=True, default=str)
    cached = computer.report_runs.get(key)
    if cached is None:
        cached = await computer.ctx.connector.run_report(
            computer.ctx.session.credential, report, params
        )
        computer.report_runs[key] = cached
    return cached
