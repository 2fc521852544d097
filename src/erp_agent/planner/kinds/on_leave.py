"""Who is on leave on a day (or during a period): approved, submitted leave applications whose
dates cover it — not the applications made that day."""

from __future__ import annotations

import datetime as dt
from typing import Any

from erp_agent.planner.answer import fmt, join
from erp_agent.planner.filters import name_filters
from erp_agent.planner.steps import Ctx, Step, call, failed, missing_tool, rows_of, say

ENTITY = "leave_application"


def _days(ctx: Ctx) -> tuple[dt.date, dt.date]:
    req, today = ctx.req, ctx.view.today
    if req.as_of is not None:
        return req.as_of, req.as_of
    if req.period is not None:
        return req.period.start, req.period.end
    return today, today


def _booked(entity: Any) -> list[dict[str, Any]]:
    """Only booked (approved and submitted) applications, in the entity's own lifecycle."""
    life = entity.lifecycle
    return [] if life is None else [{"field": life.field, "op": "=", "value": life.booked}]


def handle(ctx: Ctx) -> Step:
    e = ctx.catalog.entities.get(ENTITY)
    if e is None:
        return say("Leave is not something this ERP connection reads, so I can't say who is away.")
    ctx.req.entity = e
    tool = f"{ENTITY}.list"
    if not ctx.has(tool):
        return missing_tool(ctx, e)
    first, last = _days(ctx)
    named, step = name_filters(ctx, e)
    if step is not None:
        return step
    flts: list[dict[str, Any]] = [
        {"field": "status", "op": "=", "value": "Approved"},
        *_booked(e),
        {"field": "from_date", "op": "<=", "value": last.isoformat()},
        {"field": "to_date", "op": ">=", "value": first.isoformat()},
        *named,
    ]
    args: dict[str, Any] = {
        "filters": flts,
        "limit": 100,
        "order_by": [{"field": "from_date", "direction": "asc"}],
    }
    r = ctx.result(tool, args)
    if r is None:
        return call(tool, args)
    if not r.ok:
        return failed(r)
    when = f"on {first}" if first == last else f"between {first} and {last}"
    rows = rows_of(r)
    if not rows:
        return say(f"No one you can see is on approved leave {when}.")
    people = sorted({str(row.get("employee_name") or row.get("employee")) for row in rows})
    lines = [
        f"- {row.get('employee_name') or row.get('employee')}: {row.get('leave_type')}, "
        f"{row.get('from_date')} to {row.get('to_date')} ({fmt(row.get('days'))} days, {row.get('id')})"
        for row in rows[:20]
    ]
    head = f"{len(people)} {'person is' if len(people) == 1 else 'people are'} on approved leave {when}"
    return say(f"{head}: {join(people[:8])}.\n" + "\n".join(lines))
