"""Find: records by an id no pattern claimed or by a description (hybrid search), exact ids
first."""

from __future__ import annotations

from typing import Any

from erp_agent.planner import _fill
from erp_agent.planner.answer import capabilities, join
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import Ctx, Step, call, failed, hand_over, rows_of, say


def handle(ctx: Ctx) -> Step:
    query = " ".join(ctx.req.loose_ids) or ctx.req.text
    e = ctx.req.entity
    if e is not None and ctx.req.amount is not None and ctx.has(f"{e.name}.list"):
        # "The sales invoice for 5407.42 dollars to Hudson Retail": the records' own fields
        # say it exactly (amount, party); a search by words would only come close.
        ctx.req.kind = Kind.LIST
        return hand_over("list")
    if not ctx.has("records.search"):
        if ctx.req.entity is not None and ctx.req.kind == Kind.FIND:
            ctx.req.kind = Kind.LIST
            return hand_over("list")
        return say(
            f"I can't search records in this session. {capabilities(ctx.req.entity, ctx.tools)}"
        )
    slots: dict[str, Any] = {"query": query}
    if ctx.req.entity is not None:
        slots["entity"] = ctx.req.entity.name
    args = _fill.fill(ctx.tools["records.search"], slots) or _fill.fill(
        ctx.tools["records.search"], {"query": query}
    )
    if args is None:
        return say("I can't search records in this session.")
    r = ctx.result("records.search", args)
    if r is None:
        return call("records.search", args)
    if not r.ok:
        return failed(r)
    hits = rows_of(r)
    if ctx.req.loose_ids:
        exact = [h for h in hits if str(h.get("id") or h.get("name") or "") in ctx.req.loose_ids]
        if not exact:
            return say(f"No records found for {join(ctx.req.loose_ids)} that you can see.")
        hits = exact
    if not hits:
        return say("No records found that match that description and that you can see.")
    lines = []
    for hit in hits[:5]:
        hid = hit.get("id") or hit.get("name")
        text = str(
            hit.get("text") or hit.get("fact_card") or hit.get("snippet") or hit.get("title") or ""
        )
        lines.append(f"- {hid}: {text[:300]}" if text else f"- {hid}")
    return say("Best matches:\n" + "\n".join(lines))
