"""'Who owes us more than 10k and is more than 60 days overdue?': invoices with more than the
amount outstanding that are overdue by more than N days — both conditions kept, on each invoice
(as the ERP's receivables list filters them). The ERP counts them and sums their outstanding per
party (aggregates as the user); nothing is added up here."""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable
from typing import Any

from erp_agent.planner.answer import fmt
from erp_agent.planner.parse_dates import age_words
from erp_agent.planner.plan import Call, Ctx, Step, _failed, _rows, _text

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
    limit = float(req.amount.value)
    overdue: list[dict[str, Any]] = [
        {"field": "outstanding", "op": ">", "value": 0},
        {"field": "due_date", "op": "<", "value": cutoff},
    ]
    if ctx.view.company:
        overdue.append({"field": "company", "op": "=", "value": ctx.view.company})
    # Both readings, each with both conditions: what each party owes on those invoices, and
    # how many single invoices are over the amount.
    args = {"measures": [{"func": "sum", "field": "outstanding"}, {"func": "count"}],
            "group_by": [{"field": "currency"}, {"field": party}], "filters": overdue}  # fmt: skip
    count_tool = f"{entity}.count"
    count_args = {
        "filters": [*overdue, {"field": "outstanding", "op": req.amount.op, "value": limit}]
    }
    r = ctx.result(tool, args)
    counted = ctx.result(count_tool, count_args) if ctx.has(count_tool) else None
    if r is None or (counted is None and ctx.has(count_tool)):
        calls = [] if r is not None else [Call(tool, args)]
        if counted is None and ctx.has(count_tool):
            calls.append(Call(count_tool, count_args))
        return Step(calls=calls)
    if not r.ok:
        return _failed(r)
    compare = _OPS[req.amount.op]
    rows = [row for row in _rows(r) if compare(float(row.get("sum_outstanding") or 0), limit)]
    rows.sort(key=lambda row: -float(row.get("sum_outstanding") or 0))
    age = f"{age_words(req.text, req.age_days)} overdue (due before {cutoff})"
    what = f"{req.amount.op} {fmt(limit)} outstanding on invoices {age}"
    n = (
        counted.data.get("count")
        if counted and counted.ok and isinstance(counted.data, dict)
        else None
    )
    if not rows:
        return _text(f"No records found: no {party} has {what} among what you can see.")
    lines = [f"- {row.get(party)}: {row.get('currency')} {fmt(row.get('sum_outstanding'))} "
             f"over {fmt(row.get('count_records'))} invoices" for row in rows[:15]]  # fmt: skip
    single = (
        f"\n{fmt(n)} single invoices have {req.amount.op} {fmt(limit)} outstanding and are {age}."
        if n is not None
        else ""
    )
    return _text(f"{len(rows)} {party}s have {what}:\n" + "\n".join(lines) + single)
