"""How old what is owed is: receivables (what customers owe us) or payables (what we owe
suppliers) by days past due, through the ageing analysis; declined rather than estimated when
it is not offered."""

from __future__ import annotations

import re

from erp_agent.planner.analysis_steps import module
from erp_agent.planner.answer import capabilities
from erp_agent.planner.steps import Ctx, Step, say

# Which side: the documents or parties of buying, or words for what we owe.
_PAYABLE = re.compile(r"\b(payables?|creditors|suppliers?|vendors?|we owe|bills?)\b", re.I)
_SIDE_OF = {"purchase_invoice": "payable", "supplier": "payable",
            "sales_invoice": "receivable", "customer": "receivable"}  # fmt: skip
_INVOICES = {"payable": "purchase_invoice", "receivable": "sales_invoice"}


def handle(ctx: Ctx) -> Step:
    e = ctx.req.entity
    side = _SIDE_OF.get(e.name if e else "") or (
        "payable" if _PAYABLE.search(ctx.req.text) else "receivable"
    )
    invoices = ctx.catalog.entity(_INVOICES[side])
    ctx.req.entity = invoices  # a party's ageing is its invoices' (their filters, their names)
    step = module(ctx, "analytics.ageing", invoices, side=side)
    if step is not None:
        return step
    return say(
        f"I can't age {side}s with the tools available in this session, and I won't "
        f"estimate. {capabilities(invoices, ctx.tools)}"
    )
