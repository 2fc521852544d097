"""``workflow.describe``: any entity's approval workflow, and what THIS user can do on one
document now — exactly as the ERP computed it (the model never guesses transitions)."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.connectors.base import Transition
from erp_agent.tools.base import Args, Effect, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj

MODULE = "workflow"

DESCRIPTION = (
    "Describe the approval workflow of an entity: its states, and each transition's action, "
    "the role allowed to take it, its condition and whether the creator may approve their own "
    "document. With an id, also that document's current state and the actions available to "
    "the signed-in user on it now, as the ERP computes them. Use before saying who can approve "
    "or what happens next."
)


def _transition(t: Transition) -> dict[str, Any]:
    return {
        "from": t.state,
        "action": t.action,
        "to": t.next_state,
        "allowed_role": t.allowed_role,
        "condition": t.condition,
        "self_approval_allowed": t.allow_self_approval,
    }


def tools(catalog: Catalog) -> list[Tool]:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        entity = str(args["entity"])
        record_id = args.get("id")
        info = await ctx.connector.workflow(
            ctx.session.credential, entity, str(record_id) if record_id else None
        )
        label = catalog.entity(entity).plural
        if info is None:
            return {"workflow": None, "message": f"No approval workflow is active for {label}."}
        result: dict[str, Any] = {
            "workflow": info.name,
            "entity": entity,
            "state_field": info.state_field,
            "states": info.states,
            "transitions": [_transition(t) for t in info.transitions],
        }
        if record_id:
            result["document"] = info.document or str(record_id)
            result["current_state"] = info.current_state
            result["available_actions"] = [_transition(t) for t in info.available_actions]
            if not info.available_actions:
                result["message"] = (
                    f"No action is available to you on this document in state "
                    f"{info.current_state!r}."
                )
        return result

    return [
        Tool(
            name="workflow.describe",
            description=DESCRIPTION,
            parameters=obj(
                {
                    "entity": {"type": "string", "enum": sorted(catalog.entities)},
                    "id": {"type": "string", "minLength": 1, "description": "A document id."},
                },
                ["entity"],
            ),
            effect=Effect.READ,
            module=MODULE,
            run=run,
            action="describe",
        )
    ]
