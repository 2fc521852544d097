"""Knowledge: how a process works, from the knowledge base's passages with their titles."""

from __future__ import annotations

from erp_agent.planner import _fill
from erp_agent.planner.steps import Ctx, Step, call, enable, failed, rows_of, say


def handle(ctx: Ctx) -> Step:
    if not ctx.has("knowledge.search"):
        step = enable(ctx, "knowledge.search")
        if step is not None:
            return step
        return say(
            "I can't search the process documentation in this session, so I won't describe the process from memory."
        )
    args = _fill.fill(ctx.tools["knowledge.search"], {"query": ctx.req.text})
    if args is None:
        return say("I can't search the process documentation in this session.")
    r = ctx.result("knowledge.search", args)
    if r is None:
        return call("knowledge.search", args)
    if not r.ok:
        return failed(r)
    hits = rows_of(r)
    if not hits:
        return say(
            "I found nothing about that in the knowledge base, so I can't answer it reliably."
        )
    lines = []
    for hit in hits[:3]:
        title = (
            hit.get("title") or hit.get("source") or hit.get("document") or "a knowledge article"
        )
        snippet = str(hit.get("text") or hit.get("content") or hit.get("snippet") or "").strip()
        lines.append(f"- {title}: {snippet[:400]}")
    return say("From the knowledge base:\n" + "\n".join(lines))
