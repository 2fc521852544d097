"""The workflow engine: transitions per role, self approval, invalid actions, direct changes."""

from __future__ import annotations

import pytest
from builders import World, make_world

from demo_erp import documents, records, workflow, workflow_rules
from demo_erp.context import Ctx
from demo_erp.exceptions import (
    PermissionError,
    ValidationError,
    WorkflowPermissionError,
    WorkflowStateError,
    WorkflowTransitionError,
)


@pytest.fixture
def world(empty_db) -> World:  # type: ignore[no-untyped-def]
    w = make_world(empty_db[1])
    assert workflow.ensure_purchase_order_workflow(w.ctx) == "Purchase Order Approval"
    assert workflow.ensure_purchase_order_workflow(w.ctx) == "Purchase Order Approval"
    return w


def _po(world: World, ctx: Ctx) -> dict:  # type: ignore[type-arg]
    return documents.insert(
        ctx,
        "Purchase Order",
        {
            "supplier": world.supplier,
            "company": world.company,
            "transaction_date": "2026-11-01",
            "items": [{"item_code": world.item, "qty": 2, "rate": 10}],
        },
    )


def _actions(ctx: Ctx, doc: dict) -> list[str]:  # type: ignore[type-arg]
    return [t["action"] for t in workflow.get_transitions(ctx, doc)]


def test_approval_flow(world: World) -> None:
    buyer = world.user("buyer@example.com", "Purchase User")
    manager = world.user("manager@example.com", "Purchase Manager")
    po = _po(world, buyer)
    assert po["workflow_state"] == "Draft"
    assert _actions(buyer, po) == ["Submit for Approval"]
    assert _actions(manager, po) == []
    assert workflow.get_transitions(buyer, {"doctype": "Purchase Order", "name": "new-1"}) == []

    pending = workflow.apply_workflow(buyer, po, "Submit for Approval")
    assert pending["workflow_state"] == "Pending Approval"
    assert pending["docstatus"] == 0
    assert _actions(buyer, po) == []
    transitions = workflow.get_transitions(manager, po)
    assert [t["action"] for t in transitions] == ["Approve", "Reject"]
    assert transitions[0]["next_state"] == "Approved"
    assert transitions[0]["doctype"] == "Workflow Transition"

    with pytest.raises(WorkflowTransitionError, match="Not a valid Workflow Action"):
        workflow.apply_workflow(buyer, po, "Approve")

    approved = workflow.apply_workflow(manager, po, "Approve")
    assert approved["workflow_state"] == "Approved"
    assert approved["docstatus"] == 1
    assert approved["status"] == "To Receive and Bill"
    assert _actions(manager, po) == []


def test_reject(world: World) -> None:
    buyer = world.user("buyer@example.com", "Purchase User")
    manager = world.user("manager@example.com", "Purchase Manager")
    po = _po(world, buyer)
    workflow.apply_workflow(buyer, po, "Submit for Approval")
    rejected = workflow.apply_workflow(manager, po, "Reject")
    assert (rejected["workflow_state"], rejected["docstatus"]) == ("Rejected", 0)


def test_self_approval_refused(world: World) -> None:
    both = world.user("both@example.com", "Purchase User", "Purchase Manager")
    po = _po(world, both)
    workflow.apply_workflow(both, po, "Submit for Approval")
    with pytest.raises(ValidationError) as err:
        workflow.apply_workflow(both, po, "Approve")
    assert err.value.message == "Self approval is not allowed"
    assert err.value.exc_type == "ValidationError"  # as in Frappe: a plain frappe.throw
    # Administrator may approve anything.
    assert workflow.apply_workflow(world.ctx, po, "Approve")["workflow_state"] == "Approved"


def test_direct_state_change_refused(world: World) -> None:
    buyer = world.user("buyer@example.com", "Purchase User")
    po = _po(world, buyer)
    with pytest.raises(WorkflowPermissionError) as err:
        documents.save(buyer, "Purchase Order", po["name"], {"workflow_state": "Approved"})
    assert err.value.message == (
        "Workflow State transition not allowed from <strong>Draft</strong> to "
        "<strong>Approved</strong>"
    )
    assert err.value.exc_type == "WorkflowPermissionError"
    # A change that follows an allowed transition is accepted, as in Frappe.
    saved = documents.save(
        buyer, "Purchase Order", po["name"], {"workflow_state": "Pending Approval"}
    )
    assert saved["workflow_state"] == "Pending Approval"
    with pytest.raises(WorkflowPermissionError):
        _po_with_state(world, buyer, "Approved")


def _po_with_state(world: World, ctx: Ctx, state: str) -> None:
    documents.insert(
        ctx,
        "Purchase Order",
        {
            "supplier": world.supplier,
            "company": world.company,
            "transaction_date": "2026-11-01",
            "workflow_state": state,
            "items": [{"item_code": world.item, "qty": 1, "rate": 10}],
        },
    )


def test_state_not_set(world: World) -> None:
    po = _po(world, world.ctx)
    world.ctx.conn.execute(
        'update "tabPurchase Order" set workflow_state = null where name = ?', (po["name"],)
    )
    with pytest.raises(WorkflowStateError, match="Workflow State not set"):
        workflow.get_transitions(world.ctx, po)


def test_direct_submit_moves_to_submitted_state(world: World) -> None:
    po = _po(world, world.ctx)
    done = documents.submit(world.ctx, "Purchase Order", po["name"])
    assert done["workflow_state"] == "Approved"


def test_conditions(world: World) -> None:
    wf = records.load(world.ctx, "Workflow", "Purchase Order Approval")
    transitions = wf["transitions"]
    transitions[1]["condition"] = "doc.grand_total > 1000 and doc.supplier in ['Parts Ltd']"
    documents.save(
        world.ctx, "Workflow", wf["name"], {"transitions": transitions}, ignore_permissions=True
    )
    manager = world.user("manager@example.com", "Purchase Manager")
    po = _po(world, world.ctx)  # grand total 22
    workflow.apply_workflow(world.ctx, po, "Submit for Approval")
    assert _actions(manager, po) == ["Reject"]

    assert workflow_rules.evaluate_condition("", {}) is True
    assert workflow_rules.evaluate_condition("doc.status == 'Draft'", {"status": "Draft"}) is True
    assert workflow_rules.evaluate_condition("not doc.x or doc['y'] >= 2", {"x": 1, "y": 3}) is True
    assert workflow_rules.evaluate_condition("doc.amount > 5", {"amount": None}) is False
    for unsafe in ("__import__('os').system('true')", "doc.__class__", "open('x')"):
        with pytest.raises(ValidationError):
            workflow_rules.evaluate_condition(unsafe, {})


def test_transitions_need_read_permission(world: World) -> None:
    po = _po(world, world.ctx)
    outsider = world.user("hr@example.com", "HR User")
    with pytest.raises(PermissionError):
        workflow.get_transitions(outsider, po)
