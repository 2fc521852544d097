"""'How many casual leave days do I have left?', 'my leave balance': the user's own leave, per
leave type, as their Leave Application form shows it (report ``leave_details`` for their own
Employee record). An employee may not run the leave balance report, and for anyone else that
report sums every employee they can see: "my" leave is one record's.
"""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner import own_employee
from erp_agent.planner.answer import fmt
from erp_agent.planner.metric_plan import pick
from erp_agent.planner.steps import Ctx, Step, call, enable, failed, rows_of, say

TOOL = "report.leave_details"
# The leave figures a user may ask of their own, and the column that answers each.
_COLUMN = {
    "leave_balance": "remaining_leaves",
    "leave_allocated": "total_leaves",
    "leave_days_taken": "leaves_taken",
}
_WORDS = {
    "remaining_leaves": "left",
    "total_leaves": "allocated",
    "leaves_taken": "taken",
}


def _figure(ctx: Ctx) -> str | None:
    metric = pick(ctx.catalog, ctx.req)
    return _COLUMN.get(getattr(metric, "name", ""))


def applies(ctx: Ctx) -> bool:
    req = ctx.req
    if req.names or req.doc_ids or not own_employee.speaks_of_own(req.text):
        return False  # someone named: their leave, not the user's
    return "leave" in req.text.lower() and _figure(ctx) is not None


def _said_type(rows: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The rows of the leave types the question names ("casual" of Casual Leave)."""
    low = text.lower()
    named = [
        row
        for row in rows
        if (words := [w for w in str(row.get("leave_type", "")).lower().split() if w != "leave"])
        and all(re.search(rf"\b{re.escape(w)}\b", low) for w in words)
    ]
    return named or rows


def handle(ctx: Ctx) -> Step | None:
    column = _figure(ctx)
    if column is None:
        return None
    if not ctx.has(TOOL):
        return enable(ctx, TOOL)
    person, step = own_employee.own_or_said(
        ctx,
        "I can't find an Employee record linked to your user in the ERP, so I can't tell "
        "your own leave. HR can link your user to your employee record.",
    )
    if step is not None or person is None:
        return step
    args: dict[str, Any] = {"employee": person["id"]}
    if ctx.req.as_of is not None:
        args["date"] = ctx.req.as_of.isoformat()
    r = ctx.result(TOOL, args)
    if r is None:
        return call(TOOL, args)
    if not r.ok:
        return failed(r)
    every = [dict(row) for row in rows_of(r)]
    # The leave type the newest message names ("and sick days?"), else the question's.
    last = _said_type(every, ctx.req.text.split(" ; ")[-1])
    rows = last if last != every else _said_type(every, ctx.req.text)
    who = f"{person.get('employee_name') or person['id']} ({person['id']})"
    if not rows:
        return say(f"No records found: {who} has no leave allocated for this leave year.")
    lines = [
        f"- {row.get('leave_type')}: {fmt(row.get(column))} days {_WORDS[column]} "
        f"(allocated {fmt(row.get('total_leaves'))}, taken {fmt(row.get('leaves_taken'))}, "
        f"pending approval {fmt(row.get('leaves_pending_approval'))})"
        for row in rows
    ]
    return say(
        f"Your leave, {who}, in the leave allocation covering "
        f"{args.get('date') or ctx.view.today.isoformat()}:\n" + "\n".join(lines)
    )
