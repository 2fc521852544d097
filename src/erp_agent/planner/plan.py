"""The plan: from the understood request and the results in hand, the next tool calls or the
final answer. Re-run on every model call, so a multi-step plan (aggregate → chart → answer)
continues from whatever results the conversation already holds."""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from erp_agent.catalog import Catalog, Entity, FieldType
from erp_agent.planner.answer import capabilities, fmt, is_number, join, record_line
from erp_agent.planner.context import Result, TurnView
from erp_agent.planner.direction import direction_field
from erp_agent.planner.intents import Kind, Request, forecasting, norm, trending, understand
from erp_agent.planner.parse_dates import age_words

Filter = dict[str, Any]
_PARTIES = ("customer", "supplier", "employee", "lead")
_PLACES = ("branch", "territory", "customer_group", "supplier_group", "warehouse", "project",
           "department", "cost_center", "item_group")  # fmt: skip


@dataclass
class Call:
    name: str
    args: dict[str, Any]


@dataclass
class Step:
    calls: list[Call] = field(default_factory=list)
    text: str | None = None


def _text(text: str) -> Step:
    return Step(text=text)


def _call(name: str, args: dict[str, Any]) -> Step:
    return Step(calls=[Call(name, args)])


@dataclass
class Ctx:
    req: Request
    view: TurnView
    tools: dict[str, Mapping[str, Any]]  # offered tool name → its parameters schema
    catalog: Catalog
    connector: str = "erpnext"  # whose native maps name document ids

    def has(self, name: str) -> bool:
        return name in self.tools

    def result(self, name: str, args: Mapping[str, Any] | None = None) -> Result | None:
        for r in self.view.results:
            if r.name == name and (args is None or _same(r.args, args)):
                return r
        return None


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def enable(ctx: Ctx, tool: str) -> Step | None:
    """Ask ``tools.search`` (once) for a permitted tool routing did not offer: routing reads the
    words as typed, the planner reads them corrected ("custmers", "revnue")."""
    query = {"query": tool.replace(".", " ").replace("_", " ")}
    if ctx.has(tool) or not ctx.has("tools.search") or ctx.result("tools.search", query):
        return None
    return _call("tools.search", query)


# ------------------------------------------------------------------ entry


def next_step(
    catalog: Catalog, connector: str, view: TurnView, tools: dict[str, Mapping[str, Any]]
) -> Step:
    """The request on its own, without the conversation (see ``dispatch.next_step``)."""
    req = understand(catalog, connector, view.request, view.today)
    return plan(Ctx(req, view, tools, catalog, connector))


def plan(ctx: Ctx) -> Step:
    """The next step for a request already read."""
    req = ctx.req
    # Handlers in sibling modules import this one's helpers, so they are imported here.
    from erp_agent.planner import (
        _analysis,
        _ledger,
        _lookups,
        _owing,
        _reports,
        _writes,
        metric_plan,
    )

    if _owing.applies(ctx):
        owing = _owing.owing(ctx)
        if owing is not None:
            return owing
    if _ledger.applies(ctx):
        ledger = _ledger.ledger(ctx)
        if ledger is not None:
            return ledger
    if req.kind in (Kind.TOTAL, Kind.UNKNOWN) and req.entity is None and forecasting(req.text):
        # "What will we sell next month?": the future of the figure the words name.
        metric = metric_plan.pick(ctx.catalog, req)
        if metric is not None and metric.entity in ctx.catalog.entities:
            req.entity, req.kind = ctx.catalog.entities[metric.entity], Kind.FORECAST
    if req.kind is Kind.TREND or (
        req.kind in (Kind.TOTAL, Kind.UNKNOWN, Kind.LIST, Kind.REPORT, Kind.KNOWLEDGE)
        and trending(req.text)
    ):
        step = metric_plan.trend_step(ctx)
        if step is not None:
            return step
    forced, compared = metric_plan.report_metric(ctx.catalog, req), False
    if forced is not None:
        req.group = metric_plan.report_party(ctx.catalog, req, forced) or req.group
    else:
        forced = metric_plan.comparison_metric(ctx.catalog, req)
        compared = forced is not None
    if forced is not None:
        step = metric_plan.metric_step(ctx, forced, means_comparison=compared)
        if step is not None:
            return step
    if req.kind in (Kind.TOTAL, Kind.COUNT, Kind.UNKNOWN) or metric_plan.names_a_figure(ctx):
        step = metric_plan.metric_step(ctx)
        if step is not None:
            return step
    handler = {
        Kind.LIST: _list,
        Kind.COUNT: _count,
        Kind.TOTAL: _total,
        Kind.TREND: _analysis.trend,
        Kind.FORECAST: _analysis.analysis,
        Kind.CONCENTRATION: _analysis.analysis,
        Kind.ANOMALIES: _analysis.analysis,
        Kind.REPORT: _reports.report,
        Kind.DOCUMENT: _lookups.document,
        Kind.WORKFLOW: _lookups.workflow,
        Kind.KNOWLEDGE: _lookups.knowledge,
        Kind.FIND: _lookups.find,
        Kind.WRITE: _writes.write,
        Kind.UNKNOWN: _lookups.unknown,
    }[req.kind]
    return handler(ctx)


# ------------------------------------------------------------------ filters


def _desc(ctx: Ctx, names: Sequence[str] = ()) -> str:
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
    for value in names:
        parts.append(f"for {value}")
    if req.age_days is not None:
        parts.append(f"{age_words(req.text, req.age_days)} overdue")
    if req.amount is not None:
        parts.append(f"{req.amount.op} {fmt(float(req.amount.value))}")
    if req.period is not None:
        # ISO dates only: a bare year would read as an untraceable figure to the provenance guard.
        by_creation = req.entity is not None and not req.entity.date_field
        parts.append(
            f"{'created ' if by_creation else ''}from {req.period.start} to {req.period.end}"
        )
    return (" " + " ".join(parts)) if parts else ""


def _base_filters(ctx: Ctx, e: Entity) -> tuple[list[Filter], str | None]:
    """Filters from statuses, enums, dates, age and amount; or a reason they cannot be applied."""
    req, out = ctx.req, []
    fields = e.fields
    if req.statuses and e.status_field:
        out.append(_flt(e.status_field, req.statuses))
    for name, values in req.enum_filters.items():
        out.append(_flt(name, values))
    if req.period is not None and e.date_field and req.kind not in (Kind.TREND,):
        out.append({"field": e.date_field, "op": "between",
                    "value": [req.period.start.isoformat(), req.period.end.isoformat()]})  # fmt: skip
    elif req.period is not None and req.kind not in (Kind.TREND,):
        # Records with no business date ("new customers this year"): when they were created,
        # as ERPNext's own "creation" filter; a period is never dropped in silence.
        created = fields.get("created")
        if created is None or not created.filterable:
            return out, f"{e.plural} have no date I can filter on"
        after = req.period.end + dt.timedelta(days=1)
        out += [{"field": "created", "op": ">=", "value": req.period.start.isoformat()},
                {"field": "created", "op": "<", "value": after.isoformat()}]  # fmt: skip
    if req.age_days is not None:
        if "due_date" not in fields or not fields["due_date"].filterable:
            return out, f"{e.plural} have no due date I can filter on"
        cutoff = ctx.view.today - dt.timedelta(days=req.age_days)
        out.append({"field": "due_date", "op": "<", "value": cutoff.isoformat()})
        if e.status_field and not req.statuses and "Overdue" in fields[e.status_field].values:
            req.statuses = ["Overdue"]
            out.append(_flt(e.status_field, ["Overdue"]))
    if req.amount is not None:
        owed = any(
            w in norm(req.text) for w in (" owe", " owes ", " outstanding ", " unpaid ", " due ")
        )
        candidates = (["outstanding"] if owed else []) + [e.amount_field or "", "outstanding"]
        target = next((n for n in candidates if n in fields and fields[n].filterable), None)
        if target is None:
            return out, f"I can't filter {e.plural.lower()} by amount with the tools available"
        out.append({"field": target, "op": req.amount.op, "value": float(req.amount.value)})
    if ctx.view.company and "company" in fields and fields["company"].filterable:
        out.append({"field": "company", "op": "=", "value": ctx.view.company})
    return out, None


def _flt(name: str, values: list[str]) -> Filter:
    if len(values) == 1:
        return {"field": name, "op": "=", "value": values[0]}
    return {"field": name, "op": "in", "value": list(values)}


def _candidates(e: Entity, hint: str | None, value: str) -> list[Filter]:
    """Where a name could live on this entity, most likely first."""
    fields = e.fields
    if hint and hint in fields:
        return [{"field": hint, "op": "=", "value": value}]
    out: list[Filter] = []
    title = e.title_field
    if e.kind.value == "master" and title is not None and title.filterable:
        # A master named by its name ("customer Acme Ltd"): its own title first.
        out.append({"field": title.name, "op": "like", "value": f"%{value}%"})
    for name, f in fields.items():
        if not f.filterable:
            continue
        if f.target in _PARTIES or name == "party":
            named = f"{name}_name" if f"{name}_name" in fields else None
            if named and fields[named].filterable:
                out.append({"field": named, "op": "like", "value": f"%{value}%"})
            else:
                out.append({"field": name, "op": "=", "value": value})
    for place in _PLACES:
        f2 = fields.get(place)
        if f2 is not None and f2.filterable:
            out.append({"field": place, "op": "=", "value": value})
    if not out and title is not None and title.filterable:
        out.append({"field": title.name, "op": "like", "value": f"%{value}%"})
    return out[:4]


def _probe(ctx: Ctx, e: Entity, flt: Filter) -> tuple[str, dict[str, Any]] | None:
    if ctx.has(f"{e.name}.count"):
        return f"{e.name}.count", {"filters": [flt]}
    if ctx.has(f"{e.name}.list"):
        return f"{e.name}.list", {"filters": [flt], "fields": ["id"], "limit": 1}
    return None


def _found(r: Result) -> bool:
    data = r.data
    if isinstance(data, dict):
        if is_number(data.get("count")):
            return bool(data["count"])
        return bool(data.get("records") or data.get("rows"))
    return False


def _name_filters(ctx: Ctx, e: Entity) -> tuple[list[Filter], Step | None]:
    """Filters for the names the request mentions; probing where a name could belong."""
    out: list[Filter] = []
    pending: list[Call] = []
    for hint, value in ctx.req.names:
        options = _candidates(e, hint, value)
        if not options:
            continue
        if len(options) == 1:
            out.append(options[0])
            continue
        probes = [(o, _probe(ctx, e, o)) for o in options]
        if any(p is None for _, p in probes):
            out.append(options[0])
            continue
        answered = [(o, ctx.result(p[0], p[1])) for o, p in probes if p is not None]
        missing = [
            Call(*p) for (o, p), (_, r) in zip(probes, answered, strict=True) if r is None and p
        ]
        if missing:
            pending += missing
            continue
        hit = next((o for o, r in answered if r is not None and r.ok and _found(r)), None)
        if hit is None:
            return out, _text(
                f"No records found: I found no {e.plural.lower()} for {value} that you can see."
            )
        out.append(hit)
    return out, (Step(calls=pending) if pending else None)


_LOOSE_DIMENSIONS = ("customer", "supplier", "item", "warehouse", "branch", "territory")


def _loose_names(ctx: Ctx) -> Step | None:
    """Lowercase words no vocabulary holds ("mombasa invoices"): looked up in the master data
    and kept as names when found there; otherwise the request is not answered without them."""
    from erp_agent.planner import master_data, vocabulary

    req = ctx.req
    said = " ".join(v.lower() for _, v in req.names) + " " + " ".join(req.settled).lower()
    loose = [n for n in vocabulary.loose_names(req.text, ctx.catalog) if n.lower() not in said]
    if not loose:
        return None
    found, step = master_data.resolve(ctx, [(None, n) for n in loose], _LOOSE_DIMENSIONS, loose)
    if step is not None:
        return step
    for name, (dim, _) in found.items():
        req.names.append((dim if req.entity and dim in req.entity.fields else None, name))
    req.settled += loose
    return None


def _all_filters(ctx: Ctx, e: Entity) -> tuple[list[Filter], Step | None]:
    if ctx.req.compared_field:
        label = e.fields[ctx.req.compared_field].label.lower()
        return [], _text(
            f"I can't compare {e.plural.lower()} against their {label} with the tools available, "
            f"so I won't guess which ones qualify. {capabilities(e, ctx.tools)}"
        )
    step = _loose_names(ctx)
    if step is not None:
        return [], step
    base, problem = _base_filters(ctx, e)
    if problem:
        return [], _text(
            f"{problem[0].upper()}{problem[1:]}, so I won't guess an answer. {capabilities(e, ctx.tools)}"
        )
    named, step = _name_filters(ctx, e)
    return base + named, step


def _missing_tool(ctx: Ctx, e: Entity | None, action: str = "list") -> Step:
    if e is not None:
        step = enable(ctx, f"{e.name}.{action}")
        if step is not None:
            return step
    what = e.plural.lower() if e else "that"
    return _text(f"I can't see {what} with your access in this session, so I can't answer that. "
                 f"{capabilities(None, ctx.tools)}")  # fmt: skip


def _names_text(ctx: Ctx) -> list[str]:
    return [v for _, v in ctx.req.names]


# ------------------------------------------------------------------ display


def _display(
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
            return _call(
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
        return _call("display.table", {"result_id": r.result_id, "title": title[:120]})
    return None


def _failed(r: Result) -> Step:
    if r.status == "erp_refused":
        return _text(f"The ERP refused: {r.message}")
    return _text(f"I couldn't get that: {r.message}")


def _rows(r: Result) -> list[dict[str, Any]]:
    data = r.data
    if isinstance(data, dict):
        for key in ("records", "rows", "results", "hits", "passages"):
            value = data.get(key)
            if isinstance(value, list):
                return [v for v in value if isinstance(v, dict)]
    if isinstance(data, list):
        return [v for v in data if isinstance(v, dict)]
    return []


# ------------------------------------------------------------------ reads


# A figure of a kind no metric matched ("average days to pay"): the records are not its answer.
_UNMATCHED_FIGURE = re.compile(r"\b(average|median)\b")


def _list(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    if _UNMATCHED_FIGURE.search(ctx.req.text.lower()):
        return _text(
            f"I can't work out that figure from {e.plural.lower()} with the tools available, "
            f"so I won't answer with a list of them instead. {capabilities(e, ctx.tools)}"
        )
    if not ctx.has(f"{e.name}.list"):
        return _missing_tool(ctx, e)
    flts, step = _all_filters(ctx, e)
    if step:
        return step
    order = e.date_field or (
        e.amount_field if e.amount_field and e.fields[e.amount_field].sortable else None
    )
    args: dict[str, Any] = {"filters": flts, "limit": 20}
    if order and e.fields[order].sortable:
        args["order_by"] = [{"field": order, "direction": "desc"}]
    count_args = {"filters": flts}
    listed = ctx.result(f"{e.name}.list", args)
    counted = ctx.result(f"{e.name}.count", count_args) if ctx.has(f"{e.name}.count") else None
    if listed is None:
        calls = [Call(f"{e.name}.list", args)]
        if ctx.has(f"{e.name}.count"):
            calls.append(Call(f"{e.name}.count", count_args))
        return Step(calls=calls)
    if not listed.ok:
        return _failed(listed)
    rows = _rows(listed)
    desc = _desc(ctx, _names_text(ctx))
    if not rows:
        return _text(f"No records found: there are no {e.plural.lower()}{desc} that you can see.")
    total = (
        counted.data.get("count")
        if counted and counted.ok and isinstance(counted.data, dict)
        else None
    )
    shown = ctx.result("display.table") is not None
    if len(rows) > 1 and not shown:
        step2 = _display(ctx, listed, title=f"{e.plural}{desc}")
        if step2:
            return step2
    head = f"{fmt(total)} {e.plural.lower()}{desc}" if is_number(total) else f"{e.plural}{desc}"
    lines = [_with_asked(ctx, e, row) for row in rows[:5]]
    more = ""
    if isinstance(total, (int, float)) and total > len(lines):
        more = f" The table shows the first {fmt(len(rows))}." if shown else ""
    return _text(
        f"{head}:\n"
        + "\n".join(f"- {line}" for line in lines)
        + (f"\n{more.strip()}" if more else "")
    )


def _with_asked(ctx: Ctx, e: Entity, row: Mapping[str, Any]) -> str:
    """A record's line plus the fields the question names ("credit limit of …")."""
    line = record_line(e, row)
    parts = []
    for name in ctx.req.fields_asked:
        value = row.get(name)
        if value is None or isinstance(value, (list, dict)) or fmt(value) in line:
            continue
        parts.append(f"{e.fields[name].label.lower()} {fmt(value)}")
    return line + (": " + ", ".join(parts) if parts else "")


def _count(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    flts, step = _all_filters(ctx, e)
    if step:
        return step
    keys = _group_keys(ctx, e) if ctx.req.group else []
    if keys and ctx.has(f"{e.name}.aggregate"):
        return _count_by(ctx, e, flts, keys)
    name = f"{e.name}.count"
    args: dict[str, Any] = {"filters": flts}
    if not ctx.has(name):
        if not ctx.has(f"{e.name}.aggregate"):
            return _missing_tool(ctx, e, "count")
        name, args = f"{e.name}.aggregate", {"measures": [{"func": "count"}], "filters": flts}
    r = ctx.result(name, args)
    if r is None:
        return _call(name, args)
    if not r.ok:
        return _failed(r)
    data = r.data if isinstance(r.data, dict) else {}
    n = data.get("count", data.get("record_count"))
    if not is_number(n):
        return _text(f"The ERP did not return a count for {e.plural.lower()}.")
    desc = _desc(ctx, _names_text(ctx))
    if n == 0:
        return _text(f"No records found: there are 0 {e.plural.lower()}{desc} that you can see.")
    return _text(f"There are {fmt(n)} {e.plural.lower()}{desc}." + counted_line(r))


def counted_line(r: Any) -> str:
    """What the ERP counted, in the tool's own definition: every figure says how it was made."""
    data = r.data if isinstance(r.data, dict) else {}
    definition = data.get("definition") if isinstance(data.get("definition"), dict) else {}
    words = [str(w) for w in (definition or {}).get("filters") or [] if w]
    return "\nCounted: " + "; ".join(words) + "." if words else ""


def _count_by(ctx: Ctx, e: Entity, flts: list[dict[str, Any]], keys: list[dict[str, Any]]) -> Step:
    """'How many … per branch': the ERP counts each group (an aggregate as the user)."""
    name = f"{e.name}.aggregate"
    args = {"measures": [{"func": "count"}], "group_by": keys, "filters": flts}
    r = ctx.result(name, args)
    if r is None:
        return _call(name, args)
    if not r.ok:
        return _failed(r)
    rows = [row for row in _rows(r) if row.get("count_records")]
    desc = _desc(ctx, _names_text(ctx))
    if not rows:
        return _text(f"No records found: there are 0 {e.plural.lower()}{desc} that you can see.")
    cols = [k for k in rows[0] if k != "count_records"]
    lines = [
        f"- {', '.join(str(row.get(c)) for c in cols)}: {fmt(row.get('count_records'))}"
        for row in sorted(rows, key=lambda row: -float(row.get("count_records") or 0))
    ]
    by = str(keys[-1].get("part") or keys[-1]["field"]).replace("_", " ")
    return _text(f"{e.plural} by {by}{desc}:\n" + "\n".join(lines) + counted_line(r))


def _group_keys(ctx: Ctx, e: Entity) -> list[dict[str, Any]]:
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


def _group_label(row: Mapping[str, Any], cols: Sequence[str], part: str | None) -> str:
    """'March 2026' for a (year, month) group; the value itself for any other group."""
    values = [row.get(c) for c in cols]
    if part == "month" and values and isinstance(values[-1], int) and 1 <= values[-1] <= 12:
        name = calendar.month_name[values[-1]]
        return f"{name} {values[0]}" if len(values) > 1 else name
    if part == "quarter" and values and isinstance(values[-1], int):
        return f"Q{values[-1]} {values[0]}" if len(values) > 1 else f"Q{values[-1]}"
    return " ".join(str(v) for v in values)


def _measure_field(ctx: Ctx, e: Entity) -> str | None:
    asked = sorted(ctx.req.fields_asked, key=lambda n: n == e.amount_field)
    for name in asked:
        f = e.fields.get(name)
        if f is not None and (f.summable or f.type in (FieldType.MONEY, FieldType.NUMBER)):
            return name
    return e.amount_field


def _total(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    name = f"{e.name}.aggregate"
    measure = _measure_field(ctx, e)
    if measure is None and ctx.req.top:
        # "Our biggest expense account": a ranking by an amount these records do not carry; a
        # count of them would answer another question.
        return _text(
            f"I can't tell what to rank {e.plural.lower()} by: they carry no amount. "
            f"{capabilities(e, ctx.tools)}"
        )
    if not ctx.has(name) or measure is None:
        return (
            _count(ctx)
            if ctx.has(f"{e.name}.count") and measure is None
            else _missing_tool(ctx, e, "aggregate")
        )
    flts, step = _all_filters(ctx, e)
    if step:
        return step
    keys = _group_keys(ctx, e)
    if ctx.req.top and not keys:
        return _text(
            f"I can't tell what to rank {e.plural.lower()} by. {capabilities(e, ctx.tools)}"
        )
    currency = "currency" in e.fields and e.fields["currency"].groupable and not ctx.view.company
    # Amounts in different currencies are never added together: split every total by currency.
    group = ([{"field": "currency"}] if currency else []) + keys
    way = direction_field(e)
    if way is not None and way not in ctx.req.enum_filters and all(k["field"] != way for k in keys):
        # Money in and money out are never added together either: the sentence did not say
        # which, so each is its own figure.
        keys = [*keys, {"field": way}]
        group.append({"field": way})
    args = {
        "measures": [{"func": "sum", "field": measure}, {"func": "count"}],
        "group_by": group,
        "filters": flts,
    }
    r = ctx.result(name, args)
    if r is None:
        return _call(name, args)
    if not r.ok:
        return _failed(r)
    rows = _rows(r)
    sum_key = f"sum_{measure}"
    label = e.fields[measure].label.lower()
    desc = _desc(ctx, _names_text(ctx))
    if not rows or all(not row.get("count_records") for row in rows):
        return _text(f"No records found: there are no {e.plural.lower()}{desc} that you can see.")
    if not keys:
        parts = [
            f"{row.get('currency') or ''} {fmt(row.get(sum_key))} over {fmt(row.get('count_records'))} {e.plural.lower()}".strip()
            for row in rows
        ]
        what = "Total" if label == "total" else f"Total {label}"
        return _text(
            f"{what} of {e.plural.lower()}{desc}: " + "; ".join(parts) + "." + counted_line(r)
        )
    key = keys[-1]["field"]
    group_cols = [k for k in rows[0] if k not in (sum_key, "count_records", "currency")]
    label_key = group_cols[-1] if group_cols else key
    chart = "line" if ctx.req.date_part else "bar"
    wants_chart = ctx.req.chart or bool(ctx.req.top)
    shown = _display(
        ctx,
        r,
        chart=chart if wants_chart else None,
        label=label_key,
        values=[sum_key],
        title=f"{label.title()} by {ctx.req.date_part or key.replace('_', ' ')}",
        top=ctx.req.top,
    )
    if shown:
        return shown
    ordered = sorted(rows, key=lambda row: -(row.get(sum_key) or 0)) if ctx.req.top else rows
    picked = ordered[: ctx.req.top] if ctx.req.top else ordered[:12]
    lines = [
        f"- {_group_label(row, group_cols, ctx.req.date_part)}: {row.get('currency') or ''} "
        f"{fmt(row.get(sum_key))} ({fmt(row.get('count_records'))} {e.plural.lower()})".replace(
            ": ", ": ", 1
        ).replace("  ", " ")
        for row in picked
    ]
    head = (
        f"Top {ctx.req.top} by {label}"
        if ctx.req.top
        else f"{label.capitalize()} by {key.replace('_', ' ')}"
    )
    if ctx.req.date_part:
        head = f"{label.capitalize()} by {ctx.req.date_part}"
    more = "\n(the rest are in the table)" if len(rows) > len(picked) and not ctx.req.top else ""
    return _text(f"{head} of {e.plural.lower()}{desc}:\n" + "\n".join(lines) + more)


def _report(ctx: Ctx) -> Step:
    from erp_agent.planner import _reports  # reports live apart; they use this module's helpers

    return _reports.report(ctx)
