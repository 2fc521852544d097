"""Frappe's workflow actions (``frappe/model/workflow.py``) over the Workflow doctypes:
``get_transitions`` and ``apply_workflow``, the whitelisted methods, and the demo's Purchase Order
approval workflow. Above the document lifecycle, which they drive; the rules the lifecycle applies
on every save are in ``workflow_rules``, below it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from demo_erp import documents, permissions, records
from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError, WorkflowStateError, WorkflowTransitionError
from demo_erp.workflow_rules import get_workflow, state_field, transitions_for

Doc = dict[str, Any]


def _transition_dict(row: Doc) -> Doc:
    keys = ("name", "owner", "creation", "modified", "modified_by", "docstatus", "idx", "parent",
            "parentfield", "parenttype", "state", "action", "next_state", "allowed",
            "allow_self_approval", "condition")  # fmt: skip
    out = {k: row.get(k) for k in keys}
    out["doctype"] = "Workflow Transition"
    return out


def _reload(ctx: Ctx, doc: Mapping[str, Any]) -> Doc | None:
    doctype, name = doc.get("doctype"), doc.get("name")
    if not doctype:
        raise ValidationError("doctype is required")
    if not name or str(name).startswith("new-") or not records.exists(ctx, str(doctype), str(name)):
        return None
    return records.load(ctx, str(doctype), str(name))


def get_transitions(ctx: Ctx, doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The transitions the user may take from the document's current state."""
    loaded = _reload(ctx, doc)
    if loaded is None:
        return []
    doctype = loaded["doctype"]
    permissions.check_doctype(ctx, doctype, "read")
    permissions.check_doc(ctx, doctype, "read", loaded)
    workflow = get_workflow(ctx, doctype)
    if workflow is None:
        return []
    return [_transition_dict(t) for t in transitions_for(ctx, workflow, loaded)]


def apply_workflow(ctx: Ctx, doc: Mapping[str, Any], action: str) -> dict[str, Any]:
    """Take ``action`` on the document; returns the full document afterwards."""
    loaded = _reload(ctx, doc)
    if loaded is None:
        raise WorkflowTransitionError("Not a valid Workflow Action")
    doctype, name = loaded["doctype"], loaded["name"]
    permissions.check_doctype(ctx, doctype, "read")
    permissions.check_doc(ctx, doctype, "read", loaded)
    workflow = get_workflow(ctx, doctype)
    transitions = transitions_for(ctx, workflow, loaded) if workflow else []
    transition = next((t for t in transitions if t.get("action") == action), None)
    if workflow is None or transition is None:
        raise WorkflowTransitionError("Not a valid Workflow Action")
    if not (
        ctx.is_admin or transition.get("allow_self_approval") or ctx.user != loaded.get("owner")
    ):
        # Frappe raises a plain ValidationError here (frappe.throw without an exception class).
        raise ValidationError("Self approval is not allowed")
    next_state = next(
        (s for s in workflow.get("states") or [] if s.get("state") == transition["next_state"]),
        None,
    )
    if next_state is None:
        raise WorkflowStateError(f"{transition['next_state']} is not a valid Workflow State")
    updates: Doc = {state_field(workflow): next_state["state"]}
    if next_state.get("update_field"):
        updates[str(next_state["update_field"])] = next_state.get("update_value")
    current, target = int(loaded["docstatus"]), int(next_state.get("doc_status") or 0)
    if (current, target) in ((0, 0), (1, 1)):
        documents.save(ctx, doctype, name, updates)
    elif (current, target) == (0, 1):
        documents.save(ctx, doctype, name, {**updates, "docstatus": 1})
    elif (current, target) == (1, 2):
        permissions.check_doctype(ctx, doctype, "cancel")
        permissions.check_doc(ctx, doctype, "cancel", loaded)
        records.db_set(ctx, doctype, name, updates)
        documents.cancel(ctx, doctype, name)
    else:
        raise WorkflowTransitionError(f"Illegal Document Status for {next_state['state']}")
    return documents.get(ctx, doctype, name)


# ---------------------------------------------------------------- the demo's workflow

PURCHASE_ORDER_WORKFLOW = "Purchase Order Approval"


def ensure_purchase_order_workflow(ctx: Ctx) -> str:
    """Create the demo's Purchase Order approval workflow (and its Workflow States) once."""
    for state, style in (
        ("Draft", ""),
        ("Pending Approval", "Warning"),
        ("Approved", "Success"),
        ("Rejected", "Danger"),
    ):
        if not records.exists(ctx, "Workflow State", state):
            documents.insert(
                ctx,
                "Workflow State",
                {"workflow_state_name": state, "style": style},
                ignore_permissions=True,
            )
    if not records.exists(ctx, "Workflow", PURCHASE_ORDER_WORKFLOW):
        documents.insert(
            ctx,
            "Workflow",
            {
                "workflow_name": PURCHASE_ORDER_WORKFLOW,
                "document_type": "Purchase Order",
                "is_active": 1,
                "workflow_state_field": "workflow_state",
                "states": [
                    {"state": "Draft", "doc_status": "0", "allow_edit": "Purchase User"},
                    {
                        "state": "Pending Approval",
                        "doc_status": "0",
                        "allow_edit": "Purchase Manager",
                    },
                    {"state": "Approved", "doc_status": "1", "allow_edit": "Purchase Manager"},
                    {"state": "Rejected", "doc_status": "0", "allow_edit": "Purchase Manager"},
                ],
                "transitions": [
                    {
                        "state": "Draft",
                        "action": "Submit for Approval",
                        "next_state": "Pending Approval",
                        "allowed": "Purchase User",
                        "allow_self_approval": 1,
                    },
                    {
                        "state": "Pending Approval",
                        "action": "Approve",
                        "next_state": "Approved",
                        "allowed": "Purchase Manager",
                        "allow_self_approval": 0,
                    },
                    {
                        "state": "Pending Approval",
                        "action": "Reject",
                        "next_state": "Rejected",
                        "allowed": "Purchase Manager",
                        "allow_self_approval": 1,
                    },
                ],
            },
            ignore_permissions=True,
        )
    return PURCHASE_ORDER_WORKFLOW
