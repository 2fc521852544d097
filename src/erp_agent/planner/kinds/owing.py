"""'Who owes us more than 10k and is more than 60 days overdue?': invoices with more than the
amount outstanding that are overdue by more than N days — both conditions kept, on each invoice
(as the ERP's receivables list filters them). 'Customers owing more than 500k' (no age): what
each party owes on all its unpaid invoices, over the amount. The ERP counts them and sums their outstanding per
party (aggregates as the user); nothing is added up here."""

from __future__ import annotations

import datetime as dt
import operator
import re
from collections.abc import Callable
from typing import Any

from erp_agent.planner.answer import fmt
from erp_agent.planner.metric_plan import asks_each
from erp_agent.planner.parse_dates import age_words
from erp_agent.planner.steps import Call, Ctx, Step, enable, failed, rows_of, say

_PARTY = {"sales_invoice": "customer", "purchase_invoice": "supplier"}
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


_PARTIES = re.compile(
    r"\b(customers?|clients?|debtors?|suppliers?|vendors?|creditors?|who|which|parties)\b"
)
_WE_OWE = re.compile(
    r"\b(we|i)\s+(?:still\s+)?owe\b|\b(suppliers?|vendors?|creditors?|payables?)\b"
)


def applies(ctx: Ctx) -> bool:
    req, low = ctx.req, ctx.req.text.lower()
    owed = any(w in low for w in ("owe", "owing", "outstanding", "unpaid", "overdue", "past due",
                                  "late"))  # fmt: skip
    # An amount of a party's debt: with an age, or asked of parties ("customers owing > 500k");
    # or each party's debt of an age ("customers more than 60 days overdue - who and how much").
    per_party = req.age_days is not None or bool(_PARTIES.search(low))
    each = req.age_days is not None and bool(_PARTIES.search(low)) and asks_each(req.text)
    return bool(((req.amount is not None and per_party) or each) and owed)


def handle(ctx: Ctx) -> Step | None:
    req = ctx.req
    report = req.report.name if req.report is not None else ""
    entity = (
        "purchase_invoice"
        if "payable" in report
        or (req.entity and req.entity.name == "purchase_invoice")
        or _WE_OWE.search(req.text.lower())
        else "sales_invoice"
    )
    party = _PARTY[entity]
    tool = f"{entity}.aggregate"
    if req.amount is None and req.age_days is None:
        return None
    if not ctx.has(tool):
        # "Customers owing more than 500k" routes to customers; their debts are invoices.
        return enable(ctx, tool)
    limit = float(req.amount.value) if req.amount is not None else None
    overdue: list[dict[str, Any]] = [{"field": "outstanding", "op": ">", "value": 0}]
    cutoff = None
    if req.age_days is not None:
        cutoff = (ctx.view.today - dt.timedelta(days=req.age_days)).isoformat()
        overdue.append({"field": "due_date", "op": "<", "value": cutoff})
    if ctx.view.company:
        overdue.append({"field": "company", "op": "=", "value": ctx.view.company})
    # Both readings, each with both conditions: what each party owes on those invoices, and
    # how many single invoices are over the amount.
    args = {"measures": [{"func": "sum", "field": "outstanding"}, {"func": "count"}],
            "group_by": [{"field": "currency"}, {"field": party}], "filters": overdue}  # fmt: skip
    count_tool = f"{entity}.count" if req.amount is not None else ""
    count_args = {
        "filters": [*overdue, *([{"field": "outstanding", "op": req.amount.op, "value": limit}]
                                if req.amount is not None else [])]
    }  # fmt: skip
    r = ctx.result(tool, args)
    counted = ctx.result(count_tool, count_args) if ctx.has(count_tool) else None
    if r is None or (counted is None and ctx.has(count_tool)):
        calls = [] if r is not None else [Call(tool, args)]
        if counted is None and ctx.has(count_tool):
            calls.append(Call(count_tool, count_args))
        return Step(calls=calls)
    if not r.ok:
        return failed(r)
    rows = [
        row for row in rows_of(r)
        if req.amount is None or limit is None
        or _OPS[req.amount.op](float(row.get("sum_outstanding") or 0), limit)
    ]  # fmt: skip
    rows.sort(key=lambda row: -float(row.get("sum_outstanding") or 0))
    age = (
        f"{age_words(req.text, req.age_days)} overdue (due before {cutoff})"
        if req.age_days is not None
        else "not yet paid"
    )
    over = f"{req.amount.op} {fmt(limit)} " if req.amount is not None else ""
    what = f"{over}outstanding on invoices {age}"
    n = (
        counted.data.get("count")
        if counted and counted.ok and isinstance(counted.data, dict)
        else None
    )
    if not rows:
        return say(f"No records found: no {party} has {what} among what you can see.")
    lines = [f"- {row.get(party)}: {row.get('currency')} {fmt(row.get('sum_outstanding'))} "
             f"over {fmt(row.get('count_records'))} invoice"
             f"{'' if row.get('count_records') == 1 else 's'}" for row in rows[:15]]  # fmt: skip
    single = (
        f"\n{fmt(n)} single invoices have {over}outstanding and are {age}." if n is not None else ""
    )
    # No count of the parties: it would be this planner's own tally of rows, not the ERP's.
    shown = "" if len(rows) <= len(lines) else " (the largest only)"
    return say(f"{party.capitalize()}s with {what}{shown}:\n" + "\n".join(lines) + single)
