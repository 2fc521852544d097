"""Computing one metric exactly, as the user: the connector's aggregate (pushed down to the ERP,
or its exact chunked fallback) grouped by the first field of every dimension path, then — where a
dimension, the currency or a time grain needs it — regrouped here in Decimal.

A dimension reached through a link (an order's customer group via its customer) is resolved by
reading the linked records as the user; a filter on one becomes a filter on the link's ids.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Iterable, Sequence
from typing import Any

from erp_agent.catalog import Catalog, Dimension, Entity, MeasureFunc, Metric, MetricFilter, Returns
from erp_agent.catalog.fields import FieldType
from erp_agent.catalog.metrics import resolve_today
from erp_agent.connectors.query import (
    AggregateRequest,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.metrics._balance import running_balance
from erp_agent.metrics._cells import Cell, Computed, Key, dec
from erp_agent.metrics._latest import compute_latest
from erp_agent.metrics._report import compute_report
from erp_agent.metrics._rows import compare as _compare
from erp_agent.metrics._rows import read_rows
from erp_agent.metrics._trees import subtree
from erp_agent.metrics.periods import FiscalYear, Period, bucket, fiscal_years_aligned_to_months
from erp_agent.metrics.request import DimensionFilter, MetricQuery
from erp_agent.tools.base import ToolContext
from erp_agent.tools.factories.documents import documents_text

__all__ = ["Cell", "Computed", "Key", "MetricComputer"]

_OPS = {o.value: o for o in Op}
_ID_FILTER_LIMIT = 500  # above this many ids, read the linked records whole instead
_COUNT = Measure(Func.COUNT)
_CURRENCY_TTL = 300.0
_CURRENCIES: dict[tuple[int, str], tuple[float, dict[Any, Any]]] = {}


def _describe_filter(
    entity: Entity, flt: MetricFilter, today: dt.date, user: str | None = None
) -> str:
    value = resolve_today(flt.value, today, user)
    if flt.reference:
        value = flt.reference.replace(".", "'s ").replace("_", " ")
    label = flt.field.replace(".", "'s ").replace("_", " ")
    field_ = entity.fields.get(flt.field)
    if field_ is not None:
        label = field_.label.lower()
    if flt.op in ("is set", "is not set"):
        return f"{label} {flt.op}"
    shown = ", ".join(map(str, value)) if isinstance(value, list) else value
    if flt.op == "between" and isinstance(value, list):
        shown = f"{value[0]} and {value[1]}"
    return f"{label} {flt.op} {shown}"


class MetricComputer:
    """Computes metrics for one tool call (link maps are read once per call)."""

    def __init__(self, ctx: ToolContext, catalog: Catalog, today: dt.date) -> None:
        self.ctx = ctx
        self.catalog = catalog
        self.today = today
        self.fiscal_years: list[FiscalYear] = []
        self._maps: dict[tuple[str, str], dict[Any, Any]] = {}
        self._currencies: dict[Any, Any] | None = None
        self.report_runs: dict[str, Any] = {}  # report runs of this call, by their parameters

    # ------------------------------------------------------------------ reads as the user

    async def load_fiscal_years(self) -> list[FiscalYear]:
        page = await self.ctx.connector.list(
            self.ctx.session.credential, "fiscal_year", fields=["start_date", "end_date"], limit=0
        )
        self.fiscal_years = sorted(
            (
                FiscalYear(
                    str(r["id"]),
                    dt.date.fromisoformat(str(r["start_date"])[:10]),
                    dt.date.fromisoformat(str(r["end_date"])[:10]),
                )
                for r in page.records
                if r.get("start_date") and r.get("end_date")
            ),
            key=lambda fy: fy.start,
        )
        return self.fiscal_years

    async def _link_map(self, entity: Entity, path: str, values: Iterable[Any]) -> dict[Any, Any]:
        """first-hop value -> value at the end of ``path`` (``customer.customer_group``)."""
        head, _, rest = path.partition(".")
        target = self.catalog.entity(str(entity.fields[head].target))
        next_head = rest.split(".")[0]
        wanted = {v for v in values if v is not None}
        cache = self._maps.setdefault((target.name, next_head), {})
        missing = sorted(wanted - set(cache), key=str)
        if missing:
            filters = [Filter("id", Op.IN, missing)] if len(missing) <= _ID_FILTER_LIMIT else []
            page = await self.ctx.connector.list(
                self.ctx.session.credential, target.name, fields=[next_head],
                filters=filters, limit=0,
            )  # fmt: skip
            for record in page.records:
                cache[record["id"]] = record.get(next_head)
        mapped = {v: cache.get(v) for v in wanted}
        if "." in rest:
            deeper = await self._link_map(target, rest, mapped.values())
            mapped = {k: deeper.get(v) for k, v in mapped.items()}
        return mapped

    async def _matching_ids(self, entity: Entity, path: str, op: Op, value: Any) -> list[Any]:
        """Ids of the records ``path``'s first link points to whose end of path matches."""
        head, _, rest = path.partition(".")
        target = self.catalog.entity(str(entity.fields[head].target))
        if "." in rest:
            inner = await self._matching_ids(target, rest, op, value)
            flt = Filter(rest.split(".")[0], Op.IN, inner)
        else:
            flt = Filter(rest, op, value)
        page = await self.ctx.connector.list(
            self.ctx.session.credential, target.name, fields=["id"], filters=[flt], limit=0
        )
        return [r["id"] for r in page.records]

    async def company_currencies(self) -> dict[Any, Any]:
        """Each company's currency, read as the user; kept a few minutes per user (a company's
        currency cannot change once it has transactions)."""
        key = (id(self.ctx.connector), self.ctx.session.user)
        cached = _CURRENCIES.get(key)
        if cached is not None and time.monotonic() - cached[0] < _CURRENCY_TTL:
            return cached[1]
        page = await self.ctx.connector.list(
            self.ctx.session.credential, "company", fields=["currency"], limit=0
        )
        found = {r["id"]: r.get("currency") for r in page.records}
        _CURRENCIES[key] = (time.monotonic(), found)
        return found

    # ------------------------------------------------------------------ one metric

    def base_filters(
        self, metric: Metric, entity: Entity, period: Period, cumulative: bool | None = None
    ) -> tuple[list[Filter], list[MetricFilter], list[str]]:
        """The ERP filters that define the metric and its period, the row-level ones, and
        every one of them in words. A cumulative metric (a balance) counts every record dated
        on or before the period's end, or the query's day."""
        filters: list[Filter] = []
        words: list[str] = []
        life = entity.lifecycle  # "booked documents only", in the entity's own lifecycle
        if metric.documents == "submitted" and life is not None and life.field in entity.fields:
            filters.append(Filter(life.field, Op.EQ, life.booked))
            words.append(documents_text(entity, life.booked, self.ctx.connector.document_state))
        if metric.returns is Returns.EXCLUDED:
            filters.append(Filter("is_return", Op.EQ, 0))
        elif metric.returns is Returns.ONLY:
            filters.append(Filter("is_return", Op.EQ, 1))
        if metric.returns_text:
            words.append(str(metric.returns_text))
        row_level: list[MetricFilter] = []
        user = self.ctx.session.user
        for flt in metric.filters:
            words.append(_describe_filter(entity, flt, self.today, user))
            if flt.row_level:
                row_level.append(flt)
            else:
                filters.append(
                    Filter(flt.field, _OPS[flt.op], resolve_today(flt.value, self.today, user))
                )
        balance = metric.cumulative if cumulative is None else cumulative
        if metric.date_field and balance:
            period = Period(None, period.end or self.today)
        if metric.date_field and (period.start or period.end):
            date_field = entity.field(metric.date_field)
            end = period.end.isoformat() if period.end else None
            if end and date_field.type is FieldType.DATETIME:
                end += " 23:59:59.999999"
            start = period.start.isoformat() if period.start else None
            if start and end:
                filters.append(Filter(metric.date_field, Op.BETWEEN, [start, end]))
            elif start:
                filters.append(Filter(metric.date_field, Op.GE, start))
            else:
                filters.append(Filter(metric.date_field, Op.LE, end))
            label = f"{entity.label} {date_field.label.lower()}"
            if balance and period.end:
                words.append(f"{label} on or before {period.end.isoformat()} (a balance)")
            else:
                words.append(f"{label} {period.text()}")
        return filters, row_level, words

    async def _dimension_filters(
        self, entity: Entity, metric: Metric, given: Sequence[DimensionFilter]
    ) -> tuple[list[Filter] | None, list[str], list[str], list[DimensionFilter]]:
        """ERP filters for the user's dimension filters (None: nothing can match), and the
        filters on ageing dimensions, applied here to each record's age."""
        filters: list[Filter] = []
        words: list[str] = []
        notes: list[str] = []
        ages: list[DimensionFilter] = []
        for flt in given:
            path = str(flt.dimension.path_for(entity.name, entity.fields))
            op, value = _OPS[flt.op], flt.value
            words.append(flt.text())
            if flt.dimension.age_ranges:
                ages.append(flt)
                continue
            if op in (Op.EQ, Op.IN):
                wanted = value if isinstance(value, list) else [value]
                expanded, grew = await subtree(self, flt.dimension, wanted)
                if grew:
                    op, value = Op.IN, expanded
                    words[-1] += f" (with the {flt.dimension.label.lower()}s under it)"
            if "." not in path:
                filters.append(Filter(path, op, value))
                continue
            ids = await self._matching_ids(entity, path, op, value)
            head = path.split(".")[0]
            notes.append(
                f"{flt.dimension.label} filtered through each {entity.label}'s "
                f"{entity.fields[head].label.lower()} ({len(ids)} matching, read as you)"
            )
            if not ids:
                return None, words, notes, ages
            filters.append(Filter(head, Op.IN, ids))
        return filters, words, notes, ages

    async def compute(self, query: MetricQuery, metric: Metric, period: Period) -> Computed:
        if metric.report is not None:
            return await compute_report(self, query, metric, period)
        if metric.measure.func is MeasureFunc.LATEST:
            return await compute_latest(self, query, metric, period)
        if metric.cumulative and query.grain:
            return await running_balance(self, query, metric, period)
        return await self.read(query, metric, period)

    async def read(
        self,
        query: MetricQuery,
        metric: Metric,
        period: Period,
        *,
        cumulative: bool | None = None,
        grain: str | None = None,
        narrow: Sequence[Filter] = (),
    ) -> Computed:
        """The metric's groups over ``period``, from one ERP aggregate (or the rows, when a
        comparison or a figure needs values the ERP cannot filter or add up). ``narrow``: ERP
        filters that only leave out records of other groups (a drill-down's own cell)."""
        entity = self.catalog.entity(metric.entity)
        grain = query.grain if grain is None and cumulative is None else grain
        filters, row_level, words = self.base_filters(metric, entity, period, cumulative)
        extra, dim_words, notes, ages = await self._dimension_filters(entity, metric, query.filters)
        words += dim_words
        if extra is None:
            return Computed({}, {}, 0, ["nothing matched the filters"], words, notes)
        filters += [*extra, *narrow]
        cuts = [(d, str(d.path_for(entity.name, entity.fields))) for d in query.dimensions]
        cuts += [(f.dimension, str(f.dimension.path_for(entity.name, entity.fields))) for f in ages]
        slot = self._currency_path(metric, entity)
        heads = list(dict.fromkeys(p.split(".")[0] for _, p in cuts))
        if slot:
            heads = list(dict.fromkeys([*heads, slot.split(".")[0]]))
        func = metric.measure.func
        distinct = metric.measure.field if func is MeasureFunc.COUNT_DISTINCT else None
        if distinct and distinct not in heads:
            heads.append(distinct)
        grain_keys = self._grain_keys(grain, metric)
        # The company -> currency map is read beside the figures, not after them.
        currencies = (
            asyncio.ensure_future(self.company_currencies())
            if metric.currency == "company" and self._currencies is None
            else None
        )
        sums = _summed_fields(metric)
        if row_level or any("." in f for f in sums):
            rows, method = await read_rows(
                self, entity, heads, grain_keys, metric, filters, row_level, sums
            )
        else:
            request = AggregateRequest(
                measures=self._measures(metric, sums),
                group_by=(*(GroupKey(h) for h in heads), *grain_keys),
                filters=tuple(filters),
            )
            result = await self.ctx.connector.aggregate(
                self.ctx.session.credential, entity.name, request
            )
            rows, method = result.rows, f"{_SOURCE[result.method]}: {result.detail}"
        if currencies is not None:
            self._currencies = await currencies
        computed = await self._regroup(
            query, metric, entity, rows, cuts, slot, grain_keys, method, words, notes,
            grain=grain, sums=sums, ages=ages,
        )  # fmt: skip
        if ages:  # the ageing filters' own grouping is not the query's
            computed.groups = _drop_trailing(computed.groups, len(query.dimensions), len(ages))
        return computed

    def _currency_path(self, metric: Metric, entity: Entity) -> str | None:
        """What the last slot of each group key holds: the currency, or the unit of measure."""
        if metric.unit_field:
            return metric.unit_field
        if metric.currency == "company":
            return self.catalog.dimension("company").path_for(entity.name, entity.fields)
        if metric.currency == "none":
            return None
        return metric.currency

    def _grain_keys(self, grain: str | None, metric: Metric) -> tuple[GroupKey, ...]:
        if grain is None or metric.date_field is None:
            return ()
        date = metric.date_field
        if grain == "year":
            return (GroupKey(date, DatePart.YEAR),)
        if grain == "quarter":
            return (GroupKey(date, DatePart.YEAR), GroupKey(date, DatePart.QUARTER))
        if grain == "month" or (
            grain == "fiscal_year" and fiscal_years_aligned_to_months(self.fiscal_years)
        ):
            return (GroupKey(date, DatePart.YEAR), GroupKey(date, DatePart.MONTH))
        return (GroupKey(date),)  # day, week, or fiscal years starting mid-month

    def _measures(self, metric: Metric, sums: list[str]) -> tuple[Measure, ...]:
        func, name = metric.measure.func, metric.measure.field
        extra = tuple(Measure(Func.SUM, f) for f in sums if f != name)
        if func in (MeasureFunc.SUM, MeasureFunc.AVG, MeasureFunc.NET):
            return (Measure(Func.SUM, name), *extra, _COUNT)
        if func is MeasureFunc.MIN:
            return (Measure(Func.MIN, name), *extra, _COUNT)
        if func is MeasureFunc.MAX:
            return (Measure(Func.MAX, name), *extra, _COUNT)
        return (*extra, _COUNT)

    async def _regroup(
        self,
        query: MetricQuery,
        metric: Metric,
        entity: Entity,
        rows: list[dict[str, Any]],
        cuts: list[tuple[Dimension, str]],
        slot: str | None,
        grain_keys: tuple[GroupKey, ...],
        source: str,
        words: list[str],
        notes: list[str],
        *,
        grain: str | None,
        sums: list[str],
        ages: list[DimensionFilter],
    ) -> Computed:
        maps: dict[str, dict[Any, Any]] = {}
        for path in [*(p for _, p in cuts), slot]:
            if path and "." in path and path not in maps:
                head = path.split(".")[0]
                maps[path] = await self._link_map(entity, path, (r.get(head) for r in rows))
                notes.append(
                    f"{path.split('.')[-1].replace('_', ' ')} looked up from each "
                    f"{entity.label}'s {entity.fields[head].label.lower()} (read as you) and "
                    "regrouped exactly in code"
                )
        to_currency: dict[Any, Any] | None = None
        if metric.currency == "company":
            to_currency = self._currencies or await self.company_currencies()
        if any(d.age_ranges for d, _ in cuts):
            notes.append(f"ages counted in days on {self.today.isoformat()}")

        def read(row: dict[str, Any], dim: Dimension | None, path: str) -> Any:
            head = path.split(".")[0]
            value = maps[path].get(row.get(head)) if "." in path else row.get(head)
            if dim is not None and dim.age_ranges:
                if value is None:
                    return None
                day = dt.date.fromisoformat(str(value)[:10])
                return dim.age_label((self.today - day).days)
            return value

        groups: dict[Key, Cell] = {}
        starts: dict[str, dt.date] = {}
        func, name = metric.measure.func, metric.measure.field
        total_records = 0
        for row in rows:
            key: list[Any] = [read(row, d, p) for d, p in cuts]
            if ages and not all(
                _compare(key[len(query.dimensions) + i], f.op, f.value) for i, f in enumerate(ages)
            ):
                continue
            if grain:
                day = _grain_day(row, grain_keys)
                if day is None:
                    label: str | None = None
                else:
                    label, start = bucket(day, grain, self.fiscal_years)
                    starts[label] = start
                key.append(label)
            unit = read(row, None, slot) if slot else None
            if to_currency is not None:
                unit = to_currency.get(unit)
            key.append(unit)
            count = int(row.get(_COUNT.alias) or 0)
            total_records += count
            cell = Cell(count=count)
            if func in (MeasureFunc.SUM, MeasureFunc.AVG, MeasureFunc.NET):
                cell.total = dec(row.get(f"sum_{name}"))
            elif func is MeasureFunc.MIN and row.get(f"min_{name}") is not None:
                cell.low = dec(row.get(f"min_{name}"))
            elif func is MeasureFunc.MAX and row.get(f"max_{name}") is not None:
                cell.high = dec(row.get(f"max_{name}"))
            elif func is MeasureFunc.COUNT_DISTINCT and row.get(str(name)) is not None:
                cell.distinct = {row.get(str(name))}
            cell.sums = {f: dec(row.get(f"sum_{f}")) for f in sums}
            groups.setdefault(tuple(key), Cell()).add(cell)
        if grain == "fiscal_year" and not self.fiscal_years:
            notes.append("no fiscal years were readable: fiscal years taken as calendar years")
        return Computed(groups, starts, total_records, [source], words, notes)


def _summed_fields(metric: Metric) -> list[str]:
    """Every field a group's sums are kept for: the measure's, a net's second, companions'."""
    names = [*metric.measure.fields] if metric.measure.func in (
        MeasureFunc.SUM, MeasureFunc.AVG, MeasureFunc.NET
    ) else []  # fmt: skip
    for companion in metric.also.values():
        names += companion.measure.fields
    return list(dict.fromkeys(names))


def _drop_trailing(groups: dict[Key, Cell], dims: int, extra: int) -> dict[Key, Cell]:
    """Regroup without the ``extra`` key parts that follow the query's ``dims`` dimensions."""
    out: dict[Key, Cell] = {}
    for key, cell in groups.items():
        short = (*key[:dims], *key[dims + extra :])
        out.setdefault(short, Cell()).add(cell)
    return out


_SOURCE = {"pushdown": "ERP aggregate", "chunked": "chunked exact read"}


def _grain_day(row: dict[str, Any], keys: tuple[GroupKey, ...]) -> dt.date | None:
    values: list[Any] = [row.get(k.alias) for k in keys]
    if not keys or any(v is None for v in values):
        return None
    if keys[0].part is None:
        return dt.date.fromisoformat(str(values[0])[:10])
    year = int(values[0])
    if len(keys) == 1:
        return dt.date(year, 1, 1)
    if keys[1].part is DatePart.QUARTER:
        return dt.date(year, 3 * int(values[1]) - 2, 1)
    return dt.date(year, int(values[1]), 1)
