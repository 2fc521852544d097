"""Analyses: trend, forecast, concentration and anomalies through the analytics tools when they
are offered (arguments filled from their schemas); a trend falls back to an exact aggregate by
month; the others are declined rather than estimated."""

from __future__ import annotations

import datetime as dt
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner import _fill
from erp_agent.planner.answer import capabilities, fmt, is_number
from erp_agent.planner.intents import Kind
from erp_agent.planner.parse_dates import Period
from erp_agent.planner.plan import (
    _PARTIES,
    Ctx,
    Step,
    _base_filters,
    _call,
    _display,
    _failed,
    _group_keys,
    _measure_field,
    _rows,
    _text,
    _total,
)


def trend(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    compare = any(w in ctx.req.text.lower() for w in ("compare", " vs", "versus", "than last"))
    if compare:
        step = module(ctx, "analytics.comparison", e, period="year", year_on_year=True)
        if step is not None:
            return step
    step = module(ctx, "analytics.trend", e)
    if step is not None:
        return step
    if not e.date_field:
        return _text(f"{e.plural} have no date to follow over time. {capabilities(e, ctx.tools)}")
    today = ctx.view.today
    if compare:
        # Exact fallback for a comparison: one total per year, this year and the last.
        ctx.req.period = Period(dt.date(today.year - 1, 1, 1), today, "this year and last")
        ctx.req.date_part = "year"
    if ctx.req.period is None:
        start = (today.replace(day=1) - dt.timedelta(days=335)).replace(day=1)
        ctx.req.period = Period(start, today, "the last 12 months")
    ctx.req.group, ctx.req.date_part, ctx.req.chart = (
        e.date_field,
        ctx.req.date_part or "month",
        True,
    )
    ctx.req.kind = Kind.TOTAL
    return _total(ctx)


def _transaction_for(ctx: Ctx, master: Entity) -> Entity | None:
    """The documents that carry amounts for a master ("our customers" → their invoices):
    transactions linking to it, those with an outstanding balance (invoices) first."""
    linked = [
        t
        for t in ctx.catalog.entities.values()
        if t.amount_field and t.kind.value == "transaction"
        and any(f.target == master.name and f.groupable for f in t.fields.values())
    ]  # fmt: skip
    linked.sort(key=lambda t: "outstanding" not in t.fields)
    return linked[0] if linked else None


def analysis(ctx: Ctx) -> Step:
    e = ctx.req.entity
    if e is not None and e.kind.value == "master" and ctx.req.kind is Kind.CONCENTRATION:
        # "dependent on our customers": the master is the grouping of its documents' amounts.
        # A forecast of a master ("the exchange rate") is not redirected: that would be a guess.
        e = _transaction_for(ctx, e) or e
        ctx.req.entity = e
    tool = {Kind.FORECAST: "analytics.forecast", Kind.CONCENTRATION: "analytics.concentration",
            Kind.ANOMALIES: "analytics.anomalies"}[ctx.req.kind]  # fmt: skip
    step = module(ctx, tool, e)
    if step is not None:
        return step
    what = {Kind.FORECAST: "project future figures", Kind.CONCENTRATION: "measure concentration",
            Kind.ANOMALIES: "look for unusual records"}[ctx.req.kind]  # fmt: skip
    return _text(
        f"I can't {what} with the tools available in this session, and I won't estimate. {capabilities(e, ctx.tools)}"
    )


def module(ctx: Ctx, tool: str, e: Entity | None, **extra: Any) -> Step | None:
    """Use a hand-written analysis tool when it is offered and its arguments can be filled."""
    if not ctx.has(tool):
        # A permitted tool routing did not offer: ask tools.search to enable it, once.
        if ctx.has("tools.search") and ctx.result("tools.search", {"query": tool}) is None:
            return _call("tools.search", {"query": tool})
        return None
    req = ctx.req
    # A forecast or trend needs the whole history; other analyses keep the asked period.
    keep_dates = req.kind in (Kind.ANOMALIES, Kind.CONCENTRATION)
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
        "top": req.top, "filters": [f for f in flts if keep_dates or f["field"] != (e.date_field if e else None)],
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
