"""Not understood: an id to search for, or a plain statement of what was not understood, with
the nearest questions that can be answered."""

from __future__ import annotations

from erp_agent.planner import nearest, vocabulary
from erp_agent.planner.steps import Ctx, Step, hand_over, say


def handle(ctx: Ctx) -> Step:
    if ctx.req.loose_ids:
        return hand_over("find")
    # Not a refusal: nothing refused anything, the words were simply not understood.
    part = " ".join(vocabulary.unknown_words(ctx.req.text, ctx.catalog)[:6])
    return say(nearest.not_understood(ctx.req.text, part, ctx.catalog, ctx.tools))
