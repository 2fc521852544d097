"""subscriptions.list / create / pause / resume / delete: any model (or the offline planner)
manages a user's subscriptions by asking. Create is a write: the gateway turns it into a
proposal the user confirms. Pausing, resuming and deleting change nothing in the ERP and take
effect at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from erp_agent.errors import ToolInputError
from erp_agent.subscriptions.figures import OPS
from erp_agent.subscriptions.models import DELIVERY_CHANNELS, Status
from erp_agent.subscriptions.service import MAX_CALLS, SubscriptionService
from erp_agent.tools.base import Args, Change, Effect, Shape, Tool, ToolContext

MODULE = "subscriptions"
Provider = Callable[[], SubscriptionService | None]

_WHICH = {
    "type": "object",
    "properties": {
        "subscription": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "Its id, or the words the user named it with (e.g. 'the Monday "
            "digest', 'stock alert').",
        }
    },
    "required": ["subscription"],
    "additionalProperties": False,
}
_CREATE = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 120,
                  "description": "A short name the user will recognise, e.g. 'Weekly revenue by branch'."},
        "question": {"type": "string", "minLength": 1, "maxLength": 600,
                     "description": "The question as the user asked it (shown with each delivery, with a link to ask it again)."},
        "calls": {
            "type": "array", "minItems": 1, "maxItems": MAX_CALLS,
            "description": "The read tool call(s) that answer the question, with the exact "
            "arguments used (e.g. the metrics.query arguments of the figure just shown); "
            "they are run again at every delivery, as the user.",
            "items": {
                "type": "object",
                "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
                "required": ["tool", "args"],
            },
        },
        "schedule": {"type": "string", "maxLength": 100,
                     "description": "When to run: cron in the user's time zone ('0 8 * * 1' = Mondays "
                     "08:00) or words ('every Monday at 8'). An alert without one is checked every "
                     "15 minutes."},
        "condition": {
            "type": "object",
            "description": "Makes it an alert: delivered when the figure (on: value) or the number "
            "of rows listed (on: rows) passes the comparison; not again until it has stopped "
            "passing.",
            "properties": {
                "on": {"type": "string", "enum": ["value", "rows"]},
                "op": {"type": "string", "enum": list(OPS)},
                "value": {"type": "number"},
            },
            "required": ["op", "value"],
            "additionalProperties": False,
        },
        "channels": {"type": "array", "uniqueItems": True, "minItems": 1,
                     "items": {"type": "string", "enum": list(DELIVERY_CHANNELS)},
                     "description": "Where to deliver: inbox (the web app), email, erp (a ToDo in "
                     "the ERP). Default: inbox, and email when the server can send it."},
        "timezone": {"type": "string", "description": "IANA time zone; default the user's."},
        "conversation_id": {"type": "string"},
        "refs": {"type": "array", "items": {"type": "object"}},
    },
    "required": ["title", "question", "calls"],
    "additionalProperties": False,
}  # fmt: skip


def _service(provider: Provider) -> SubscriptionService:
    found = provider()
    if found is None:
        raise ToolInputError(
            "subscriptions are not available on this server (they need the agent's SQL store)"
        )
    return found


def tools(provider: Provider) -> list[Tool]:
    async def listing(ctx: ToolContext, args: Args) -> dict[str, Any]:
        return await _service(provider).listing(ctx.session.user)

    async def prepare(ctx: ToolContext, args: Args) -> Change:
        return await _service(provider).prepare(ctx.session, args)

    async def execute(ctx: ToolContext, payload: Args) -> dict[str, Any]:
        return await _service(provider).create(ctx.session, payload)

    async def pause(ctx: ToolContext, args: Args) -> dict[str, Any]:
        return await _service(provider).set_status(
            ctx.session.user, str(args["subscription"]), Status.PAUSED
        )

    async def resume(ctx: ToolContext, args: Args) -> dict[str, Any]:
        return await _service(provider).set_status(
            ctx.session.user, str(args["subscription"]), Status.ACTIVE
        )

    async def delete(ctx: ToolContext, args: Args) -> dict[str, Any]:
        return await _service(provider).delete(ctx.session.user, str(args["subscription"]))

    none = {"type": "object", "properties": {}, "additionalProperties": False}
    return [
        Tool(
            name="subscriptions.list",
            description="The user's subscriptions (digests on a schedule, alerts on a "
            "condition): what each reads, when it runs, where it goes, whether it is paused "
            "and why, and its last result. For 'what am I subscribed to?'.",
            parameters=none, effect=Effect.READ, module=MODULE, run=listing, shape=Shape.WHOLE,
        ),
        Tool(
            name="subscriptions.create",
            description="Subscribe the user to a question that comes back: a digest on a "
            "schedule ('send me this every Monday at 8') or an alert on a condition ('tell me "
            "when stock of X falls below 50'). The user confirms it first.",
            parameters=_CREATE, effect=Effect.WRITE, module=MODULE, prepare=prepare,
            execute=execute, shape=Shape.WHOLE,
            prompt_rules="Put the read call(s) that answered the question in calls, with their "
            "exact arguments (never a figure); for 'send me this …' use the call behind the "
            "figure just shown.",
        ),
        Tool(
            name="subscriptions.pause",
            description="Pause one of the user's subscriptions ('stop the Monday digest'); it "
            "can be resumed.",
            parameters=_WHICH, effect=Effect.READ, module=MODULE, run=pause, shape=Shape.WHOLE,
        ),
        Tool(
            name="subscriptions.resume",
            description="Resume a paused subscription of the user.",
            parameters=_WHICH, effect=Effect.READ, module=MODULE, run=resume, shape=Shape.WHOLE,
        ),
        Tool(
            name="subscriptions.delete",
            description="Delete one of the user's subscriptions for good.",
            parameters=_WHICH, effect=Effect.READ, module=MODULE, run=delete, shape=Shape.WHOLE,
        ),
    ]  # fmt: skip
