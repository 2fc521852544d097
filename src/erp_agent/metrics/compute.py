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
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from erp_agent.catalog import Catalog, Entity, MeasureFunc, Metric, MetricFilter, Returns
from erp_agent.catalog.fields import FieldType
from erp_agent.connectors.query import (
    AggregateRequest,
    DatePart,
    Filter,
    Func,
    GroupKey,
    Measure,
    Op,
)
from erp_agent.metrics.periods import FiscalYear, Period, bucket, fiscal_years_aligned_to_months
from erp_agent.metrics.request import DimensionFilter, MetricQuery
from erp_agent.tools.base import ToolContext
from erp_agent.tools.factories.documents import documents_text

_OPS = {o.value: o for o in Op}
_ID_FILTER_LIMIT = 500  # above this many ids, read the linked records whole instead
_COUNT = Measure(Func.COUNT)
_CURRENCY_TTL = 300.0
_CURRENCIES: dict[tuple[int, str], tuple[float, dict[Any, Any]]] = {}
Key = tuple[Any, ...]


@dataclass
class Cell:
    """The exact running figures of one group."""

    total: Decimal = Decimal(0)
    count: int = 0
    low: Decimal | None = None
    high: Decimal | None = None
    distinct: set[Any] = field(default_factory=set)

    def add(self, other: Cell) -> None:
        self.total += other.total
        self.count += other.count
        if other.low is not None:
            self.low = other.low if self.low is None else min(self.low, other.low)
        if other.high is not None:
            self.high = other.high if self.high is None else max(self.high, other.high)
        self.distinct |= other.distinct

    def value(self, func: MeasureFunc) -> Decimal | None:
        if func is MeasureFunc.SUM:
            return self.total
        if func is MeasureFunc.COUNT:
            return Decimal(self.count)
        if func is MeasureFunc.AVG:
            return self.total / self.count if self.count else None
        if func is MeasureFunc.MIN:
            return self.low
        if func is MeasureFunc.MAX:
            return self.high
        return Decimal(len(self.distinct))


@dataclass
class Computed:
    """A metric's groups: key = (dimension values..., [period label], currency)."""

    groups: dict[Key, Cell]
    period_starts: dict[str, dt.date]
    record_count: int
    sources: list[str]
    filters: list[str]
    notes: list[str] = field(default_factory=list)


def _dec(value: Any) -> Decimal:
    return Decimal(str(value)) if value is not None else Decimal(0)


def resolve_today(value: Any, today: dt.date) -> Any:
    """``today``/``today-30`` in a metric filter -> an ISO date; lists element-wise."""
    if isinstance(value, list):
        return [resolve_today(v, today) for v in value]
    if isinstance(value, str):
        from erp_agent.catalog.metrics import TODAY

        match = TODAY.match(value)
        if match:
            sign, days = match.groups()
            offset = int(days or 0) * (-1 if sign == "-" else 1)
            return (today + dt.timedelta(days=offset)).isoformat()
    return value


def _describe_filter(entity: Entity, flt: MetricFilter, today: dt.date) -> str:
    value = resolve_today(flt.value, today)
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
        self, metric: Metric, entity: Entity, period: Period
    ) -> tuple[list[Filter], list[MetricFilter], list[str]]:
        """The ERP filters that define the metric and its period, the row-level ones, and
        every one of them in words."""
        filters: list[Filter] = []
        words: list[str] = []
        if metric.documents == "submitted" and "docstatus" in entity.fields:
            filters.append(Filter("docstatus", Op.EQ, 1))
            words.append(documents_text(entity, 1, self.ctx.connector.document_state))
        if metric.returns is Returns.EXCLUDED:
            filters.append(Filter("is_return", Op.EQ, 0))
        elif metric.returns is Returns.ONLY:
            filters.append(Filter("is_return", Op.EQ, 1))
        if metric.returns_text:
            words.append(str(metric.returns_text))
        row_level: list[MetricFilter] = []
        for flt in metric.filters:
            words.append(_describe_filter(entity, flt, self.today))
            if flt.row_level:
                row_level.append(flt)
            else:
                filters.append(
                    Filter(flt.field, _OPS[flt.op], resolve_today(flt.value, self.today))
                )
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
            words.append(f"{entity.label} {date_field.label.lower()} {period.text()}")
        return filters, row_level, words

    async def _dimension_filters(
        self, entity: Entity, metric: Metric, given: Sequence[DimensionFilter]
    ) -> tuple[list[Filter] | None, list[str], list[str]]:
        """ERP filters for the user's dimension filters (None: nothing can match)."""
        filters: list[Filter] = []
        words: list[str] = []
        notes: list[str] = []
        for flt in given:
            path = str(flt.dimension.path_for(entity.name, entity.fields))
            op = _OPS[flt.op]
            words.append(flt.text())
            if "." not in path:
                filters.append(Filter(path, op, flt.value))
                continue
            ids = await self._matching_ids(entity, path, op, flt.value)
            head = path.split(".")[0]
            notes.append(
                f"{flt.dimension.label} filtered through each {entity.label}'s "
                f"{entity.fields[head].label.lower()} ({len(ids)} matching, read as you)"
            )
            if not ids:
                return None, words, notes
            filters.append(Filter(head, Op.IN, ids))
        return filters, words, notes

    async def compute(self, query: MetricQuery, metric: Metric, period: Period) -> Computed:
        entity = self.catalog.entity(metric.entity)
        filters, row_level, words = self.base_filters(metric, entity, period)
        extra, dim_words, notes = await self._dimension_filters(entity, metric, query.filters)
        words += dim_words
        if extra is None:
            return Computed({}, {}, 0, ["nothing matched the filters"], words, notes)
        filters += extra
        paths = [str(d.path_for(entity.name, entity.fields)) for d in query.dimensions]
        currency_path = self._currency_path(metric, entity)
        heads = list(dict.fromkeys(p.split(".")[0] for p in [*paths, currency_path] if p))
        func = metric.measure.func
        distinct = metric.measure.field if func is MeasureFunc.COUNT_DISTINCT else None
        if distinct and distinct not in heads:
            heads.append(distinct)
        grain_keys = self._grain_keys(query.grain, metric)
        # The company -> currency map is read beside the figures, not after them.
        currencies = (
            asyncio.ensure_future(self.company_currencies())
            if metric.currency == "company" and self._currencies is None
            else None
        )
        if row_level:
            rows, method = await self._rows(entity, heads, grain_keys, metric, filters, row_level)
        else:
            request = AggregateRequest(
                measures=self._measures(metric),
                group_by=(*(GroupKey(h) for h in heads), *grain_keys),
                filters=tuple(filters),
            )
            result = await self.ctx.connector.aggregate(
                self.ctx.session.credential, entity.name, request
            )
            rows, method = result.rows, f"{_SOURCE[result.method]}: {result.detail}"
        if currencies is not None:
            self._currencies = await currencies
        return await self._regroup(
            query, metric, entity, rows, paths, currency_path, grain_keys, method, words, notes
        )

    def _currency_path(self, metric: Metric, entity: Entity) -> str | None:
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

    def _measures(self, metric: Metric) -> tuple[Measure, ...]:
        func, name = metric.measure.func, metric.measure.field
        if func in (MeasureFunc.SUM, MeasureFunc.AVG):
            return (Measure(Func.SUM, name), _COUNT)
        if func is MeasureFunc.MIN:
            return (Measure(Func.MIN, name), _COUNT)
        if func is MeasureFunc.MAX:
            return (Measure(Func.MAX, name), _COUNT)
        return (_COUNT,)

    async def _rows(
        self,
        entity: Entity,
        heads: list[str],
        grain_keys: tuple[GroupKey, ...],
        metric: Metric,
        filters: list[Filter],
        row_level: list[MetricFilter],
    ) -> tuple[list[dict[str, Any]], str]:
        """Every matching record (only the needed fields), row-level filters applied here."""
        needed = set(heads)
        if metric.measure.field:
            needed.add(metric.measure.field)
        if grain_keys:
            needed.add(grain_keys[0].field)
        for flt in row_level:
            needed |= {p.split(".")[0] for p in (flt.field, flt.reference) if p}
        page = await self.ctx.connector.list(
            self.ctx.session.credential, entity.name, fields=sorted(needed),
            filters=filters, limit=0,
        )  # fmt: skip
        records = page.records
        for flt in row_level:
            records = await self._apply_row_filter(entity, records, flt)
        out = []
        for record in records:
            row: dict[str, Any] = {h: record.get(h) for h in heads}
            for key in grain_keys:
                row[key.alias] = _date_part(record.get(key.field), key.part)
            if metric.measure.field:
                value = record.get(metric.measure.field)
                row[f"sum_{metric.measure.field}"] = value
                row[f"min_{metric.measure.field}"] = value
                row[f"max_{metric.measure.field}"] = value
            row[_COUNT.alias] = 1
            out.append(row)
        detail = (
            f"computed exactly here from all {len(page.records)} records read as you "
            f"({len(records)} kept by the comparisons the ERP cannot make in a filter)"
        )
        return out, detail

    async def _apply_row_filter(
        self, entity: Entity, records: list[dict[str, Any]], flt: MetricFilter
    ) -> list[dict[str, Any]]:
        async def values(path: str) -> list[Any]:
            if "." not in path:
                return [r.get(path) for r in records]
            head = path.split(".")[0]
            mapping = await self._link_map(entity, path, (r.get(head) for r in records))
            return [mapping.get(r.get(head)) for r in records]

        left = await values(flt.field)
        if flt.reference:
            right = await values(flt.reference)
        else:
            right = [resolve_today(flt.value, self.today)] * len(records)
        return [r for r, a, b in zip(records, left, right, strict=True) if _compare(a, flt.op, b)]

    async def _regroup(
        self,
        query: MetricQuery,
        metric: Metric,
        entity: Entity,
        rows: list[dict[str, Any]],
        paths: list[str],
        currency_path: str | None,
        grain_keys: tuple[GroupKey, ...],
        source: str,
        words: list[str],
        notes: list[str],
    ) -> Computed:
        maps: dict[str, dict[Any, Any]] = {}
        for path in [*paths, currency_path]:
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

        def read(row: dict[str, Any], path: str) -> Any:
            head = path.split(".")[0]
            return maps[path].get(row.get(head)) if "." in path else row.get(head)

        groups: dict[Key, Cell] = {}
        starts: dict[str, dt.date] = {}
        func, name = metric.measure.func, metric.measure.field
        total_records = 0
        for row in rows:
            key: list[Any] = [read(row, p) for p in paths]
            if query.grain:
                day = _grain_day(row, grain_keys)
                if day is None:
                    label: str | None = None
                else:
                    label, start = bucket(day, query.grain, self.fiscal_years)
                    starts[label] = start
                key.append(label)
            currency = read(row, currency_path) if currency_path else None
            if to_currency is not None:
                currency = to_currency.get(currency)
            key.append(currency)
            count = int(row.get(_COUNT.alias) or 0)
            total_records += count
            cell = Cell(count=count)
            if func in (MeasureFunc.SUM, MeasureFunc.AVG):
                cell.total = _dec(row.get(f"sum_{name}"))
            elif func is MeasureFunc.MIN and row.get(f"min_{name}") is not None:
                cell.low = _dec(row.get(f"min_{name}"))
            elif func is MeasureFunc.MAX and row.get(f"max_{name}") is not None:
                cell.high = _dec(row.get(f"max_{name}"))
            elif func is MeasureFunc.COUNT_DISTINCT and row.get(str(name)) is not None:
                cell.distinct = {row.get(str(name))}
            groups.setdefault(tuple(key), Cell()).add(cell)
        if query.grain == "fiscal_year" and not self.fiscal_years:
            notes.append("no fiscal years were readable: fiscal years taken as calendar years")
        return Computed(groups, starts, total_records, [source], words, notes)


_SOURCE = {"pushdown": "ERP aggregate", "chunked": "chunked exact read"}


def _date_part(value: Any, part: DatePart | None) -> Any:
    if value is None or part is None:
        return value
    text = str(value)
    year, month = int(text[:4]), int(text[5:7])
    return {DatePart.YEAR: year, DatePart.MONTH: month, DatePart.QUARTER: (month + 2) // 3}[part]


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


def _compare(left: Any, op: str, right: Any) -> bool:
    if op == "is set":
        return left not in (None, "")
    if op == "is not set":
        return left in (None, "")
    if left is None or right is None:
        return False
    if op in ("in", "not in"):
        return (left in right) == (op == "in")
    if op == "between":
        return bool(_num(right[0]) <= _num(left) <= _num(right[1]))
    a, b = _num(left), _num(right)
    return bool({
        "=": a == b, "!=": a != b, ">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b,
    }.get(op, False))  # fmt: skip


def _num(value: Any) -> Any:
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return Decimal(str(value))
    return value
