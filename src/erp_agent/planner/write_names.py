"""The party and the lines of a new document, named the way people name them.

"raise a quotation for Acme Ltd for 3 x Grey Hammer and 2 SKU-8498-GRY": the party is a
customer (never the company: a company the user can see is not a party to sell to), each line
a quantity and an item by name or code; both are resolved against the ERP's records as the user
(``master_data``), so only records the user can see are used and a misspelling still matches.
"""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner import master_data, vocabulary
from erp_agent.planner.steps import Ctx, Step, rows_of

# "12 x Grey Hammer", "200 metres of brown extension cable", "3 boxes of nails please": a
# quantity, a unit of measure or "of", and the item's name up to a word that ends it.
_UNITS = r"(?:units?|pcs|pieces?|boxes|box|packs?|cartons?|sets?|pairs?|rolls?|metres?|meters?|m|kgs?|kilos?|litres?|liters?|nos)"
_ENDS = (
    r"(?:and|at|for|to|each|with|please|pls|plz|thanks|thank|asap|by|from|on|in|today|tomorrow)\b"
)
_LINE = re.compile(
    rf"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:x|×|{_UNITS}\s+of|of|{_UNITS})?\s+"
    rf"(?!{_ENDS})([A-Za-z][\w&'\-]*(?:\s+(?!{_ENDS})[A-Za-z0-9][\w&'\-]*){{0,4}})",
    re.IGNORECASE,
)
_PARTY = re.compile(
    r"\b(?:for|to)\s+(?:(?:the\s+)?(?:customer|client|supplier|lead)\s+)?"
    r"(?!\d)([A-Z][\w&.'\-]*(?:\s+[A-Z][\w&.'\-]*)*)",
    re.UNICODE,
)


def lines(text: str) -> list[tuple[float, str]]:
    """(quantity, item name or code) for each 'N x item' in the text."""
    out = []
    for m in _LINE.finditer(text):
        name = m.group(2).strip().rstrip(".,")
        if name.lower() in ("days", "day", "weeks", "months", "percent"):
            continue
        out.append((float(m.group(1)), name))
    return out


def party_name(ctx: Ctx, item_names: list[str]) -> str | None:
    """The party the document is for: 'for <Name>' (not an item line, not a company)."""
    companies = _company_names(ctx)
    items = {n.lower() for n in item_names}
    said = [m.group(1) for m in _PARTY.finditer(ctx.req.text)]
    # "quote Acme Ltd 20 …": a name the request gives without "for"; "to acme ltd for …": a
    # name typed in lower case (the master data decides whether it is one).
    said += [v for _, v in ctx.req.names]
    said += [m.group(1) for m in _LOWER_PARTY.finditer(ctx.req.text)]
    said += [m.group(1) for m in _VERB_PARTY.finditer(ctx.req.text)]
    said += [m.group(1) for m in _DOC_PARTY.finditer(ctx.req.text)]
    # "… with Ohio Valley Imports, delivered to Houston Stores": a name ending as a store's
    # does is the party only when no other is said ("for Chui Stores").
    said.sort(key=lambda n: bool(_STORE_END.search(n.strip(" .,?!"))))
    for raw in said:
        name = raw.strip(" .,")
        low = name.lower()
        if name and low not in items and low not in companies and not _inside_item(low, items):
            return name
    return None


_STORE_END = re.compile(r"\b(?:stores?|warehouses?)$", re.IGNORECASE)
_LOWER_PARTY = re.compile(
    r"\b(?:for|to|from)\s+(?:(?:the\s+)?(?:customer|client|supplier|lead)\s+)?"
    r"(?!\d)(?!(?:today|tomorrow|yesterday|next|last|this|now|then|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\b)"
    r"([a-z][\w&.'\-]*(?:\s+[a-z][\w&.'\-]*){0,3}?)"
    # ("… from kilifi supplies by cheque today": the name ends where how or when begins.)
    r"(?=\s+(?:for|with|by|via|through|using|in cash|today|yesterday|on|please|pls|plz|asap)\b"
    r"|\s+\d|\s+[-–—:]|[,;:]|$)"
)


# "quote equator logistics for 30 …", "invoice acme 5 chairs": verbs whose object is the party.
_VERB_PARTY = re.compile(
    r"^\s*(?:(?:please|pls|can you|could you)\s+)?(?:quote|invoice|bill|charge)\s+"
    r"(?!(?:a|an|the|for|me|us|them|it)\b)(?!\d)"
    r"([a-z][\w&.'\-]*(?:\s+[a-z][\w&.'\-]*){0,3}?)(?=\s+(?:for|with)\b|\s+\d)"
)


# "raise PO carolina paper mills 500 silver cartons": the document, then its party, then lines.
_DOC_PARTY = re.compile(
    r"^\s*(?:(?:please|pls|can you|could you)\s+)?(?:raise|make|create|draft|prepare|do|new)\s+"
    r"(?:an?\s+|new\s+)?(?:po|lpo|purchase order|sales order|so|quotation|quote)\s+"
    r"(?:(?:for|to|with|from)\s+)?(?!(?:a|an|the|for|me|us|them|it)\b)(?!\d)"
    r"([a-z][\w&.'\-]*(?:\s+[a-z][\w&.'\-]*){0,3}?)(?=\s+\d)",
    re.IGNORECASE,
)


def lowercase_for(ctx: Ctx) -> list[str]:
    """Names typed in lower case after "for" that no word of ours makes up ("leave for otieno
    wafula: 3 days"): whom the document is for, to look up."""
    loose = {n.lower() for n in vocabulary.loose_names(ctx.req.text, ctx.catalog)}
    said = [m.group(1).strip(" .,") for m in _LOWER_PARTY.finditer(ctx.req.text)]
    # Two words or more, after "for": a person's names ("to apply for …" names no one).
    return [
        n for n in said
        if n.lower() in loose and len(n.split()) > 1
        and re.search(rf"\bfor\s+{re.escape(n)}\b", ctx.req.text)
    ]  # fmt: skip


def _inside_item(name: str, items: set[str]) -> bool:
    return any(name in item or item in name for item in items)


def _company_names(ctx: Ctx) -> set[str]:
    names = {ctx.view.company.lower()} if ctx.view.company else set()
    r = ctx.result("company.list")
    if r is not None:
        names |= {str(row.get("id", "")).lower() for row in rows_of(r)}
    return names


def resolve_party(
    ctx: Ctx, name: str, dimension: str = "customer"
) -> tuple[str | None, Step | None]:
    found, step = master_data.resolve(ctx, [(dimension, name)], [dimension])
    if step is not None:
        return None, step
    hit = found.get(name)
    return (hit[1] if hit else None), None


def resolve_lines(
    ctx: Ctx, wanted: list[tuple[float, str]]
) -> tuple[list[dict[str, Any]] | None, Step | None]:
    """Line rows {item, qty} with item ids from the ERP; the step to look them up first."""
    found, step = master_data.resolve(ctx, [("item", n) for _, n in wanted], ["item"])
    if step is not None:
        return None, step
    return [{"item": found[n][1], "qty": q} for q, n in wanted if n in found], None
