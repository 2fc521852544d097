"""``workflow.describe``: any entity's approval workflow, and what THIS user can do on one
document now — exactly as the ERP computed it (the model never guesses transitions)."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Catalog, Entity, MeasureFunc
from erp_agent.catalog.lifecycle import CANCELLED
from erp_agent.catalog.metrics import ME, resolve_today
from erp_agent.connectors.base import Transition
from erp_agent.connectors.query import Filter, Op
from erp_agent.errors import ErpRefusal
from erp_agent.tools.base import Args, Effect, Tool, ToolContext
from erp_agent.tools.factories.schemas import obj
from erp_agent.tools.modules import _fetch

MODULE = "workflow"

DESCRIPTION = (
    "Describe the approval workflow of an entity: its states, and each transition's action, "
    "the role allowed to take it, its condition and whether the creator may approve their own "
    "document. With an id, also that document's current state and the actions available to "
    "the signed-in user on it now, as the ERP computes them. Use before saying who can approve "
    "or what happens next."
)


PENDING_LIMIT = 50
PENDING_DESCRIPTION = (
    "What is waiting for the signed-in user's approval, with a count per document type: every "
    "document (of one entity, or of all with a workflow) where the ERP says this user can "
    "take a workflow action now, with the actions, and every document that names the user "
    "as its approver and still waits for a decision (leave applications, expense claims). "
    "Drafts (the workflow's first state) wait for their author and are not listed; documents "
    "the user created are left out where self-approval is not allowed. Use for 'what is "
    "waiting for my approval?', 'what do I need to approve?'."
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


async def _approver_documents(
    ctx: ToolContext, catalog: Catalog, args: Args, limit: int
) -> list[tuple[str, int, list[dict[str, Any]]]]:
    """Documents waiting for the user as their named approver (a leave application's leave
    approver, an expense claim's expense approver): the catalog's metrics that count what
    waits for ``me`` say which records those are. (entity, exact count, first records)."""
    out: list[tuple[str, int, list[dict[str, Any]]]] = []
    today = _fetch.today(ctx)
    for metric in catalog.metrics.values():
        mine = any(f.value == ME for f in metric.filters)
        if not mine or metric.measure.func is not MeasureFunc.COUNT:
            continue
        name = metric.entity
        if (args.get("entity") and args["entity"] != name) or (
            f"{name}.list" not in ctx.session.allowed_tools
        ):
            continue
        entity = catalog.entity(name)
        filters = [
            Filter(f.field, Op(f.op), resolve_today(f.value, today, ctx.session.user))
            for f in metric.filters
        ]
        fields = [f for f in ("employee_name", "status", "approval_status", entity.date_field,
                              entity.amount_field) if f and f in entity.fields]  # fmt: skip
        cred = ctx.session.credential
        try:
            total = await ctx.connector.count(cred, name, filters)
        except ErpRefusal:
            continue  # the user may not read these documents: none can wait for them
        if not total:
            continue
        page = await ctx.connector.list(cred, name, fields=fields, filters=filters, limit=limit)
        # No workflow here: the approver decides by approving or rejecting the document.
        records = [
            {**r, "entity": name, "actions": ["Approve", "Reject"],
             "waiting_for": "you as its named approver", "link": ctx.connector.link(name, r)}
            for r in page.records
        ]  # fmt: skip
        out.append((name, total, records))
    return out


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

    async def pending(ctx: ToolContext, args: Args) -> dict[str, Any]:
        """Documents where the signed-in user has a workflow action now, as the ERP says."""
        cred, limit = ctx.session.credential, int(args.get("limit") or PENDING_LIMIT)
        wanted = [str(args["entity"])] if args.get("entity") else sorted(catalog.entities)
        found: list[dict[str, Any]] = []
        skipped_own = 0
        for name in wanted:
            entity = catalog.entity(name)
            if "workflow_state" not in entity.fields:
                continue
            info = await ctx.connector.workflow(cred, name)
            if info is None:
                continue
            # Only states a transition leaves by a role this user holds can need them; the
            # workflow's first state is where a document is still being written (a draft
            # waits for its author, not for anyone's approval).
            initial = info.states[0].get("state") if info.states else None
            states = sorted(
                {
                    t.state
                    for t in info.transitions
                    if t.allowed_role in ctx.session.roles and t.state != initial
                }
            )
            if not states:
                continue
            page = await ctx.connector.list(
                cred, name,
                fields=[f for f in ("workflow_state", "created_by", entity.amount_field,
                                    "currency", "supplier_name", "customer_name", "employee_name",
                                    entity.date_field) if f and f in entity.fields],
                filters=[Filter("workflow_state", Op.IN, states), *_not_cancelled(entity)],
                order_by=[("modified", "asc")], limit=limit,
            )  # fmt: skip
            for record in page.records:
                doc = await ctx.connector.workflow(cred, name, str(record["id"]))
                actions = doc.available_actions if doc else []
                mine = record.get("created_by") == ctx.session.user
                open_ = [t for t in actions if t.allow_self_approval or not mine]
                if actions and not open_:
                    skipped_own += 1
                if open_:
                    found.append(
                        {**record, "entity": name, "actions": [t.action for t in open_],
                         "link": ctx.connector.link(name, record)}
                    )  # fmt: skip
        counts: dict[str, int] = {}
        for record in found:
            counts[record["entity"]] = counts.get(record["entity"], 0) + 1
        for name, total, records in await _approver_documents(ctx, catalog, args, limit):
            counts[name] = total
            found += records
        result: dict[str, Any] = {
            "documents": found,
            "count": sum(counts.values()),
            "by_entity": [
                {"entity": n, "label": catalog.entity(n).plural, "count": c}
                for n, c in counts.items()
            ],
        }
        if skipped_own:
            result["message"] = (
                f"{skipped_own} more wait for approval but you created them, and the workflow "
                "does not allow self-approval: someone else must approve those."
            )
        if not found:
            result.setdefault("message", "Nothing is waiting for an action of yours.")
        return result

    return [
        Tool(
            name="workflow.pending",
            description=PENDING_DESCRIPTION,
            parameters=obj(
                {
                    "entity": {"type": "string", "enum": sorted(catalog.entities)},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 200},
                }
            ),
            effect=Effect.READ,
            module=MODULE,
            run=pending,
            action="pending",
        ),
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
        ),
    ]


def _not_cancelled(entity: Entity) -> list[Filter]:
    """Documents still in play: the canonical lifecycle's "cancelled" left out, whatever code
    the connector maps it to."""
    life = entity.lifecycle
    if life is None or CANCELLED not in life.states:
        return []
    return [Filter(life.field, Op.NE, life.code(CANCELLED))]
