"""A company named by its abbreviation: "cost of goods sold on ST", "HG's receivables". ERPNext
gives every company a short code and appends it to the names of its accounts, warehouses and
cost centres ("Office Expenses - ST"), so staff say it as they say the company."""

from __future__ import annotations

import re

from erp_agent.catalog import Catalog
from erp_agent.planner import intents
from erp_agent.planner.steps import Call, Ctx, rows_of
from erp_agent.planner.terms import message_saying

# Two to four capitals standing alone ("ST", "HG's"); a longer run is an acronym of something
# else, and a capital with lowercase letters is a word. After " - " the code is part of a
# record's name ("Rent - ST"): that record says whose it is; joined to a hyphen it is part of
# an id ("ACC-SINV-2026-00001").
_CODE = re.compile(r"(?<![\w&/-])(?<!- )([A-Z]{2,4})(?:['’]s)?(?![\w&/-])")
_ARGS = {"fields": ["id", "abbr"], "limit": 50}


def said(text: str, catalog: Catalog) -> list[str]:
    """The capitalised codes the text says that are none of our own terms ("PO", "AR")."""
    found = (m.group(1) for m in _CODE.finditer(text))
    return [c for c in dict.fromkeys(found) if not intents.said_for_a_term(catalog, c)]


def company_named(ctx: Ctx) -> str | Call | None:
    """The one company whose abbreviation the newest message that says one uses, the
    look-up of the companies' codes still to make, or None (no code said, or none is a code
    of a company this user can see). The code, once a company's, is settled: no other name."""
    segments = ctx.req.text.split(" ; ")
    at, codes = next(
        ((i, c) for i, s in reversed(list(enumerate(segments))) if (c := said(s, ctx.catalog))),
        (0, []),
    )
    if not codes or not ctx.has("company.list"):
        return None
    r = ctx.result("company.list", _ARGS)
    if r is None:
        return Call("company.list", _ARGS)
    if not r.ok:
        return None
    hits = {
        str(row["id"]): str(row["abbr"])
        for row in rows_of(r)
        if row.get("id") and str(row.get("abbr") or "") in codes
    }
    if len(hits) != 1:
        return None
    company, code = hits.popitem()
    ctx.req.settled.append(code)
    # "Same for HG" after "… for the kenyan company": the code is the company now, so neither
    # it nor a company said before it is a name to look up.
    low = [s.lower() for s in segments]
    ctx.req.names = [(h, v) for h, v in ctx.req.names if v != code
                     and not (h == "company" and message_saying(low, v) < at)]  # fmt: skip
    return company
