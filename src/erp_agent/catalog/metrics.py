"""The semantic layer: business metrics and the dimensions they are grouped and filtered by.

A metric names its documents once — entity, measure, defining filters, the date that places it
in time, the dimensions it may be cut by and its currency rule — so "revenue" means one thing in
every answer. Compact forms in ``data/metrics.yaml``::

    measure: sum(base_net_total)         # sum|avg|min|max|count_distinct(field), count,
                                         # sum(debit) - sum(credit), latest(items.rate)
                                         # or ratio(metric_a, metric_b)
    filters: ["is_return = 0", "outstanding > 0", "due_date < today"]

Dimensions are declared once; ``paths`` says how each entity reaches one (``customer.customer_group``
goes through the invoice's ``customer`` link). An entity with a field of the dimension's name
reaches it directly.
"""

from __future__ import annotations

import datetime as dt
import re
from enum import StrEnum
from typing import Any, Self

import yaml
from pydantic import Field as PydanticField
from pydantic import JsonValue, model_validator

from erp_agent.catalog._base import Frozen


class MeasureFunc(StrEnum):
    SUM = "sum"
    COUNT = "count"
    AVG = "avg"
    MIN = "min"
    MAX = "max"
    COUNT_DISTINCT = "count_distinct"
    RATIO = "ratio"
    NET = "net"  # sum(a) - sum(b): a balance such as debit minus credit
    LATEST = "latest"  # the value on the latest record of each group (a table row's field)


class Returns(StrEnum):
    """What a metric does with credit/debit notes (``is_return`` documents)."""

    INCLUDED = "included"  # counted, with their negative amounts: net of returns
    EXCLUDED = "excluded"  # left out: gross figures
    ONLY = "only"  # nothing but returns


# Words for the model and the reader: what each filter operator means.
FILTER_OPS = ("=", "!=", ">=", "<=", ">", "<", "not in", "in", "not like", "like", "between",
              "is set", "is not set")  # fmt: skip
_FILTER = re.compile(
    r"^\s*([a-z_][a-z0-9_.]*)\s+(=|!=|>=|<=|>|<|not in|in|not like|like|between|is not set|is set)"
    r"(?:\s+(.*?))?\s*$"
)
_MEASURE = re.compile(r"^\s*([a-z_]+)\s*(?:\(\s*([a-z0-9_.]+)\s*(?:,\s*([a-z0-9_]+)\s*)?\))?\s*$")
_NET = re.compile(r"^\s*sum\(\s*([a-z0-9_.]+)\s*\)\s*-\s*sum\(\s*([a-z0-9_.]+)\s*\)\s*$")
# A filter value resolved when the query runs (the catalog holds no clock): today, today-30.
TODAY = re.compile(r"^today(?:([+-])(\d+))?$")
ME = "me"  # a metric filter's value meaning the signed-in user (an approver)


def resolve_today(value: Any, today: dt.date, user: str | None = None) -> Any:
    """``today``/``today-30`` in a metric filter -> an ISO date, and ``me`` -> the signed-in
    user; lists element-wise. Here, beside the syntax, for every reader of a metric's filters
    (the metric computer, the approver's queue)."""
    if isinstance(value, list):
        return [resolve_today(v, today, user) for v in value]
    if isinstance(value, str):
        if value == ME and user is not None:
            return user
        match = TODAY.match(value)
        if match:
            sign, days = match.groups()
            offset = int(days or 0) * (-1 if sign == "-" else 1)
            return (today + dt.timedelta(days=offset)).isoformat()
    return value


class MetricMeasure(Frozen):
    """``sum(base_net_total)``: the function and the canonical field it takes (none for count);
    ``sum(debit) - sum(credit)`` a net of two sums (``field`` minus ``minus``); a ratio names two
    metrics instead."""

    func: MeasureFunc
    field: str | None = None
    minus: str | None = None
    numerator: str | None = None
    denominator: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _compact(cls, raw: Any) -> Any:
        if not isinstance(raw, str):
            return raw
        net = _NET.match(raw)
        if net is not None:
            return {"func": MeasureFunc.NET, "field": net[1], "minus": net[2]}
        match = _MEASURE.match(raw)
        if match is None:
            raise ValueError(f"measure {raw!r} must look like sum(field), count or ratio(a, b)")
        func, first, second = match.groups()
        if func == MeasureFunc.RATIO:
            return {"func": func, "numerator": first, "denominator": second}
        if second is not None:
            raise ValueError(f"measure {raw!r}: only ratio takes two arguments")
        return {"func": func, "field": first}

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.func is MeasureFunc.RATIO:
            if not (self.numerator and self.denominator) or self.field:
                raise ValueError("ratio needs two metrics: ratio(numerator, denominator)")
        elif self.numerator or self.denominator:
            raise ValueError("only ratio names metrics")
        elif (self.func is MeasureFunc.COUNT) != (self.field is None):
            raise ValueError(f"{self.func} {'takes no' if self.field else 'needs a'} field")
        if (self.func is MeasureFunc.NET) != (self.minus is not None):
            raise ValueError("only sum(a) - sum(b) subtracts a second field")
        return self

    @property
    def fields(self) -> tuple[str, ...]:
        """The canonical fields (or paths) the measure reads."""
        return tuple(f for f in (self.field, self.minus) if f)

    def __str__(self) -> str:
        if self.func is MeasureFunc.RATIO:
            return f"ratio({self.numerator}, {self.denominator})"
        if self.func is MeasureFunc.NET:
            return f"sum({self.field}) - sum({self.minus})"
        return f"{self.func}({self.field})" if self.field else str(self.func)


class MetricFilter(Frozen):
    """``field op value`` on a canonical field of the metric's entity (or, dotted, of a record it
    links to); ``today`` in a value is resolved when the query runs, and ``$path`` compares with
    another field of the same record."""

    field: str
    op: str
    value: JsonValue = None

    @model_validator(mode="before")
    @classmethod
    def _compact(cls, raw: Any) -> Any:
        if not isinstance(raw, str):
            return raw
        match = _FILTER.match(raw)
        if match is None:
            raise ValueError(f"filter {raw!r} must look like 'field op value'")
        field, op, text = match.groups()
        value = yaml.safe_load(text) if text else None
        return {"field": field, "op": op, "value": value}

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.op not in FILTER_OPS:
            raise ValueError(
                f"unknown filter operator {self.op!r} (known: {', '.join(FILTER_OPS)})"
            )
        if self.op in ("in", "not in") and not isinstance(self.value, list):
            raise ValueError(f"filter on {self.field} with {self.op!r} needs a list")
        if self.op == "between" and not (isinstance(self.value, list) and len(self.value) == 2):
            raise ValueError(f"filter on {self.field} with 'between' needs [from, to]")
        return self

    @property
    def reference(self) -> str | None:
        """The field path a ``$path`` value compares with, if it is one."""
        if isinstance(self.value, str) and self.value.startswith("$"):
            return self.value[1:]
        return None

    @property
    def row_level(self) -> bool:
        """Whether the ERP cannot apply it as a plain filter (a linked field, or a comparison
        between two fields): such metrics are computed from the rows, exactly, in code."""
        return "." in self.field or self.reference is not None

    def __str__(self) -> str:
        value = "" if self.value is None else f" {self.value}"
        return f"{self.field} {self.op}{value}"


class Dimension(Frozen):
    """Something figures are grouped or filtered by (customer, branch, item group...).

    ``paths`` maps an entity to the canonical field path that reaches the dimension from it;
    a dotted path follows a link (``customer.customer_group``). An entity with a field named
    like the dimension needs no path. ``entity`` is the catalog entity whose ids the values are.
    """

    name: str
    label: str
    synonyms: tuple[str, ...] = ()
    description: str = ""
    entity: str | None = None
    paths: dict[str, str] = PydanticField(default_factory=dict)
    # The metric "top customers", "our biggest suppliers" rank by when no figure is named.
    ranked_by: str | None = None
    # An ageing dimension: its path is a date, and a record falls in the bucket of its age in
    # days on the query's day, ranges as the Accounts Receivable report's (0-30 ... 121-Above).
    age_ranges: tuple[int, ...] = ()
    # Few records, named in everyday words by their whole name ("annual leave" is the Leave
    # Type Annual Leave; "the warehouse dept" the Warehouse department): a question saying one
    # is cut by it, though no word of it is unknown.
    named_whole: bool = False
    source: str = ""

    def age_label(self, age: int) -> str:
        """The bucket of an age in days (not yet due, a negative age, is in the first)."""
        low = 0
        for high in self.age_ranges:
            if age <= high:
                return f"{low}-{high}"
            low = high + 1
        return f"{low}-Above"

    @property
    def age_labels(self) -> tuple[str, ...]:
        bounds = [0, *(r + 1 for r in self.age_ranges)]
        return tuple(self.age_label(b) for b in bounds)

    def path_for(self, entity: str, fields: Any) -> str | None:
        """The field path from ``entity`` (whose fields are ``fields``) to this dimension."""
        if entity in self.paths:
            return self.paths[entity]
        return self.name if self.name in fields else None


class Companion(Frozen):
    """A figure shown beside the metric's own in every row, over the same records:
    ``sum(qty)`` or ``sum(item.reorder_level) - sum(projected_qty)``."""

    label: str
    measure: MetricMeasure

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.measure.func not in (MeasureFunc.SUM, MeasureFunc.NET):
            raise ValueError("a companion figure is a sum(field) or sum(a) - sum(b)")
        return self


class ReportCut(Frozen):
    """How a dimension cuts a report metric: the report column holding its value, and the
    report parameters that make the report give rows per that dimension."""

    column: str | None = None
    params: dict[str, JsonValue] = PydanticField(default_factory=dict)
    filter_param: str | None = None  # the report parameter that filters by the dimension


class ReportSource(Frozen):
    """A metric the ERP's own report computes (the Gross Profit report's gross profit, the
    Employee Leave Balance report's closing balance): the report runs as the user, once per
    company (and per time bucket), and the measure's field is the report column summed."""

    name: str  # the catalog report
    params: dict[str, JsonValue] = PydanticField(default_factory=dict)  # fixed parameters
    # The whole figure when no dimension asks for other rows (e.g. one row per customer).
    plain: dict[str, JsonValue] = PydanticField(default_factory=dict)
    cuts: dict[str, ReportCut] = PydanticField(default_factory=dict)
    # The period a query without one covers: every fiscal year up to its day ("all"), or the
    # calendar year of its day ("calendar_year", a leave year).
    default_period: str = "all"

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.default_period not in ("all", "calendar_year"):
            raise ValueError("default_period must be 'all' or 'calendar_year'")
        return self


class Metric(Frozen):
    """One business figure with one meaning (see the module docstring for the YAML)."""

    name: str
    label: str
    synonyms: tuple[str, ...] = ()
    description: str = PydanticField(min_length=20)
    entity: str
    measure: MetricMeasure
    filters: tuple[MetricFilter, ...] = ()
    # Transactions count submitted documents only unless a metric says "all" (never needed yet).
    documents: str = "submitted"
    returns: Returns | None = None
    date_field: str | None = None
    dimensions: tuple[str, ...] = ()
    # "company" (company-currency amounts), "none" (counts, quantities, days), or the canonical
    # field of the entity holding each document's currency (transaction-currency amounts).
    currency: str = "none"
    unit: str | None = None  # shown after the figure when it is not money: "days", "%"
    # A quantity's unit of measure per record (``uom``, ``item.uom``): like a currency, figures
    # are kept per unit and never added across units.
    unit_field: str | None = None
    # A balance: every record dated on or before the period's end (or the query's day) counts;
    # grouped by a time grain, the balance at each period's end.
    cumulative: bool = False
    also: dict[str, Companion] = PydanticField(default_factory=dict)
    # The same figure cut by a dimension this one lacks comes from that metric ("revenue by
    # item" is the selling amount of the invoices' item lines, the Gross Profit report's).
    split_by: dict[str, str] = PydanticField(default_factory=dict)
    # Fields of the latest record shown beside a latest(...) figure (its supplier, its unit).
    details: tuple[str, ...] = ()
    report: ReportSource | None = None
    group: str = ""  # the catalog section it is listed under (selling, receivables...)
    source: str = ""

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.documents not in ("submitted", "all"):
            raise ValueError("documents must be 'submitted' or 'all'")
        if len(set(self.dimensions)) != len(self.dimensions):
            raise ValueError("a dimension is listed twice")
        if self.measure.func is MeasureFunc.RATIO and self.filters:
            raise ValueError("a ratio takes its filters from its two metrics")
        if self.cumulative and (self.date_field is None or self.measure.func not in (
            MeasureFunc.SUM, MeasureFunc.NET, MeasureFunc.COUNT
        )):  # fmt: skip
            raise ValueError("a cumulative metric adds up records by a date: sum, net or count")
        if self.details and self.measure.func is not MeasureFunc.LATEST:
            raise ValueError("details are shown only beside a latest(...) figure")
        if self.report is not None and self.measure.func not in (
            MeasureFunc.SUM,
            MeasureFunc.RATIO,
        ):
            raise ValueError("a report metric sums a report column: sum(column)")
        if self.unit_field and self.is_money:
            raise ValueError("unit_field is for quantities; money is kept per currency")
        return self

    @property
    def is_money(self) -> bool:
        return self.currency != "none"

    @property
    def returns_text(self) -> str | None:
        """The metric's decision about credit notes, in words (None when it has none)."""
        return {
            Returns.INCLUDED: "returns (credit/debit notes) included as negative amounts",
            Returns.EXCLUDED: "returns (credit/debit notes) excluded",
            Returns.ONLY: "returns (credit/debit notes) only",
            None: None,
        }[self.returns]
