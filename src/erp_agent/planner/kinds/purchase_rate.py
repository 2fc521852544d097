"""'What did we pay Kenya Wire & Cable for orange LED bulbs last time?', 'the rate Machakos
charged us for the Grey Hammer on their last delivery': the last purchase rate of an item
(``last_purchase_rate``: the rate on its line of the latest submitted Purchase Invoice), for the
supplier or company named. The item is what the question names in any case or number ("black
cordless drills" is the Black Cordless Drill); without an item named, the other kinds answer."""

from __future__ import annotations

import functools
import re
from typing import Any

from erp_agent.planner import metric_plan
from erp_agent.planner.answer import fmt, is_number
from erp_agent.planner.master_data import resolve
from erp_agent.planner.metric_plan import LIST_PRICE
from erp_agent.planner.name_phrases import name_phrases, whole_first
from erp_agent.planner.steps import Ctx, Step, call, enable
from erp_agent.planner.terms import CatalogKey

METRIC = "last_purchase_rate"
# A price paid, asked of the latest purchase: a rate, price or cost, or what we were charged.
_PRICE = re.compile(
    r"\b(rates?|prices?|cost(?:s|ing)?|paid|pay(?:ing)?|charg(?:e|ed|es|ing)|billed|bill(?:ed)? us|"
    r"(?:buying|bought)(?= (?:at|for|in at)\b)|c[oa]m(?:e|es|ing) in at|"
    r"cheap\w*|dear(?:er|est)|(?:most |more )?expensive|pric(?:ier|iest))\b"
)
_LATEST = re.compile(
    r"\b(last|latest|most recent|recent|previous|newest|these days|nowadays|currently|"
    r"at the moment|at present|right now)\b"
    # "What are we paying them per box": the rate paid now is the latest one.
    r"|\b(?:are|do) (?:we|i) (?:pay|paying|being charged|get charged)\b"
)
# "Which supplier gave us the cheapest rate on hinges": the suppliers' latest rates, side by
# side (each in its own currency, so the user sees which is lower).
_ACROSS = re.compile(
    r"\b(cheap\w*|lowest|best|highest|dearest|most expensive|compare\w*|across|between|"
    r"(?:which|what|each|every|per|by) (?:suppliers?|vendors?))\b"
)
# "Last month", "last year": a period, not the latest purchase.
_PERIOD = re.compile(
    r"\b(last|previous)\s+(week|month|quarter|year|fy|financial year|fiscal year|\d+\s+\w+)\b"
)
# Selling, not buying: the item price lists and sales figures answer those.
# "Who sells us hinges cheapest" is a supplier selling to us: buying.
_SELLING = re.compile(
    r"\b(?:(?:sell|sells|selling|sold)(?! (?:to )?us\b)|customers?|clients?|quot\w*|sales)\b"
)
# Words of the question itself, never an item's, supplier's or company's name.
_OWN_WORDS = frozenset(["rate", "rates", "price", "prices", "cost", "costs", "paid", "pay",
    "charge", "charged", "charges", "billed", "bill", "bills", "buying", "bought", "buy", "last",
    "latest", "recent", "previous", "newest", "time", "unit", "per", "each", "purchase",
    "purchased", "purchases", "receipt", "receipts", "delivery", "deliveries", "invoice",
    "invoices", "order", "orders", "supplier", "suppliers", "vendor", "item", "items", "product",
    "side", "quick", "hey", "hi", "thanks", "please", "pls", "one", "tell", "could", "would",
    "gave", "give", "goods", "received", "paying", "days", "nowadays", "currently", "moment",
    "present", "now", "them", "cheap", "cheaper", "cheapest", "dearer", "dearest", "expensive",
    "pricier", "priciest", "lowest", "highest", "best", "compare", "compared", "across",
    "between", "which", "who", "sells", "sell", "come", "came", "comes", "coming",
    "excluding", "including", "vat", "tax"])  # fmt: skip
_DIMENSIONS = ["item", "supplier", "company"]


@functools.lru_cache(maxsize=8)
def _document_words(key: CatalogKey) -> frozenset[str]:
    """The words the catalog names the buying documents by ("GRN", "LPO"): never an item's."""
    words: set[str] = set()
    for name in ("purchase_receipt", "purchase_invoice", "purchase_order"):
        e = key.catalog.entities.get(name)
        if e is not None:
            for term in (e.label, e.plural, *e.keywords, *e.synonyms):
                words |= {w for w in term.lower().split() if len(w) > 1}
    return frozenset(words)


def applies(ctx: Ctx) -> bool:
    req = ctx.req
    if req.doc_ids or METRIC not in ctx.catalog.metrics:
        return False
    low = req.text.lower()
    if _SELLING.search(low) or LIST_PRICE.search(low):
        return False
    latest = _LATEST.search(_PERIOD.sub(" ", low))
    if (latest or _ACROSS.search(low)) and _PRICE.search(low):
        return True
    named = metric_plan.pick(ctx.catalog, req)  # the ranking last: it scores every metric
    return named is not None and named.name == METRIC


def handle(ctx: Ctx) -> Step | None:
    if not ctx.has("metrics.query"):
        return enable(ctx, "metrics.query")
    req = ctx.req
    said = {v.lower() for _, v in req.names}
    text = req.text
    for words in req.settled:
        # Words already settled (a record picked for them in reply to "which item?").
        text = re.sub(rf"\b{re.escape(words)}\b", " ", text, flags=re.IGNORECASE)
    own = _OWN_WORDS | _document_words(CatalogKey(ctx.catalog))
    loose = [p for p in name_phrases(text, own, parts=False) if p.lower() not in said]
    # A name said inside a longer run ("LED" of "grey LED bulbs") is looked up as the run.
    inside = {w.removesuffix("s") for p in loose for w in p.lower().split()}
    names: list[tuple[str | None, str]] = [
        (h if h in _DIMENSIONS else None, v)
        for h, v in req.names
        if v.lower().removesuffix("s") not in inside and v.lower() not in _OWN_WORDS
    ]
    names += [(None, code) for code in req.items]
    names += [(None, p) for p in loose]
    if not names:
        return None
    found, step = resolve(ctx, names, _DIMENSIONS, loose)
    if step is not None:
        return step
    dropped = whole_first(found)
    kept: dict[str, tuple[str, str]] = {}
    for words, record in found.items():
        # One record once: a word and its run may find the same one.
        if words not in dropped and record not in kept.values():
            kept[words] = record
    # "And the brown screwdriver set?" after an item's rate: that item, not both.
    found = metric_plan.newest_per_dimension(req.text, kept)
    if not any(dim == "item" for dim, _ in found.values()):
        return None
    req.settled += list(found)
    if _ACROSS.search(req.text.lower()) and not any(d == "supplier" for d, _ in found.values()):
        # "Who sells us hinges cheapest?": each supplier's latest rate, side by side.
        req.group = "supplier"
    metric: Any = ctx.catalog.metrics[METRIC]
    kept_rate = None
    item = next(rec for dim, rec in found.values() if dim == "item")
    if not any(dim == "supplier" for dim, _ in found.values()) and ctx.has("item.get"):
        # No supplier named: ERPNext's own Last Purchase Rate on the item is said beside it.
        r = ctx.result("item.get", {"id": item})
        if r is None:
            return call("item.get", {"id": item})
        data = r.data if r.ok and isinstance(r.data, dict) else {}
        kept_rate = data.get("last_purchase_rate")
    step = metric_plan.figure_step(ctx, metric, found)
    if step is not None and step.text and is_number(kept_rate) and kept_rate:
        step.text += (
            f"\nThe item's own Last Purchase Rate, as ERPNext keeps it (from its latest "
            f"submitted Purchase Order or Receipt, in that company's currency): {fmt(kept_rate)}."
        )
    return step
