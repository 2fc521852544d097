"""Figures first: a question that names a figure the semantic layer defines is answered by
``metrics.query`` (its future, its trend or comparison, the metric a report or a comparison of
two fields means, or the figure itself); None leaves the request to its kind's handler."""

from __future__ import annotations

from erp_agent.planner import metric_plan
from erp_agent.planner.intents import forecasting, trending
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import Ctx, Step


def handle(ctx: Ctx) -> Step | None:
    req = ctx.req
    buckets = metric_plan.aged_buckets(ctx.catalog, req)
    if buckets:
        # "1-30, 31-60 and more than 90 days overdue": each bucket's own figure.
        req.age_days = req.age_until = None
        step = metric_plan.side_by_side(ctx, buckets)
        if step is not None:
            return step
    pair = metric_plan.two_figures(ctx) or metric_plan.count_and_sum(ctx.catalog, req)
    if pair:
        step = metric_plan.side_by_side(ctx, pair)
        if step is not None:
            return step
    if req.kind in (Kind.TOTAL, Kind.UNKNOWN) and req.entity is None and forecasting(req.text):
        # "What will we sell next month?": the future of the figure the words name.
        metric = metric_plan.pick(ctx.catalog, req)
        if metric is not None and metric.entity in ctx.catalog.entities:
            req.entity, req.kind = ctx.catalog.entities[metric.entity], Kind.FORECAST
    if req.kind == Kind.TREND or (
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
    # "How much orange packing tape is in the nairobi store" (asks_stock_at): the stock of what
    # is named there, not the stores themselves.
    if metric_plan.asks_stock_at(req) and not metric_plan.ranked(ctx.catalog, req):
        # "Grey hammers in kisumu stores?": no figure named; what is held there is asked.
        return metric_plan.metric_step(ctx, metric_plan.named_in(ctx.catalog, "stock on hand"))
    if (
        req.kind in (Kind.TOTAL, Kind.COUNT, Kind.UNKNOWN)
        or metric_plan.names_a_figure(ctx)
        or metric_plan.asks_stock_at(req)
    ):
        return metric_plan.metric_step(ctx)
    return None
