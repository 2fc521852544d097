"""Workflow tools for entities under an approval workflow (those with a ``workflow_state``).

``<entity>.workflow`` shows the states, the transitions and — for one document — the actions
THIS user can take now, as the ERP computed them. ``<entity>.workflow_action`` proposes one of
those actions; the model never guesses which actions exist.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from erp_agent.catalog import Catalog, Entity
from erp_agent.connectors.base import WorkflowInfo
from erp_agent.errors import ToolInputError
from erp_agent.tools.base import (
    BASE_MODIFIED,
    Args,
    Change,
    Effect,
    ExecuteHandler,
    PrepareHandler,
    ReadHandler,
    Requirement,
    Tool,
    ToolContext,
)
from erp_agent.tools.factories import _records
from erp_agent.tools.factories.schemas import id_schema, obj

STATE_FIELD = "workflow_state"


def has_workflow(entity: Entity) -> bool:
    return STATE_FIELD in entity.fields


def _no_workflow(entity: Entity) -> str:
    return f"No approval workflow is active for {entity.plural}."


def _describe_tool(entity: Entity) -> Tool:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        record_id = args.get("id")
        info = await ctx.connector.workflow(
            ctx.session.credential, entity.name, str(record_id) if record_id else None
        )
        if info is None:
            return {"workflow": None, "message": _no_workflow(entity)}
        return asdict(info)

    handler: ReadHandler = run
    return Tool(
        name=f"{entity.name}.workflow",
        description=(
            f"The approval workflow of {entity.plural}: its states and transitions (who may "
            "move a document from which state by which action). With an id, also the "
            "document's current state and the actions available to the signed-in user on it "
            "now. Use before proposing an approval, rejection or other workflow action."
        ),
        parameters=obj({"id": id_schema(entity)}),
        effect=Effect.READ,
        module=entity.modules[0],
        run=handler,
        requires=(Requirement(entity=entity.name, right="read"),),
        entity=entity.name,
        action="workflow",
    )


def _available(info: WorkflowInfo) -> str:
    actions = [t.action for t in info.available_actions]
    return ", ".join(actions) if actions else "none"


def _next_step(info: WorkflowInfo, state: str) -> str:
    """Who acts next once the document reaches ``state``, from the workflow's own transitions."""
    onward = [t for t in info.transitions if t.state == state]
    if not onward:
        return f"no further approval step after {state}"
    by_role: dict[str, list[str]] = {}
    for t in onward:
        by_role.setdefault(t.allowed_role, []).append(t.action)
    return "next: " + "; ".join(
        f"{role} may {' or '.join(actions)}" for role, actions in by_role.items()
    )


def _action_handlers(entity: Entity) -> tuple[PrepareHandler, ExecuteHandler]:
    async def prepare(ctx: ToolContext, args: Args) -> Change:
        record_id, action = str(args["id"]), str(args["action"])
        cred = ctx.session.credential
        info = await ctx.connector.workflow(cred, entity.name, record_id)
        if info is None:
            raise ToolInputError(_no_workflow(entity))
        chosen = next((t for t in info.available_actions if t.action == action), None)
        if chosen is None:
            raise ToolInputError(
                f"{action!r} is not available to you on {entity.label} {record_id} in state "
                f"{info.current_state!r}. Available actions: {_available(info)}."
            )
        current = await ctx.connector.get(cred, entity.name, record_id)
        figures = _records.key_figures(entity, current)
        base = None if current.get("modified") is None else str(current["modified"])
        return Change(
            payload={"id": record_id, "action": action, BASE_MODIFIED: base},
            base_modified=base,
            summary=(
                f"{action} {entity.label} {figures}: {chosen.state} → {chosen.next_state} "
                f"({_next_step(info, chosen.next_state)})"
            ),
            diff=[
                {
                    "field": info.state_field,
                    "label": "Workflow State",
                    "before": info.current_state,
                    "after": chosen.next_state,
                }
            ],
        )

    async def execute(ctx: ToolContext, payload: Args) -> dict[str, Any]:
        return await ctx.connector.apply_workflow_action(
            ctx.session.credential,
            entity.name,
            str(payload["id"]),
            str(payload["action"]),
            modified=payload.get(BASE_MODIFIED),
        )

    return prepare, execute


def _action_tool(entity: Entity) -> Tool:
    prepare, execute = _action_handlers(entity)
    return Tool(
        name=f"{entity.name}.workflow_action",
        description=(
            f"Prepare a workflow action (e.g. Approve, Reject) on a {entity.label}, for the user "
            f"to confirm. Only actions {entity.name}.workflow lists as available for this "
            "document and user are accepted."
        ),
        parameters=obj(
            {
                "id": id_schema(entity),
                "action": {
                    "type": "string",
                    "minLength": 1,
                    "description": f"An action listed as available by {entity.name}.workflow.",
                },
            },
            ["id", "action"],
        ),
        effect=Effect.WRITE,
        module=entity.modules[0],
        prepare=prepare,
        execute=execute,
        prompt_rules=f"Call {entity.name}.workflow with the id first to see the actions "
        "available now.",
        # A workflow action edits the document; the ERP checks the transition's role itself.
        requires=(Requirement(entity=entity.name, right="update"),),
        entity=entity.name,
        action="workflow_action",
    )


def workflow_tools(catalog: Catalog) -> list[Tool]:
    """``<entity>.workflow`` and ``<entity>.workflow_action`` for each workflow entity."""
    tools: list[Tool] = []
    for entity in catalog.entities.values():
        if has_workflow(entity):
            tools += [_describe_tool(entity), _action_tool(entity)]
    return tools
