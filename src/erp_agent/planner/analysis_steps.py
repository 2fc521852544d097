"""Analyses through the hand-written analytics tools when they are offered (arguments filled
from their schemas), and their results in words."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner import _fill, metric_plan
from erp_agent.planner.answer import fmt, is_number
from erp_agent.planner.filters import base_filters, name_filters
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import (
    PARTY_ENTITIES,
    Ctx,
    Step,
    call,
    display,
    failed,
    group_keys,
    measure_field,
    rows_of,
    say,
)


def transaction_for(ctx: Ctx, master: Entity) -> Entity | None:
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


def module(ctx: Ctx, tool: str, e: Entity | None, **extra: Any) -> Step | None:
    """Use a hand-written analysis tool when it is offered and its arguments can be filled."""
    if not ctx.has(tool):
        # A permitted tool routing did not offer: ask tools.search to enable it, once.
        if ctx.has("tools.search") and ctx.result("tools.search", {"query": tool}) is None:
            return call("tools.search", {"query": tool})
        return None
    req = ctx.req
    # A forecast or trend needs the whole history; other analyses keep the asked period.
    keep_dates = req.kind in (Kind.ANOMALIES, Kind.CONCENTRATION)
    flts: list[Any] = []
    if e is not None:
        # Every name said is kept ("Savanna's sales", "Harbor Goods' receivables"); a word of
        # the analysis itself ("reliant", "odd-looking") is no name to look up.
        named, step = name_filters(ctx, e)
        if step is not None:
            return step
        flts = base_filters(ctx, e)[0] + named
    period = req.period
    keys = group_keys(ctx, e) if e else []
    slots = {
        "entity": e.name if e else None, "measure": (_measure(ctx, e) if e else None),
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
        return call(tool, args)
    if not r.ok:
        return failed(r)
    shown = display(ctx, r, title=tool) if rows_of(r) else None
    if shown:
        return shown
    return say(_summary_text(r.data, tool))


def _measure(ctx: Ctx, e: Entity) -> str | None:
    """The amount the figure named sums on these records ("sales": the net total, "receivables":
    what is outstanding), else the field the words ask for or the records' amount."""
    for m in metric_plan.ranked(ctx.catalog, ctx.req)[:1]:
        field = getattr(m.measure, "field", None)
        if m.entity == e.name and m.measure.func == "sum" and field in e.fields:
            return str(field)
    field = measure_field(ctx, e)
    if ctx.req.kind == Kind.CONCENTRATION and field == e.amount_field and "net_total" in e.fields:
        # "How dependent are we on our top customers": their share of sales, valued before
        # tax as ERPNext's Sales and Purchase Analytics value them, not of the taxed totals.
        return "net_total"
    return field


def _party_field(e: Entity | None) -> str | None:
    if e is None:
        return None
    return next(
        (n for n, f in e.fields.items() if f.target in PARTY_ENTITIES and f.groupable), None
    )


def _summary_text(data: Any, title: str) -> str:
    """An analysis result in words: its observations and KPIs, values as the tool gave them."""
    lines: list[str] = []
    if isinstance(data, dict):
        obs = data.get("observations")
        if isinstance(obs, list):
            # Eight per currency: one currency's observations never crowd out another's.
            lines += [f"- {o}" for o in obs[: 8 * max(1, len(data.get("currencies") or []))]
                      if isinstance(o, str)]  # fmt: skip
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
