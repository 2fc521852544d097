"""The rules of Frappe's workflow engine (``frappe/model/workflow.py``): a doctype's active
Workflow, the transitions a user may take from a document's state, and ``validate_workflow``,
which the document lifecycle (``documents``) runs whenever a document of a doctype with an active
workflow is saved, submitted or cancelled, so a direct change of the state field is refused
unless it follows a transition the user may take. Below the lifecycle; the actions that change a
document (``apply_workflow``) are in ``workflow``, above it.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any

from demo_erp.context import Ctx
from demo_erp.controllers.common import cache
from demo_erp.exceptions import ValidationError, WorkflowPermissionError, WorkflowStateError
from demo_erp.records import Doc, load

_NO_WORKFLOW: Doc = {}


def get_workflow(ctx: Ctx, doctype: str) -> Doc | None:
    """The active Workflow (with states and transitions) for ``doctype``, cached per context."""
    workflows: dict[str, Doc] = cache(ctx).setdefault("workflows", {})
    if doctype not in workflows:
        row = ctx.conn.execute(
            'select name from "tabWorkflow" where document_type = ? and is_active = 1 '
            "order by modified desc limit 1",
            (doctype,),
        ).fetchone()
        workflows[doctype] = load(ctx, "Workflow", row["name"]) if row else _NO_WORKFLOW
    found = workflows[doctype]
    return found or None


def state_field(workflow: Doc) -> str:
    return str(workflow.get("workflow_state_field") or "workflow_state")


# ---------------------------------------------------------------- conditions

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}


class _Evaluator:
    """A tiny safe subset of Python for transition conditions: ``doc.field``, literals,
    arithmetic, comparisons and boolean logic. Anything else is refused."""

    def __init__(self, doc: Mapping[str, Any], user: str) -> None:
        self.doc = doc
        self.user = user

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return self.eval(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.Name):
            if node.id == "doc":
                return self.doc
            raise ValidationError(f"Name {node.id} is not allowed in a workflow condition")
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                raise ValidationError("Private attributes are not allowed in a workflow condition")
            if isinstance(node.value, ast.Name) and node.value.id == "doc":
                return self.doc.get(node.attr)
            # frappe.session.user is the one attribute chain conditions commonly use.
            if ast.unparse(node) == "frappe.session.user":
                return self.user
            raise ValidationError("Only doc.<field> may be read in a workflow condition")
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id == "doc":
                return self.doc.get(self.eval(node.slice))
            raise ValidationError("Only doc[<field>] may be indexed in a workflow condition")
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                result: Any = True
                for value in node.values:
                    result = self.eval(value)
                    if not result:
                        return result
                return result
            result = False
            for value in node.values:
                result = self.eval(value)
                if result:
                    return result
            return result
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return +operand
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.Compare):
            left = self.eval(node.left)
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                right = self.eval(comparator)
                if type(op) not in _CMPOPS or not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)
        raise ValidationError(f"Unsupported expression in workflow condition: {ast.unparse(node)}")


def evaluate_condition(condition: str | None, doc: Mapping[str, Any], user: str = "") -> bool:
    """True when ``condition`` (Frappe's safe_eval expression over ``doc``) holds."""
    if not condition or not condition.strip():
        return True
    try:
        tree = ast.parse(condition.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValidationError(f"Invalid workflow condition: {condition}") from exc
    try:
        return bool(_Evaluator(doc, user).eval(tree))
    except TypeError:
        return False  # e.g. comparing None with a number: the condition does not hold


# ---------------------------------------------------------------- transitions


def has_role(ctx: Ctx, role: str | None) -> bool:
    # Administrator holds every role in Frappe.
    return ctx.is_admin or (role or "") in ctx.roles


def transitions_for(ctx: Ctx, workflow: Doc, doc: Doc) -> list[Doc]:
    state = doc.get(state_field(workflow))
    if not state:
        raise WorkflowStateError("Workflow State not set")
    return [
        t
        for t in workflow.get("transitions") or []
        if t.get("state") == state
        and has_role(ctx, t.get("allowed"))
        and evaluate_condition(t.get("condition"), doc, ctx.user)
    ]


def validate_workflow(ctx: Ctx, doc: Doc, before: Doc | None, action: str = "save") -> None:
    """Frappe's ``validate_workflow`` + ``set_workflow_state_on_action``.

    ``before`` is the stored document (None on insert); ``action`` is save, submit, cancel or
    update_after_submit.
    """
    workflow = get_workflow(ctx, doc["doctype"]) if doc.get("doctype") else None
    if workflow is None:
        return
    field = state_field(workflow)
    states = workflow.get("states") or []
    if not states:
        return
    first = states[0]["state"]
    next_state = doc.get(field)
    if not next_state:
        next_state = first
        doc[field] = first
    current = (before or {}).get(field) or first
    if not any(s.get("state") == current for s in states):
        raise ValidationError(
            f"<strong>{current}</strong> is not a valid Workflow State. Please update your "
            "Workflow and try again."
        )
    if current != next_state:
        allowed = before is not None and any(
            t.get("next_state") == next_state for t in transitions_for(ctx, workflow, before)
        )
        if not allowed:
            raise WorkflowPermissionError(
                f"Workflow State transition not allowed from <strong>{current}</strong> to "
                f"<strong>{next_state}</strong>"
            )
    if action == "save":
        return
    docstatus = {"submit": "1", "update_after_submit": "1", "cancel": "2"}[action]
    if any(
        s.get("state") == doc.get(field) and str(s.get("doc_status")) == docstatus for s in states
    ):
        return
    for state in states:
        if str(state.get("doc_status")) == docstatus:
            doc[field] = state["state"]
            return
