"""Questions that come back: "send me this every Monday at 8", "tell me when stock of X falls
below 50" become a subscription proposal (the question's reading — the tool call that answers
it — with a schedule or a condition), confirmed by the user like any write; "what am I
subscribed to?", "stop the Monday digest" manage them. The wording is read by
``erp_agent.subscriptions.phrases``; the question inside is read like any other."""

from __future__ import annotations

from typing import Any

from erp_agent.planner.intents import understand
from erp_agent.planner.read_as import PREFIX
from erp_agent.planner.steps import Call, Ctx, Step, call, enable, failed, say
from erp_agent.subscriptions import phrases

# The calls that answer a question (what a subscription re-runs), not look-ups of names.
_ANSWERING = ("metrics.query", "report.")
_BACK = ("this", "that", "it", "these", "those", "the same", "this figure", "that figure")


def applies(ctx: Ctx) -> bool:
    text = ctx.req.text.split(" ; ")[-1]
    return phrases.read_management(text) is not None or (
        phrases.read_standing_request(text) is not None
    )


def handle(ctx: Ctx) -> Step | None:
    text = ctx.req.text.split(" ; ")[-1]
    managed = phrases.read_management(text)
    if managed is not None:
        return _manage(ctx, managed)
    standing = phrases.read_standing_request(text)
    if standing is None:
        return None
    tool = "subscriptions.create"
    if not ctx.has(tool):
        return enable(ctx, tool) or say("I can't set up digests or alerts in this session.")
    done = ctx.result(tool)
    if done is not None:
        if done.status == "proposal":
            return say(
                f"I've prepared this for you to confirm: "
                f"{(done.message or 'a new subscription').rstrip('.')}. "
                "Nothing is set up until you confirm it."
            )
        return failed(done)
    found = _answering_calls(ctx, standing.question)
    if isinstance(found, Step):
        return found
    args = phrases.create_arguments(
        standing, found, question=standing.question or text, title=text[:80]
    )
    return call(tool, args)


def _answering_calls(ctx: Ctx, question: str) -> list[Any] | Step:
    """The call(s) that answer the question inside the request, or the step still needed to
    find them (a name's look-up)."""
    if question.strip().lower() in _BACK or not question.strip():
        last = ctx.view.state.get("last_query")
        if isinstance(last, dict) and last.get("tool"):
            return [{"tool": str(last["tool"]), "args": dict(last.get("args") or {})}]
        return say("There is no figure earlier in this conversation to send again; ask it first.")
    assert ctx.dispatch is not None
    inner = Ctx(
        understand(ctx.catalog, ctx.connector, question, ctx.view.today),
        ctx.view,
        ctx.tools,
        ctx.catalog,
        ctx.connector,
    )
    step = ctx.dispatch(inner)
    answering = [c for c in step.calls if c.name.startswith(_ANSWERING)]
    if answering:
        return [{"tool": c.name, "args": c.args} for c in answering]
    if step.calls:
        return step  # look-ups first
    answered = [r for r in ctx.view.results if r.ok and r.name.startswith(_ANSWERING)]
    if answered:
        return [{"tool": r.name, "args": r.args} for r in answered[-1:]]
    text = step.text or ""
    return say(text.removeprefix(PREFIX) or "I couldn't read which figure to send.")


def _manage(ctx: Ctx, managed: Any) -> Step:
    tool = f"subscriptions.{managed.action}"
    if not ctx.has(tool):
        return enable(ctx, tool) or say("I can't manage digests or alerts in this session.")
    args: dict[str, Any] = (
        {} if managed.action == "list" else {"subscription": managed.subscription}
    )
    done = ctx.result(tool, args)
    if done is None:
        return Step(calls=[Call(tool, args)])
    if not done.ok and done.status != "proposal":
        return failed(done)
    if managed.action == "list":
        rows = done.data.get("subscriptions") if isinstance(done.data, dict) else None
        if not rows:
            return say("You have no digests or alerts.")
        lines = [
            f"- {r.get('title')}: {r.get('when') or r.get('schedule') or ''}"
            f"{' (paused)' if r.get('paused') else ''}".rstrip()
            for r in rows
            if isinstance(r, dict)
        ]
        return say("Your digests and alerts:\n" + "\n".join(lines))
    return say(done.message or f"Done: {managed.action}d.")
