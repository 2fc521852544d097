"""The plan: from the understood request and the results in hand, the next tool calls or the
final answer. Re-run on every model call, so a multi-step plan (aggregate → chart → answer)
continues from whatever results the conversation already holds."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from erp_agent.catalog import Catalog, Entity, FieldType
from erp_agent.planner import _fill
from erp_agent.planner.answer import capabilities, fmt, is_number, join, record_line
from erp_agent.planner.context import Result, TurnView
from erp_agent.planner.intents import Kind, Request, norm, understand
from erp_agent.planner.parse_dates import Period

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

    def has(self, name: str) -> bool:
        return name in self.tools

    def result(self, name: str, args: Mapping[str, Any] | None = None) -> Result | None:
        for r in self.view.results:
            if r.name == name and (args is None or _same(r.args, args)):
                return r
        return None


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


# ------------------------------------------------------------------ entry


def next_step(
    catalog: Catalog, connector: str, view: TurnView, tools: dict[str, Mapping[str, Any]]
) -> Step:
    req = understand(catalog, connector, view.request, view.today)
    ctx = Ctx(req, view, tools, catalog)
    handler = {
        Kind.LIST: _list,
        Kind.COUNT: _count,
        Kind.TOTAL: _total,
        Kind.TREND: _trend,
        Kind.FORECAST: _analysis,
        Kind.CONCENTRATION: _analysis,
        Kind.ANOMALIES: _analysis,
        Kind.REPORT: _report,
        Kind.DOCUMENT: _document,
        Kind.WORKFLOW: _workflow,
        Kind.KNOWLEDGE: _knowledge,
        Kind.FIND: _find,
        Kind.WRITE: _write,
        Kind.UNKNOWN: _unknown,
    }[req.kind]
    return handler(ctx)


# ------------------------------------------------------------------ filters


def _desc(ctx: Ctx, names: Sequence[str] = ()) -> str:
    req, parts = ctx.req, []
    overdue_by_age = req.age_days is not None and req.statuses == ["Overdue"]
    if req.statuses and not overdue_by_age:
        parts.append(join(req.statuses, "or").lower())
    for value in names:
        parts.append(f"for {value}")
    if req.age_days is not None:
        parts.append(f"more than {req.age_days} days overdue")
    if req.amount is not None:
        parts.append(f"{req.amount.op} {fmt(float(req.amount.value))}")
    if req.period is not None:
        # ISO dates only: a bare year would read as an untraceable figure to the provenance guard.
        parts.append(f"from {req.period.start} to {req.period.end}")
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


def _all_filters(ctx: Ctx, e: Entity) -> tuple[list[Filter], Step | None]:
    if ctx.req.compared_field:
        label = e.fields[ctx.req.compared_field].label.lower()
        return [], _text(
            f"I can't compare {e.plural.lower()} against their {label} with the tools available, "
            f"so I won't guess which ones qualify. {capabilities(e, ctx.tools)}"
        )
    base, problem = _base_filters(ctx, e)
    if problem:
        return [], _text(
            f"{problem[0].upper()}{problem[1:]}, so I won't guess an answer. {capabilities(e, ctx.tools)}"
        )
    named, step = _name_filters(ctx, e)
    return base + named, step


def _missing_tool(ctx: Ctx, e: Entity | None) -> Step:
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


def _list(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
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
    name = f"{e.name}.count"
    args: dict[str, Any] = {"filters": flts}
    if not ctx.has(name):
        if not ctx.has(f"{e.name}.aggregate"):
            return _missing_tool(ctx, e)
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
    return _text(f"There are {fmt(n)} {e.plural.lower()}{desc}.")


def _group_keys(ctx: Ctx, e: Entity) -> list[dict[str, Any]]:
    req = ctx.req
    if req.group:
        key: dict[str, Any] = {"field": req.group}
        if req.date_part:
            key["part"] = req.date_part
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
    if not ctx.has(name) or measure is None:
        return (
            _count(ctx) if ctx.has(f"{e.name}.count") and measure is None else _missing_tool(ctx, e)
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
    group = keys or ([{"field": "currency"}] if currency else [])
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
        return _text(f"{what} of {e.plural.lower()}{desc}: " + "; ".join(parts) + ".")
    key = keys[0]["field"]
    label_key = next((k for k in rows[0] if k not in (sum_key, "count_records")), key)
    chart = "line" if ctx.req.date_part else "bar"
    wants_chart = ctx.req.chart or bool(ctx.req.top)
    shown = _display(
        ctx,
        r,
        chart=chart if wants_chart else None,
        label=label_key,
        values=[sum_key],
        title=f"{label.title()} by {key.replace('_', ' ')}",
    )
    if shown:
        return shown
    ordered = sorted(rows, key=lambda row: -(row.get(sum_key) or 0)) if ctx.req.top else rows
    picked = ordered[: ctx.req.top] if ctx.req.top else ordered[:12]
    lines = [
        f"- {row.get(label_key)}: {fmt(row.get(sum_key))} ({fmt(row.get('count_records'))} {e.plural.lower()})"
        for row in picked
    ]
    head = (
        f"Top {ctx.req.top} by {label}"
        if ctx.req.top
        else f"{label.capitalize()} by {key.replace('_', ' ')}"
    )
    if ctx.req.date_part:
        head = f"{label.capitalize()} by {ctx.req.date_part}"
    more = (
        f"\n(and {fmt(len(rows) - len(picked))} more in the table)"
        if len(rows) > len(picked) and not ctx.req.top
        else ""
    )
    return _text(f"{head} of {e.plural.lower()}{desc}:\n" + "\n".join(lines) + more)


def _trend(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    for tool in ("analytics.trend", "analytics.monthly_trend"):
        step = _module(ctx, tool, e)
        if step is not None:
            return step
    if not e.date_field:
        return _text(f"{e.plural} have no date to follow over time. {capabilities(e, ctx.tools)}")
    if ctx.req.period is None:
        start = (ctx.view.today.replace(day=1) - dt.timedelta(days=335)).replace(day=1)
        ctx.req.period = Period(start, ctx.view.today, "the last 12 months")
    ctx.req.group, ctx.req.date_part, ctx.req.chart = (
        e.date_field,
        ctx.req.date_part or "month",
        True,
    )
    ctx.req.kind = Kind.TOTAL
    return _total(ctx)


def _analysis(ctx: Ctx) -> Step:
    e = ctx.req.entity
    tool = {Kind.FORECAST: "analytics.forecast", Kind.CONCENTRATION: "analytics.concentration",
            Kind.ANOMALIES: "analytics.anomalies"}[ctx.req.kind]  # fmt: skip
    step = _module(ctx, tool, e)
    if step is not None:
        return step
    what = {Kind.FORECAST: "project future figures", Kind.CONCENTRATION: "measure concentration",
            Kind.ANOMALIES: "look for unusual records"}[ctx.req.kind]  # fmt: skip
    return _text(
        f"I can't {what} with the tools available in this session, and I won't estimate. {capabilities(e, ctx.tools)}"
    )


def _module(ctx: Ctx, tool: str, e: Entity | None, **extra: Any) -> Step | None:
    """Use a hand-written analysis tool when it is offered and its arguments can be filled."""
    if not ctx.has(tool):
        return None
    req = ctx.req
    flts = _base_filters(ctx, e)[0] if e else []
    period = req.period
    keys = _group_keys(ctx, e) if e else []
    slots = {
        "entity": e.name if e else None, "measure": (_measure_field(ctx, e) if e else None),
        "date_field": e.date_field if e else None,
        "from_date": period.start.isoformat() if period else None,
        "to_date": period.end.isoformat() if period else None,
        "as_of": (req.as_of or ctx.view.today).isoformat(),
        "period": req.date_part or "month", "group_by": (keys[0]["field"] if keys else _party_field(e)),
        "top": req.top, "filters": [f for f in flts if f["field"] != (e.date_field if e else None)],
        "horizon": 1, "company": ctx.view.company, "query": req.text, **extra,
    }  # fmt: skip
    args = _fill.fill(ctx.tools[tool], slots)
    if args is None:
        return None
    r = ctx.result(tool, args)
    if r is None:
        return _call(tool, args)
    if not r.ok:
        return _failed(r)
    shown = _display(ctx, r, title=tool) if _rows(r) else None
    if shown:
        return shown
    return _text(_summary_text(r.data, tool))


def _party_field(e: Entity | None) -> str | None:
    if e is None:
        return None
    return next((n for n, f in e.fields.items() if f.target in _PARTIES and f.groupable), None)


def _summary_text(data: Any, title: str) -> str:
    """An analysis result in words: its observations and KPIs, values as the tool gave them."""
    lines: list[str] = []
    if isinstance(data, dict):
        obs = data.get("observations")
        if isinstance(obs, list):
            lines += [f"- {o}" for o in obs[:6] if isinstance(o, str)]
        kpis = data.get("kpis")
        if isinstance(kpis, dict):
            lines += [
                f"- {k.replace('_', ' ')}: {fmt(v)}"
                for k, v in list(kpis.items())[:8]
                if is_number(v) or isinstance(v, str)
            ]
        elif isinstance(kpis, list):
            for k in kpis[:8]:
                if isinstance(k, dict) and "label" in k:
                    lines.append(f"- {k['label']}: {fmt(k.get('value'))}")
    if not lines:
        return f"Here is the {title.split('.')[-1]} result."
    return f"{title.split('.')[-1].capitalize()}:\n" + "\n".join(lines)


def _report(ctx: Ctx) -> Step:
    from erp_agent.planner import _reports  # reports live apart; they use this module's helpers

    return _reports.report(ctx)


# ------------------------------------------------------------------ one document, workflow


def _earlier_id(ctx: Ctx, e: Entity | None) -> tuple[Entity, str] | None:
    """'this purchase order': the most recent id of that entity earlier in the conversation."""
    for text in reversed(ctx.view.earlier):
        found = ctx.catalog.find_document_ids("erpnext", text)
        for entity, doc_id in reversed(found):
            if e is None or entity.name == e.name:
                return entity, doc_id
    return None


def _document(ctx: Ctx) -> Step:
    e, doc_id = ctx.req.doc_ids[0]
    name = f"{e.name}.get"
    if not ctx.has(name):
        if ctx.has("records.search"):
            return _find(ctx)
        return _missing_tool(ctx, e)
    r = ctx.result(name, {"id": doc_id})
    if r is None:
        return _call(name, {"id": doc_id})
    if not r.ok:
        if r.status == "erp_refused":
            return _text(
                f"No records found for {e.label} {doc_id} that you can see. The ERP said: {r.message}"
            )
        return _failed(r)
    row = r.data if isinstance(r.data, dict) else {}
    parts: list[str] = []
    if e.status_field and row.get(e.status_field):
        parts.append(f"status {row[e.status_field]}")
    if row.get("workflow_state"):
        parts.append(f"workflow state {row['workflow_state']}")
    if e.amount_field and is_number(row.get(e.amount_field)):
        cur = f"{row['currency']} " if row.get("currency") else ""
        parts.append(f"{e.fields[e.amount_field].label.lower()} {cur}{fmt(row[e.amount_field])}")
    if is_number(row.get("outstanding")):
        parts.append(f"outstanding {fmt(row['outstanding'])}")
    for fname in ctx.req.fields_asked:
        value = row.get(fname)
        label = e.fields[fname].label.lower()
        if (
            value is not None
            and not isinstance(value, (list, dict))
            and label not in " ".join(parts)
        ):
            parts.append(f"{label} {fmt(value)}")
    for fname in ("due_date", "customer_name", "supplier_name"):
        if row.get(fname) and fname.replace("_", " ") not in " ".join(parts):
            parts.append(f"{fname.replace('_', ' ')} {row[fname]}")
    return _text(f"{e.label} {doc_id}: " + ", ".join(parts) + ".")


def _workflow_describe(
    ctx: Ctx, e: Entity, doc_id: str | None
) -> tuple[Step | None, dict[str, Any] | None]:
    tool = f"{e.name}.workflow"
    args: dict[str, Any] | None = {"id": doc_id} if doc_id else {}
    if not ctx.has(tool):
        tool = "workflow.describe"
        args = (
            _fill.fill(ctx.tools[tool], {"entity": e.name, "id": doc_id}) if ctx.has(tool) else None
        )
        if args is None:
            return _text(
                f"No approval workflow information about {e.plural.lower()} is available to you."
            ), None
    if args is None:
        return _text("No approval workflow information is available to you."), None
    r = ctx.result(tool, args)
    if r is None:
        return _call(tool, args), None
    if not r.ok:
        return _failed(r), None
    return None, (r.data if isinstance(r.data, dict) else {})


def _workflow(ctx: Ctx) -> Step:
    req = ctx.req
    found = req.doc_ids[0] if req.doc_ids else _earlier_id(ctx, req.entity)
    if found is None:
        if req.entity is None:
            return _text(
                "Which document do you mean? Give its id (for example a purchase order number) and I'll show its approval state and the actions available to you."
            )
        return _text(
            f"Which {req.entity.label.lower()}? Give its id and I'll show its state and the actions available to you."
        )
    e, doc_id = found
    step, info = _workflow_describe(ctx, e, doc_id)
    if step is not None or info is None:
        return step or _text("")
    if not info.get("states") and info.get("message"):
        return _text(str(info["message"]))
    state = info.get("current_state") or "unknown"
    available = [
        t.get("action") for t in info.get("available_actions") or [] if isinstance(t, dict)
    ]
    text = f"{e.label} {doc_id} is in state {state}. "
    if available:
        text += f"Actions available to you now: {join([str(a) for a in available], 'and')}."
    else:
        text += "No workflow action is available to you on it now."
        nexts = [
            t
            for t in info.get("transitions") or []
            if isinstance(t, dict) and t.get("state") == state
        ]
        if nexts:
            text += (
                " From this state: "
                + "; ".join(
                    f"{t.get('action')} (by {t.get('allowed_role')}) → {t.get('next_state')}"
                    for t in nexts
                )
                + "."
            )
        elif state:
            text += " No transition leaves this state."
    return _text(text)


# ------------------------------------------------------------------ search


def _knowledge(ctx: Ctx) -> Step:
    if not ctx.has("knowledge.search"):
        return _text(
            "I can't search the process documentation in this session, so I won't describe the process from memory."
        )
    args = _fill.fill(ctx.tools["knowledge.search"], {"query": ctx.req.text})
    if args is None:
        return _text("I can't search the process documentation in this session.")
    r = ctx.result("knowledge.search", args)
    if r is None:
        return _call("knowledge.search", args)
    if not r.ok:
        return _failed(r)
    hits = _rows(r)
    if not hits:
        return _text(
            "I found nothing about that in the knowledge base, so I can't answer it reliably."
        )
    lines = []
    for hit in hits[:3]:
        title = (
            hit.get("title") or hit.get("source") or hit.get("document") or "a knowledge article"
        )
        snippet = str(hit.get("text") or hit.get("content") or hit.get("snippet") or "").strip()
        lines.append(f"- {title}: {snippet[:400]}")
    return _text("From the knowledge base:\n" + "\n".join(lines))


def _find(ctx: Ctx) -> Step:
    query = " ".join(ctx.req.loose_ids) or ctx.req.text
    if not ctx.has("records.search"):
        if ctx.req.entity is not None and ctx.req.kind is Kind.FIND:
            ctx.req.kind = Kind.LIST
            return _list(ctx)
        return _text(
            f"I can't search records in this session. {capabilities(ctx.req.entity, ctx.tools)}"
        )
    slots: dict[str, Any] = {"query": query}
    if ctx.req.entity is not None:
        slots["entity"] = ctx.req.entity.name
    args = _fill.fill(ctx.tools["records.search"], slots) or _fill.fill(
        ctx.tools["records.search"], {"query": query}
    )
    if args is None:
        return _text("I can't search records in this session.")
    r = ctx.result("records.search", args)
    if r is None:
        return _call("records.search", args)
    if not r.ok:
        return _failed(r)
    hits = _rows(r)
    if ctx.req.loose_ids:
        exact = [h for h in hits if str(h.get("id") or h.get("name") or "") in ctx.req.loose_ids]
        if not exact:
            return _text(f"No records found for {join(ctx.req.loose_ids)} that you can see.")
        hits = exact
    if not hits:
        return _text("No records found that match that description and that you can see.")
    lines = []
    for hit in hits[:5]:
        hid = hit.get("id") or hit.get("name")
        text = str(
            hit.get("text") or hit.get("fact_card") or hit.get("snippet") or hit.get("title") or ""
        )
        lines.append(f"- {hid}: {text[:300]}" if text else f"- {hid}")
    return _text("Best matches:\n" + "\n".join(lines))


def _unknown(ctx: Ctx) -> Step:
    if ctx.req.loose_ids:
        return _find(ctx)
    return _text(
        "I can't see that: it isn't in the ERP data available to you, so I won't guess. "
        + capabilities(None, ctx.tools)
    )


def _write(ctx: Ctx) -> Step:
    from erp_agent.planner import _writes  # writes live apart; they use this module's helpers

    return _writes.write(ctx)
