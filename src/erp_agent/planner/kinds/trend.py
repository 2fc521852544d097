"""Trend: how a figure moves over time (the analytics trend or comparison when offered),
else an exact total by month over the last twelve months."""

from __future__ import annotations

import datetime as dt

from erp_agent.planner.analysis_steps import module
from erp_agent.planner.answer import capabilities
from erp_agent.planner.parse_dates import Period
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import Ctx, Step, hand_over, say


def handle(ctx: Ctx) -> Step:
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
        return say(f"{e.plural} have no date to follow over time. {capabilities(e, ctx.tools)}")
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
    return hand_over("total")
