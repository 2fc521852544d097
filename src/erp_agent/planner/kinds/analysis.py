"""Forecast, concentration and anomalies: the analytics tool for each when offered; declined
rather than estimated otherwise."""

from __future__ import annotations

from erp_agent.planner.analysis_steps import module, transaction_for
from erp_agent.planner.answer import capabilities
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import Ctx, Step, say


def handle(ctx: Ctx) -> Step:
    e = ctx.req.entity
    if e is not None and e.kind.value == "master" and ctx.req.kind == Kind.CONCENTRATION:
        # "dependent on our customers": the master is the grouping of its documents' amounts.
        # A forecast of a master ("the exchange rate") is not redirected: that would be a guess.
        e = transaction_for(ctx, e) or e
        ctx.req.entity = e
    kind = Kind(ctx.req.kind)
    tool = {Kind.FORECAST: "analytics.forecast", Kind.CONCENTRATION: "analytics.concentration",
            Kind.ANOMALIES: "analytics.anomalies"}[kind]  # fmt: skip
    step = module(ctx, tool, e)
    if step is not None:
        return step
    what = {Kind.FORECAST: "project future figures", Kind.CONCENTRATION: "measure concentration",
            Kind.ANOMALIES: "look for unusual records"}[kind]  # fmt: skip
    return say(
        f"I can't {what} with the tools available in this session, and I won't estimate. {capabilities(e, ctx.tools)}"
    )
