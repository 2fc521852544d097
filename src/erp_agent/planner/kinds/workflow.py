"""Workflow: a document's approval state and the actions open to this user now, or what is
waiting for their approval (the ERP's own answer, document by document)."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner import _fill, questions
from erp_agent.planner.answer import fmt, is_number, join
from erp_agent.planner.steps import Ctx, Step, call, earlier_id, enable, failed, say


def _workflow_describe(
    ctx: Ctx, e: Entity, doc_id: str | None
) -> tuple[Step | None, dict[str, Any] | None]:
    tool = f"{e.name}.workflow"
    args: dict[str, Any] | None = {"id": doc_id} if doc_id else {}
    if not ctx.has(tool):
        tool = "workflow.describe"
        args = (
            _fill.fill(ctx.tools[tool], {"entity": e.name, "id": doc_id}) if ctx.has(tool) else None
        )
        if args is None:
            return say(
                f"No approval workflow information about {e.plural.lower()} is available to you."
            ), None
    if args is None:
        return say("No approval workflow information is available to you."), None
    r = ctx.result(tool, args)
    if r is None:
        return call(tool, args), None
    if not r.ok:
        return failed(r), None
    return None, (r.data if isinstance(r.data, dict) else {})


def pending(ctx: Ctx) -> Step:
    """'What is waiting for my approval?': the ERP's answer, document by document."""
    e = ctx.req.entity
    args: dict[str, Any] = {"entity": e.name} if e is not None else {}
    r = ctx.result("workflow.pending", args)
    if r is None:
        return call("workflow.pending", args)
    if not r.ok:
        return failed(r)
    data = r.data if isinstance(r.data, dict) else {}
    docs = [d for d in data.get("documents") or [] if isinstance(d, dict)]
    note = f" {data['message']}" if data.get("message") and docs else ""
    if not docs:
        return say(str(data.get("message") or "Nothing is waiting for an action of yours."))
    if questions.says("sum_of_them", ctx.req.text.split(" ; ")[-1]):
        worth = _worth(ctx, docs)
        if worth is not None:
            return worth
    lines = []
    for d in docs:
        label = ctx.catalog.entity(str(d["entity"])).label
        who = d.get("supplier_name") or d.get("customer_name") or d.get("employee_name")
        amount = d.get("total")
        figure = f", {d.get('currency') or ''} {fmt(amount)}".rstrip() if is_number(amount) else ""
        actions = join([str(a) for a in d.get("actions") or []], "or")
        lines.append(f"- {label} {d['id']}" + (f" ({who}{figure})" if who else figure)
                     + f": {_state(d)}; you can {actions}")  # fmt: skip
    head = f"{len(docs)} {'documents wait' if len(docs) != 1 else 'document waits'} for an action of yours:"
    return say(head + "\n" + "\n".join(lines) + note)


def _worth(ctx: Ctx, docs: list[dict[str, Any]]) -> Step | None:
    """'How much are they worth?' after the queue: what the ERP adds up over those documents
    (drafts included: they wait for approval), per currency; None when they are of several
    kinds or their kind has no amount."""
    kinds = {str(d.get("entity")) for d in docs}
    e = ctx.catalog.entities.get(kinds.pop()) if len(kinds) == 1 else None
    if e is None or not e.amount_field:
        return None
    tool = f"{e.name}.aggregate"
    if not ctx.has(tool):
        return enable(ctx, tool)
    ids = [str(d["id"]) for d in docs if d.get("id")]
    args: dict[str, Any] = {
        "measures": [{"func": "sum", "field": e.amount_field}, {"func": "count"}],
        "group_by": [{"field": "currency"}] if "currency" in e.fields else [],
        "filters": [{"field": "id", "op": "in", "value": ids}],
        "documents": "all",
    }
    r = ctx.result(tool, args)
    if r is None:
        return call(tool, args)
    if not r.ok:
        return failed(r)
    rows = r.data.get("rows") if isinstance(r.data, dict) else None
    lines = [
        f"- {row.get('currency') or ''} {fmt(row.get(f'sum_{e.amount_field}'))} over "
        f"{fmt(row.get('count_records'))} {e.plural.lower()}".replace("  ", " ")
        for row in rows or [] if isinstance(row, dict)
    ]  # fmt: skip
    if not lines:
        return None
    label = e.fields[e.amount_field].label.lower()
    return say(f"The {len(ids)} {e.plural.lower()} waiting for you are worth ({label}):\n"
               + "\n".join(lines))  # fmt: skip


def _state(doc: dict[str, Any]) -> str:
    """Where a waiting document stands: its workflow state, else (a leave application or an
    expense claim, approved by the approver it names) its own status."""
    return str(doc.get("workflow_state") or doc.get("approval_status") or doc.get("status") or "")


# Who approves a kind of document, asked of none in particular ("once I send a PO for approval
# who has to approve it?"): the workflow's own transitions and the roles allowed each.
_WHO_APPROVES = re.compile(
    r"\bwho (?:can|must|should|has to|needs to|will|would|gets to|is allowed to) (?:approve|sign)\b"
    r"|\bapproval (?:process|workflow|chain|steps|flow)\b"
)


def _whole_workflow(ctx: Ctx, e: Entity) -> Step:
    step, info = _workflow_describe(ctx, e, None)
    if step is not None or info is None:
        return step or say("")
    moves = [t for t in info.get("transitions") or [] if isinstance(t, dict)]
    if not moves:
        return say(
            str(info.get("message") or f"No approval workflow applies to {e.plural.lower()}.")
        )
    lines = [f"- {t.get('state')}: {t.get('action')} by {t.get('allowed_role')} → {t.get('next_state')}"
             for t in moves]  # fmt: skip
    return say(f"The {e.label} approval workflow (each action, and the role allowed it):\n"
               + "\n".join(lines))  # fmt: skip


def handle(ctx: Ctx) -> Step:
    req = ctx.req
    newest = req.text.split(" ; ")[-1]
    if (not req.doc_ids and questions.says("my_queue", req.text)
            and questions.says("sum_of_them", newest) and ctx.has("workflow.pending")):  # fmt: skip
        return pending(ctx)  # "how much are they worth?" of the queue just shown
    found = req.doc_ids[0] if req.doc_ids else earlier_id(ctx, req.entity)
    if found is None and questions.says("my_queue", req.text):
        if ctx.has("workflow.pending"):
            return pending(ctx)
        step = enable(ctx, "workflow.pending")
        if step is not None:
            return step
    if found is None and req.entity is not None and _WHO_APPROVES.search(req.text.lower()):
        return _whole_workflow(ctx, req.entity)
    if found is None:
        if req.entity is None:
            return say(
                "Which document do you mean? Give its id (for example a purchase order number) and I'll show its approval state and the actions available to you."
            )
        return say(
            f"Which {req.entity.label.lower()}? Give its id and I'll show its state and the actions available to you."
        )
    e, doc_id = found
    step, info = _workflow_describe(ctx, e, doc_id)
    if step is not None or info is None:
        return step or say("")
    if not info.get("states") and info.get("message"):
        return say(str(info["message"]))
    state = info.get("current_state") or "unknown"
    available = [
        t.get("action") for t in info.get("available_actions") or [] if isinstance(t, dict)
    ]
    text = f"{e.label} {doc_id} is in state {state}. "
    if available:
        text += f"Actions available to you now: {join([str(a) for a in available], 'and')}."
    else:
        text += "No workflow action is available to you on it now."
        nexts = [
            t
            for t in info.get("transitions") or []
            if isinstance(t, dict) and t.get("state") == state
        ]
        if nexts:
            text += (
                " From this state: "
                + "; ".join(
                    f"{t.get('action')} (by {t.get('allowed_role')}) → {t.get('next_state')}"
                    for t in nexts
                )
                + "."
            )
        elif state:
            text += " No transition leaves this state."
    return say(text)
