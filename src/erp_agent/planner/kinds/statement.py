"""'A statement for Lakeside Hardware for this year', 'supplier statement Machakos Wire &
Cable, last quarter': a party's account over a period, as a statement of account shows it —
what was billed to them (invoices with tax), what was paid (payments), and what is still
outstanding today — each figure from ``metrics.query`` with its definition, per currency."""

from __future__ import annotations

import dataclasses
import re

from erp_agent.planner import master_data, vocabulary
from erp_agent.planner.metric_plan import figure_step, together
from erp_agent.planner.parse_dates import Period
from erp_agent.planner.steps import Ctx, Step

_STATEMENT = re.compile(r"\bstatements?\b|\bstmt\b")
# Statements that are not a party's account: the company's own reports, a bank's.
_NOT_A_PARTY = re.compile(
    r"\b(financial|income|cash ?flow|profit|p ?& ?l|p and l|balance sheet|bank|vat|tax|trial)\b"
)
# Per kind of party: billed to them, paid (by or to them, as its dimension), still owed.
_FIGURES = {
    "customer": (("billed", "customer"), ("cash_received", "party"), ("receivables", "customer")),
    "supplier": (
        ("purchases_billed", "supplier"),
        ("cash_paid", "party"),
        ("payables", "supplier"),
    ),
}


def applies(ctx: Ctx) -> bool:
    low = ctx.req.text.lower()
    return not ctx.req.doc_ids and bool(_STATEMENT.search(low)) and not _NOT_A_PARTY.search(low)


def handle(ctx: Ctx) -> Step | None:
    req = ctx.req
    wanted = (
        ["supplier", "customer"] if "supplier" in req.text.lower() else ["customer", "supplier"]
    )
    names = [(h, v) for h, v in req.names if h in (None, *wanted)]
    # A party typed in lower case ("statement for gulf traders") may be any loose run of words.
    loose = [] if names else vocabulary.loose_names(req.text, ctx.catalog)
    if not names and not loose:
        return None
    found, step = master_data.resolve(ctx, names + [(None, n) for n in loose], wanted, loose)
    if step is not None:
        # A look-up to make, or a choice to ask; a name that is no party's ("statement of
        # account for Debtors - ST") is left to the ledger.
        return step if step.calls else None
    party = next(((d, v) for d, v in found.values() if d in _FIGURES), None)
    if party is None:
        return None
    kind, name = party
    period = req.period or Period(
        ctx.view.today.replace(month=1, day=1), ctx.view.today, "this year"
    )
    steps = []
    for metric_name, dimension in _FIGURES[kind]:
        metric = ctx.catalog.metrics.get(metric_name)
        if metric is None:
            return None
        # What is still owed is owed today, whenever it was billed.
        span = None if metric_name in ("receivables", "payables") else period
        # "What they paid and what's outstanding" name the figures, never a status filter.
        # The party decides whose records they are ("supplier statement": no other filter).
        sub = dataclasses.replace(
            ctx, req=dataclasses.replace(req, period=span, statuses=[], enum_filters={})
        )
        steps.append(figure_step(sub, metric, {name: (dimension, name)}))
    head = (
        f"Statement for {name} ({kind}), {period.start} to {period.end}: billed, paid, and "
        f"what is still outstanding on {ctx.view.today}."
    )
    return together(steps, head)
