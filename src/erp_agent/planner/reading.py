"""The reading of a request: its kind and the slots the words filled (entity, report, period,
names, amounts, groups …). ``intents.understand`` fills it; the handlers plan from it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum

from erp_agent.catalog import Entity, Report
from erp_agent.planner.parse_amounts import Amount
from erp_agent.planner.parse_dates import Period


class Kind(StrEnum):
    """The kinds code refers to by name (every kind is declared in questions.yaml)."""

    LIST = "list"
    COUNT = "count"
    TOTAL = "total"
    TREND = "trend"
    FORECAST = "forecast"
    CONCENTRATION = "concentration"
    ANOMALIES = "anomalies"
    AGEING = "ageing"
    REPORT = "report"
    DOCUMENT = "document"
    WORKFLOW = "workflow"
    KNOWLEDGE = "knowledge"
    FIND = "find"
    WRITE = "write"
    ON_LEAVE = "on_leave"
    UNKNOWN = "unknown"


@dataclass
class Request:
    text: str
    kind: str = Kind.UNKNOWN  # a kind declared in questions.yaml
    entity: Entity | None = None
    report: Report | None = None
    doc_ids: list[tuple[Entity, str]] = field(default_factory=list)
    period: Period | None = None
    as_of: dt.date | None = None
    age_days: int | None = None
    age_until: int | None = None  # an ageing bucket's end: at most this many days past due
    amount: Amount | None = None
    top: int | None = None
    group: str | None = None  # a field name of the entity
    date_part: str | None = None  # month | quarter | year
    chart: bool = False
    statuses: list[str] = field(default_factory=list)  # values of the entity's status field
    enum_filters: dict[str, list[str]] = field(default_factory=dict)  # other enum fields
    # Yes/no fields the request names the records by: "credit notes" (is_return true), or
    # leaves them out by ("excluding credit notes": false).
    flags: dict[str, bool] = field(default_factory=dict)
    # Quantities the request names at nil ("out of stock": qty <= 0).
    nil_fields: list[str] = field(default_factory=list)
    fields_asked: list[str] = field(default_factory=list)  # fields the question names
    names: list[tuple[str | None, str]] = field(default_factory=list)  # (field or None, value)
    verb: str | None = None
    change: str | None = None  # what the verb asks for: create, update, submit, …
    target_value: str | None = None  # "mark … as <value>"
    loose_ids: list[str] = field(default_factory=list)  # ids of no known entity
    compared_field: str | None = None  # "below reorder level": a field compared with another
    items: list[str] = field(default_factory=list)  # item codes
    settled: list[str] = field(default_factory=list)  # words a clarification already resolved
    # Words that carry no slot (no catalog term, no record found for them): tolerated, and
    # named in the reading the answer shows ("ignored: board pack").
    ignored: list[str] = field(default_factory=list)
    currency: str | None = None  # a currency the request names ("KSh", "in dollars")
    # Two figures set side by side ("billed vs collected"): each is its own query, never a
    # comparison of periods.
    figures_side_by_side: bool = False
