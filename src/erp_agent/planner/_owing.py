"""'Who owes us more than 10k and is more than 60 days overdue?': parties whose outstanding on
invoices overdue by more than N days exceeds the amount — both conditions kept. The ERP sums
the outstanding per party (an aggregate as the user); the threshold only selects its groups."""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable
from typing import Any

from erp_agent.planner.answer import fmt
from erp_agent.planner.plan import Ctx, Step, _call, _failed, _rows, _text

_PARTY = {"sales_invoice": "customer", "purchase_invoice": "supplier"}
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


def applies(ctx: Ctx) -> bool:
    req = ctx.req
    owed = any(w in req.text.lower() for w in ("owe", "outstanding", "unpaid", "overdue"))
    return bool(req.amount is not None and req.age_days is not None and owed)


def owing(ctx: Ctx) -> Step | None:
    req = ctx.req
    report = req.report.name if req.report is not None else ""
    entity = (
        "purchase_invoice"
        if "payable" in report or (req.entity and req.entity.name == "purchase_invoice")
        else "sales_invoice"
    )
    party = _PARTY[entity]
    tool = f"{entity}.aggregate"
    if not ctx.has(tool) or req.amount is None or req.age_days is None:
        return None
    cutoff = (ctx.view.today - dt.timedelta(days=req.age_days)).isoformat()
    filters: list[dict[str, Any]] = [
        {"field": "outstanding", "op": ">", "value": 0},
        {"field": "due_date", "op": "<", "value": cutoff},
    ]
    if ctx.view.company:
        filters.append({"field": "company", "op": "=", "value": ctx.view.company})
    args = {"measures": [{"func": "sum", "field": "outstanding"}, {"func": "count"}],
            "group_by": [{"field": "currency"}, {"field": party}], "filters": filters}  # fmt: skip
    r = ctx.result(tool, args)
    if r is None:
        return _call(tool, args)
    if not r.ok:
        return _failed(r)
    limit = float(req.amount.value)
    compare = _OPS[req.amount.op]
    rows = [row for row in _rows(r) if compare(float(row.get("sum_outstanding") or 0), limit)]
    rows.sort(key=lambda row: -float(row.get("sum_outstanding") or 0))
    what = f"{req.amount.op} {fmt(limit)} outstanding on invoices due before {cutoff} (more than {req.age_days} days overdue)"
    if not rows:
        return _text(f"No records found: no {party} has {what} among what you can see.")
    lines = [f"- {row.get(party)}: {row.get('currency')} {fmt(row.get('sum_outstanding'))} "
             f"over {fmt(row.get('count_records'))} invoices" for row in rows[:15]]  # fmt: skip
    return _text(f"{len(rows)} {party}s have {what}:\n" + "\n".join(lines))
