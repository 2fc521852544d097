"""'What % of Savanna's turnover last year was Acme?', 'how dependent are we on Acme?': the
share of one party (or item, branch…) in a figure — the figure for it, the same figure for the
whole (every other filter kept), and the one as a percentage of the other, computed by the
calculator. Per currency: a share is never taken across currencies."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from erp_agent.planner import metric_plan
from erp_agent.planner.answer import fmt
from erp_agent.planner.master_data import resolve
from erp_agent.planner.steps import Call, Ctx, Step, enable, failed, say

_SHARE = re.compile(
    r"\b(?:(?:what |the |a |market )share|share of|proportion|percent(?:age)? of|what part of"
    r"|dependen\w* on|depend on|reliant|reliance|chunk of|slice of|fraction of)\b|%"
)
# Dimensions whose one value is a part of the whole; the company (or a period) is the whole.
_PARTS = ("customer", "supplier", "item", "item_group", "branch", "territory", "customer_group",
          "supplier_group", "warehouse", "cost_center", "department")  # fmt: skip


def applies(ctx: Ctx) -> bool:
    req = ctx.req
    if req.doc_ids or req.top or req.group or not req.names:
        return False
    return bool(_SHARE.search(req.text.lower())) and _metric(ctx) is not None


def _metric(ctx: Ctx) -> Any | None:
    metric = metric_plan.pick(ctx.catalog, ctx.req)
    if metric is None or metric.measure.func != "sum":
        return None
    return metric


def handle(ctx: Ctx) -> Step | None:
    metric = _metric(ctx)
    if metric is None:
        return None
    if not ctx.has("metrics.query"):
        return enable(ctx, "metrics.query")
    found, step = resolve(ctx, ctx.req.names, list(metric.dimensions))
    if step is not None:
        return step
    part = {w: v for w, v in found.items() if v[0] in _PARTS}
    whole = {w: v for w, v in found.items() if v[0] not in _PARTS}
    if len({d for d, _ in part.values()}) != 1:
        return None  # no one part named (or parts of two kinds): the figure kinds answer
    ctx.req.settled += list(found)
    of_part = metric_plan.query_args(ctx, metric, found)
    of_whole = metric_plan.query_args(ctx, metric, whole)
    if of_part is None or of_whole is None:
        return None
    args = {"part": of_part, "whole": of_whole}
    results = {k: ctx.result("metrics.query", a) for k, a in args.items()}
    pending = [Call("metrics.query", args[k]) for k, r in results.items() if r is None]
    if pending:
        return Step(calls=pending)
    for r in results.values():
        if r is not None and not r.ok:
            return failed(r)
    of = _per_currency(results["part"].data if results["part"] else None)
    total = _per_currency(results["whole"].data if results["whole"] else None)
    shared = [c for c in total if total[c] and c in of]
    if not shared:
        return None
    expressions = [f"{of[c]} / {total[c]} * 100" for c in shared]
    if not ctx.has("calculator.evaluate"):
        return enable(ctx, "calculator.evaluate") or None
    calcs = {e: ctx.result("calculator.evaluate", {"expression": e}) for e in expressions}
    todo = [Call("calculator.evaluate", {"expression": e}) for e, r in calcs.items() if r is None]
    if todo:
        return Step(calls=todo)
    name = ", ".join(v for _, v in part.values())
    label = str(getattr(metric, "label", metric.name))
    lines = []
    for c, e in zip(shared, expressions, strict=True):
        r = calcs[e]
        pct = r.data.get("result") if r is not None and r.ok and isinstance(r.data, dict) else None
        # The calculator's result as it gave it, to the cent's precision (a figure it computed).
        share = f" ({Decimal(str(pct)).quantize(Decimal('0.01'))}%)" if pct is not None else ""
        lines.append(f"- {c} {fmt(float(of[c]))} of {c} {fmt(float(total[c]))}{share}")
    scope = [f"{d.replace('_', ' ')} {v}" for d, v in whole.values()]
    period = args["whole"].get("period") or {}
    if period.get("from"):
        scope.append(f"{period['from']} to {period.get('to')}")
    head = f"{name}'s share of {label.lower()}" + (f" for {', '.join(scope)}" if scope else "")
    return say(head + ":\n" + "\n".join(lines))


def _per_currency(data: Any) -> dict[str, Decimal]:
    if not isinstance(data, dict):
        return {}
    out: dict[str, Decimal] = {}
    for t in data.get("totals") or []:
        if isinstance(t, dict) and t.get("value") is not None:
            out[str(t.get("currency") or "")] = Decimal(str(t["value"]))
    return out
