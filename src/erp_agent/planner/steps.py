"""The steps every question kind is built from: the planning context, the step a handler
returns (tool calls, a final text, or a hand-over to another kind), and the helpers shared by
every handler (descriptions of filters, tables and charts, failures, rows of a result). Handlers
import this module and the step builders beside it, never each other."""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from erp_agent.catalog import Catalog, Entity, FieldType
from erp_agent.planner.answer import capabilities, fmt, join, record_line
from erp_agent.planner.context import Result, TurnView
from erp_agent.planner.parse_dates import age_words
from erp_agent.planner.reading import Request

Filter = dict[str, Any]
PARTY_ENTITIES = ("customer", "supplier", "employee", "lead")
_OWED = re.compile(r"\b(owe[sd]?|owing|still due|balance due|unpaid balance)\b", re.I)
PLACE_FIELDS = ("branch", "territory", "customer_group", "supplier_group", "warehouse", "project",
           "department", "cost_center", "item_group")  # fmt: skip


@dataclass
class Call:
    name: str
    args: dict[str, Any]


@dataclass
class Step:
    calls: list[Call] = field(default_factory=list)
    text: str | None = None
    # Another kind answers this request (e.g. a trend with no analysis tool falls back to a
    # total): the dispatcher runs that kind's handler, so no handler imports another.
    hand_over: str | None = None


def hand_over(kind: str) -> Step:
    return Step(hand_over=kind)


def say(text: str) -> Step:
    return Step(text=text)


def call(name: str, args: dict[str, Any]) -> Step:
    return Step(calls=[Call(name, args)])


@dataclass
class Ctx:
    req: Request
    view: TurnView
    tools: dict[str, Mapping[str, Any]]  # offered tool name → its parameters schema
    catalog: Catalog
    connector: str = "erpnext"  # whose native maps name document ids
    # The dispatcher, for a handler that reads a question inside the request ("send me <this
    # question> every Monday"); set by plan.plan, so no handler imports the dispatcher.
    dispatch: Callable[[Ctx], Step] | None = None

    def has(self, name: str) -> bool:
        return name in self.tools

    def result(self, name: str, args: Mapping[str, Any] | None = None) -> Result | None:
        for r in self.view.results:
            if r.name == name and (args is None or same_args(r.args, args)):
                return r
        return None


def same_args(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def enable(ctx: Ctx, tool: str) -> Step | None:
    """Ask ``tools.search`` (once) for a permitted tool routing did not offer: routing reads the
    words as typed, the planner reads them corrected ("custmers", "revnue")."""
    query = {"query": tool.replace(".", " ").replace("_", " ")}
    if ctx.has(tool) or not ctx.has("tools.search") or ctx.result("tools.search", query):
        return None
    return call("tools.search", query)


def described(ctx: Ctx, names: Sequence[str] = ()) -> str:
    req, parts = ctx.req, []
    overdue_by_age = req.age_days is not None and req.statuses == ["Overdue"]
    if req.statuses and not overdue_by_age:
        parts.append(join(req.statuses, "or").lower())
    fields = req.entity.fields if req.entity is not None else {}
    # Every filter the records were chosen by is said ("payment type Pay": money out only).
    said = [
        f"{(fields[name].label or name.replace('_', ' ')).lower()} {join(values, 'or')}"
        for name, values in req.enum_filters.items()
        if name in fields and values
    ]
    if said:
        parts.append("with " + " and ".join(said))
    for name, on in req.flags.items():
        phrase = fields[name].named_by[0] if name in fields and fields[name].named_by else name
        parts.append(f"that are {phrase}s" if on else f"excluding {phrase}s")
    for name in req.nil_fields:
        nil = fields[name].none_named_by if name in fields else ()
        parts.append(nil[0] if nil else f"with no {name}")
    for value in names:
        parts.append(f"for {value}")
    if req.age_days is not None:
        parts.append(f"{age_words(req.text, req.age_days, req.age_until)} overdue")
    if req.amount is not None:
        parts.append(f"{req.amount.op} {fmt(float(req.amount.value))}")
    if req.period is not None:
        # ISO dates only: a bare year would read as an untraceable figure to the provenance guard.
        by_creation = req.entity is not None and not req.entity.date_field
        parts.append(
            f"{'created ' if by_creation else ''}from {req.period.start} to {req.period.end}"
        )
    return (" " + " ".join(parts)) if parts else ""


def missing_tool(ctx: Ctx, e: Entity | None, action: str = "list") -> Step:
    if e is not None:
        step = enable(ctx, f"{e.name}.{action}")
        if step is not None:
            return step
    what = e.plural.lower() if e else "that"
    return say(f"I can't see {what} with your access in this session, so I can't answer that. "
                 f"{capabilities(None, ctx.tools)}")  # fmt: skip


def names_said(ctx: Ctx) -> list[str]:
    return [v for _, v in ctx.req.names]


# ------------------------------------------------------------------ display


def display(
    ctx: Ctx,
    r: Result,
    *,
    chart: str | None = None,
    label: str = "",
    values: Sequence[str] = (),
    title: str = "",
    top: int | None = None,
) -> Step | None:
    """Ask for a table or chart of a stored result once; None when done or not possible."""
    if r.result_id is None:
        return None
    if chart and ctx.has("display.chart") and label and values:
        if ctx.result("display.chart") is None:
            return call(
                "display.chart",
                {
                    "result_id": r.result_id,
                    "type": chart,
                    "label": label,
                    "values": list(values),
                    "title": title[:120],
                    **({"top": top} if top else {}),
                },
            )
        return None
    if (
        ctx.has("display.table")
        and ctx.result("display.table") is None
        and ctx.result("display.chart") is None
    ):
        return call("display.table", {"result_id": r.result_id, "title": title[:120]})
    return None


def failed(r: Result) -> Step:
    if r.status == "erp_refused":
        return say(f"The ERP refused: {r.message}")
    return say(f"I couldn't get that: {r.message}")


def rows_of(r: Result) -> list[dict[str, Any]]:
    data = r.data
    if isinstance(data, dict):
        for key in ("records", "rows", "results", "hits", "passages"):
            value = data.get(key)
            if isinstance(value, list):
                return [v for v in value if isinstance(v, dict)]
    if isinstance(data, list):
        return [v for v in data if isinstance(v, dict)]
    return []


def with_asked(ctx: Ctx, e: Entity, row: Mapping[str, Any]) -> str:
    """A record's line plus the fields the question names ("credit limit of …")."""
    line = record_line(e, row)
    parts = []
    for name in ctx.req.fields_asked:
        value = row.get(name)
        if value is None or isinstance(value, (list, dict)) or fmt(value) in line:
            continue
        parts.append(f"{e.fields[name].label.lower()} {fmt(value)}")
    return line + (": " + ", ".join(parts) if parts else "")


def counted_line(r: Any) -> str:
    """What the ERP counted, in the tool's own definition: every figure says how it was made."""
    data = r.data if isinstance(r.data, dict) else {}
    definition = data.get("definition") if isinstance(data.get("definition"), dict) else {}
    words = [str(w) for w in (definition or {}).get("filters") or [] if w]
    return "\nCounted: " + "; ".join(words) + "." if words else ""


def group_keys(ctx: Ctx, e: Entity) -> list[dict[str, Any]]:
    req = ctx.req
    if req.group:
        key: dict[str, Any] = {"field": req.group}
        if req.date_part:
            key["part"] = req.date_part
            spans_years = req.period is None or req.period.start.year != req.period.end.year
            if req.date_part != "year" and spans_years:
                # Month 3 of two different years must not fold into one row.
                return [{"field": req.group, "part": "year"}, key]
        return [key]
    if req.top:
        for name, f in e.fields.items():
            if f.groupable and f.target and f.target in ctx.catalog.entities:
                target = ctx.catalog.entities[f.target]
                if any(
                    t.lower() in req.text.lower()
                    for t in (target.label, target.plural, *target.synonyms)
                ):
                    return [{"field": name}]
    return []


def group_label(row: Mapping[str, Any], cols: Sequence[str], part: str | None) -> str:
    """'March 2026' for a (year, month) group; the value itself for any other group."""
    values = [row.get(c) for c in cols]
    if part == "month" and values and isinstance(values[-1], int) and 1 <= values[-1] <= 12:
        name = calendar.month_name[values[-1]]
        return f"{name} {values[0]}" if len(values) > 1 else name
    if part == "quarter" and values and isinstance(values[-1], int):
        return f"Q{values[-1]} {values[0]}" if len(values) > 1 else f"Q{values[-1]}"
    return " ".join(str(v) for v in values)


def measure_field(ctx: Ctx, e: Entity) -> str | None:
    asked = sorted(ctx.req.fields_asked, key=lambda n: n == e.amount_field)
    for name in asked:
        f = e.fields.get(name)
        if f is not None and (f.summable or f.type in (FieldType.MONEY, FieldType.NUMBER)):
            return name
    if "outstanding" in e.fields and _OWED.search(ctx.req.text):
        return "outstanding"  # "how much do they owe": what is still owed, not what was billed
    return e.amount_field


def earlier_id(ctx: Ctx, e: Entity | None) -> tuple[Entity, str] | None:
    """'this purchase order': the most recent id of that entity earlier in the conversation."""
    for text in reversed(ctx.view.earlier):
        found = ctx.catalog.find_document_ids(ctx.connector, text)
        for entity, doc_id in reversed(found):
            if e is None or entity.name == e.name:
                return entity, doc_id
    return None
