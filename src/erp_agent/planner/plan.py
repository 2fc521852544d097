"""The dispatcher: the plans and the question kinds of ``catalog/data/questions.yaml``, in
order, each run by its handler (``planner/kinds``). Re-run on every model call, so a
multi-step plan (aggregate → chart → answer) continues from the results the conversation holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.catalog.questions import load_questions
from erp_agent.planner import kinds, questions
from erp_agent.planner.context import TurnView
from erp_agent.planner.intents import understand
from erp_agent.planner.steps import Ctx, Step

_MAX_HAND_OVERS = 4  # a kind handing over to another, and that one on: never a loop


def next_step(
    catalog: Catalog, connector: str, view: TurnView, tools: dict[str, Mapping[str, Any]]
) -> Step:
    """The request on its own, without the conversation (see ``dispatch.next_step``)."""
    req = understand(catalog, connector, view.request, view.today)
    return plan(Ctx(req, view, tools, catalog, connector))


def plan(ctx: Ctx) -> Step:
    """The next step for a request already read: the first plan with a step for it, else its
    kind's handler."""
    ctx.dispatch = plan
    facts = questions.Facts(ctx.req, ctx.req.text.lower(), {}, ctx.catalog)
    for entry in load_questions().plans:
        checks = {"applies": lambda _f, name=entry.handler: kinds.applies(name)(ctx)}
        if questions.holds(entry.when, facts, checks):
            step = kinds.handler(entry.handler)(ctx)
            if step is not None:
                return _run(ctx, step)
    return _run(ctx, _handle(ctx, str(ctx.req.kind)))


def _handle(ctx: Ctx, kind: str) -> Step | None:
    return kinds.handler(load_questions().kind(kind).handler)(ctx)


def _run(ctx: Ctx, step: Step | None) -> Step:
    for _ in range(_MAX_HAND_OVERS):
        if step is None or step.hand_over is None:
            break
        ctx.req.kind = step.hand_over
        step = _handle(ctx, step.hand_over)
    if step is None or step.hand_over is not None:
        return Step(text="I can't answer that from the ERP data available to you.")
    return step
