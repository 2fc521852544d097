"""'What's the standard buying price of the Grey Office Chair?', 'and on the USD buying price
list?': an item's price in the price lists (its Item Prices), each in its price list's currency
and unit — not what was last paid for it, which the last purchase rate answers."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner.answer import fmt
from erp_agent.planner.intents import currencies_of
from erp_agent.planner.master_data import earlier_values, resolve
from erp_agent.planner.metric_plan import LIST_PRICE
from erp_agent.planner.name_phrases import name_phrases, whole_first
from erp_agent.planner.steps import Call, Ctx, Step, enable, failed, rows_of, say

TOOL = "prices.lookup"
_BUYING = re.compile(r"\b(buy\w*|bought|purchas\w*|cost us|supplier\w*)\b")
_SELLING = re.compile(r"\b(sell\w*|sold|sales|customers?|charge)\b")
# Words of the question itself, never an item's name.
_OWN_WORDS = frozenset(["price", "prices", "list", "lists", "pricelist", "pricelists", "rate",
    "rates", "standard", "buying", "selling", "buy", "sell", "catalog", "catalogue", "item",
    "items", "product", "products", "unit", "per", "each", "shillings", "dollars", "kes", "usd",
    "ksh", "current", "currently", "now", "today", "please", "pls", "quick", "shilling",
    "dollar", "both", "all", "every", "comparison", "compare", "reference", "vs", "versus"])  # fmt: skip
# "Both lists", "all the price lists", "every list": whatever their currency.
_EVERY_LIST = re.compile(r"\b(both|all|every|each)\b(?:\s+\w+){0,3}\s+(lists?|pricelists?)\b")


def applies(ctx: Ctx) -> bool:
    return not ctx.req.doc_ids and bool(LIST_PRICE.search(ctx.req.text.lower()))


def handle(ctx: Ctx) -> Step | None:
    if not ctx.has(TOOL):
        return enable(ctx, TOOL)
    req = ctx.req
    names: list[tuple[str | None, str]] = [(None, code) for code in req.items]
    said = {v.lower() for _, v in req.names}
    loose = [p for p in name_phrases(req.text, _OWN_WORDS, parts=False) if p.lower() not in said]
    names += [(h, v) for h, v in req.names if h in (None, "item")]
    names += [(None, p) for p in loose]
    if not names:
        # "What's the standard buying price, for comparison?" after an item's figure: its item.
        names = [("item", v) for v in earlier_values(ctx, "item")]
    if not names:
        return None
    found, step = resolve(ctx, names, ["item"], loose)
    if step is not None:
        return step
    dropped = whole_first(found)
    items = list(
        dict.fromkeys(v for w, (d, v) in found.items() if d == "item" and w not in dropped)
    )
    if not items:
        return None
    req.settled += list(found)
    low = req.text.lower()
    side = "buying" if _BUYING.search(low) else "selling" if _SELLING.search(low) else "both"
    args: dict[str, Any] = {"item": items if len(items) > 1 else items[0], "side": side}
    r = ctx.result(TOOL, args)
    if r is None:
        return Step(calls=[Call(TOOL, args)])
    if not r.ok:
        return failed(r)
    # The currencies said in the newest message ("on the USD buying price list", "both the
    # shilling and dollar lists"); "both lists", "all the lists": every one.
    newest = req.text.split(" ; ")[-1]
    wanted = currencies_of(newest) or ([req.currency] if req.currency else [])
    if _EVERY_LIST.search(newest.lower()) and len(wanted) < 2:
        wanted = []
    currency = " or ".join(wanted)
    rows = [row for row in rows_of(r) if not wanted or row.get("currency") in wanted]
    if not rows:
        what = f"{side} " if side != "both" else ""
        return say(
            f"No records found: {', '.join(items)} has no {what}price"
            + (f" in {currency}" if currency else "")
            + " in a price list you can see."
        )
    lines = [
        f"- {row.get('item_name') or row.get('item')} ({row.get('item')}), {row.get('price_list')}: "
        f"{row.get('currency') or ''} {fmt(row.get('rate'))} per {row.get('per') or 'unit'}"
        for row in rows
    ]
    return say("Price list prices (Item Prices):\n" + "\n".join(lines))
