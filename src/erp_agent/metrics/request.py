"""The arguments of ``metrics.query`` checked against the catalog: every mistake is a
``ToolInputError`` naming the allowed values, so the model can correct its call."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from erp_agent.catalog import Catalog, Dimension, MeasureFunc, Metric
from erp_agent.errors import ToolInputError
from erp_agent.metrics.periods import COMPARISONS, GRAINS

FILTER_OPS = ("=", "!=", "in", "not in", ">", ">=", "<", "<=", "between", "like")
HAVING_OPS = (">", ">=", "<", "<=", "=", "!=")
MAX_TOP = 1000


@dataclass(frozen=True)
class DimensionFilter:
    dimension: Dimension
    op: str
    value: Any

    def text(self) -> str:
        value = ", ".join(map(str, self.value)) if isinstance(self.value, list) else self.value
        return f"{self.dimension.label} {self.op} {value}"


@dataclass(frozen=True)
class Having:
    op: str
    value: float


@dataclass
class MetricQuery:
    metric: Metric
    dimensions: list[Dimension] = field(default_factory=list)
    grain: str | None = None
    filters: list[DimensionFilter] = field(default_factory=list)
    period: Mapping[str, Any] | None = None
    compare_to: str | None = None
    compare_period: Mapping[str, Any] | None = None  # an explicit earlier period
    top: int | None = None
    others: bool = False
    order: str | None = None
    having: Having | None = None
    as_of: str | None = None


def _unknown(kind: str, name: object, allowed: Sequence[str]) -> ToolInputError:
    close = difflib.get_close_matches(str(name), list(allowed), n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return ToolInputError(f"unknown {kind} {name!r}.{hint} Allowed: {', '.join(allowed)}")


def _metric(catalog: Catalog, name: object) -> Metric:
    metric = catalog.metrics.get(str(name))
    if metric is not None:
        return metric
    wanted = str(name).lower().replace("_", " ")
    for candidate in catalog.metrics.values():
        if wanted in (candidate.label.lower(), *(s.lower() for s in candidate.synonyms)):
            return candidate
    raise _unknown("metric", name, list(catalog.metrics))


def _dimension(catalog: Catalog, metric: Metric, name: object) -> Dimension:
    allowed = list(metric.dimensions)
    if str(name) in allowed:
        return catalog.dimension(str(name))
    if str(name) in catalog.dimensions:
        raise ToolInputError(
            f"{metric.name} cannot be cut by {name!r}. Its dimensions: {', '.join(allowed)}"
        )
    raise _unknown(f"dimension of {metric.name}", name, allowed)


def parse_query(catalog: Catalog, args: Mapping[str, Any]) -> MetricQuery:
    """``metrics.query`` arguments -> a checked ``MetricQuery``."""
    metric = _metric(catalog, args.get("metric"))
    query = MetricQuery(metric=metric)
    dated = metric.date_field is not None or metric.report is not None
    for name in args.get("group_by") or ():
        if name in GRAINS:
            if not dated:
                raise ToolInputError(
                    f"{metric.name} is a figure as of now, with no date to group by {name!r}; "
                    f"group it by {', '.join(metric.dimensions) or 'nothing'}"
                )
            if query.grain is not None:
                raise ToolInputError(f"group by one time grain only, not {query.grain} and {name}")
            query.grain = str(name)
            continue
        dim = _dimension(catalog, metric, name)
        if dim in query.dimensions:
            raise ToolInputError(f"{name!r} is listed twice in group_by")
        query.dimensions.append(dim)
    if len(query.dimensions) > 3:
        raise ToolInputError("group by at most three dimensions (and one time grain)")
    for raw in args.get("filters") or ():
        query.filters.append(_filter(catalog, metric, raw))
    period = args.get("period")
    if period and not dated:
        raise ToolInputError(
            f"{metric.name} is a figure as of now (it has no date); leave out period"
        )
    query.period = period or None
    compare = args.get("compare_to")
    if compare is not None and compare not in COMPARISONS:
        raise _unknown("compare_to", compare, COMPARISONS)
    query.compare_to = compare
    explicit = args.get("compare_period")
    if explicit is not None:
        if not dated:
            raise ToolInputError(f"{metric.name} has no date to compare periods of")
        if compare is not None:
            raise ToolInputError("give compare_to or compare_period, not both")
        if not isinstance(explicit, Mapping) or not explicit.get("from") or not explicit.get("to"):
            raise ToolInputError(
                'compare_period must be {"from": "YYYY-MM-DD", "to": "YYYY-MM-DD"}'
            )
        query.compare_period = explicit
    top = args.get("top")
    if top is not None:
        if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= MAX_TOP:
            raise ToolInputError(f"top must be a whole number from 1 to {MAX_TOP}")
        query.top = top
    query.others = bool(args.get("others"))
    if query.others and query.top is None:
        raise ToolInputError("others adds an 'all others' row after the top N; give top too")
    if query.others and metric.measure.func not in (MeasureFunc.SUM, MeasureFunc.COUNT):
        raise ToolInputError(
            f"an 'all others' row adds figures up; {metric.name} is a "
            f"{metric.measure.func} and cannot be added"
        )
    order = args.get("order")
    if order is not None and order not in ("asc", "desc"):
        raise _unknown("order", order, ("asc", "desc"))
    query.order = order
    query.having = _having(metric, args.get("having"))
    query.as_of = args.get("as_of")
    return query


def _filter(catalog: Catalog, metric: Metric, raw: Any) -> DimensionFilter:
    if not isinstance(raw, Mapping) or "dimension" not in raw:
        raise ToolInputError('a filter is {"dimension": ..., "op": ..., "value": ...}')
    dim = _dimension(catalog, metric, raw["dimension"])
    op = str(raw.get("op") or "=")
    if op not in FILTER_OPS:
        raise _unknown("filter operator", op, FILTER_OPS)
    value = raw.get("value")
    if value is None or value == []:
        raise ToolInputError(f"the filter on {dim.name} needs a value")
    if op in ("in", "not in") and not isinstance(value, list):
        value = [value]
    if op == "between" and not (isinstance(value, list) and len(value) == 2):
        raise ToolInputError(f"the filter on {dim.name} with 'between' needs [from, to]")
    if op not in ("in", "not in", "between") and isinstance(value, list):
        raise ToolInputError(f"the filter on {dim.name} with {op!r} takes one value; use 'in'")
    return DimensionFilter(dim, op, value)


def _having(metric: Metric, raw: Any) -> Having | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ToolInputError('having is {"op": ">", "value": 10000} on the metric\'s value')
    target = raw.get("measure", raw.get("field"))
    if target not in (None, metric.name, "value"):
        raise ToolInputError(
            f"having applies to the measure, {metric.name!r}; {target!r} is not a measure "
            f"(filter dimensions with filters instead)"
        )
    op = str(raw.get("op") or ">")
    if op not in HAVING_OPS:
        raise _unknown("having operator", op, HAVING_OPS)
    value = raw.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolInputError("having needs a number as value, e.g. 10000")
    return Having(op, float(value))
