"""List: the records the request describes, newest first, with how many there are in all."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner.answer import capabilities, fmt, is_number
from erp_agent.planner.filters import all_filters, documents_wanted
from erp_agent.planner.steps import (
    Call,
    Ctx,
    Step,
    described,
    display,
    enable,
    failed,
    missing_tool,
    names_said,
    rows_of,
    say,
    with_asked,
)

LIST_LIMIT = 50  # rows asked of the ERP for a list; the count says how many there are in all
# A figure of a kind no metric matched ("average days to pay"): the records are not its answer.
_UNMATCHED_FIGURE = re.compile(r"\b(average|median)\b")


def handle(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    if _UNMATCHED_FIGURE.search(ctx.req.text.lower()):
        return say(
            f"I can't work out that figure from {e.plural.lower()} with the tools available, "
            f"so I won't answer with a list of them instead. {capabilities(e, ctx.tools)}"
        )
    if not ctx.has(f"{e.name}.list"):
        return missing_tool(ctx, e)
    if not ctx.has(f"{e.name}.count"):
        # How many there are in all is part of a list's answer: the count, if permitted.
        step = enable(ctx, f"{e.name}.count")
        if step is not None:
            return step
    flts, step = all_filters(ctx, e)
    if step:
        return step
    order = e.date_field or (
        e.amount_field if e.amount_field and e.fields[e.amount_field].sortable else None
    )
    args: dict[str, Any] = {"filters": flts, "limit": LIST_LIMIT, **documents_wanted(ctx, e)}
    if order and e.fields[order].sortable:
        args["order_by"] = [{"field": order, "direction": "desc"}]
    count_args = {"filters": flts, **documents_wanted(ctx, e)}
    listed = ctx.result(f"{e.name}.list", args)
    counted = ctx.result(f"{e.name}.count", count_args) if ctx.has(f"{e.name}.count") else None
    owed_args = _owed_total(ctx, e, flts)
    owed = ctx.result(f"{e.name}.aggregate", owed_args) if owed_args else None
    if listed is None or (owed_args and owed is None):
        calls = [Call(f"{e.name}.list", args)] if listed is None else []
        if ctx.has(f"{e.name}.count") and counted is None:
            calls.append(Call(f"{e.name}.count", count_args))
        if owed_args and owed is None:
            calls.append(Call(f"{e.name}.aggregate", owed_args))
        return Step(calls=calls)
    if not listed.ok:
        return failed(listed)
    rows = rows_of(listed)
    desc = described(ctx, names_said(ctx))
    if not rows:
        return say(f"No records found: there are no {e.plural.lower()}{desc} that you can see.")
    total = (
        counted.data.get("count")
        if counted and counted.ok and isinstance(counted.data, dict)
        else None
    )
    shown = ctx.result("display.table") is not None
    if len(rows) > 1 and not shown:
        step2 = display(ctx, listed, title=f"{e.plural}{desc}")
        if step2:
            return step2
    head = f"{fmt(total)} {e.plural.lower()}{desc}" if is_number(total) else f"{e.plural}{desc}"
    lines = [with_asked(ctx, e, row) for row in rows[:5]]
    more = ""
    if isinstance(total, (int, float)) and total > len(lines):
        more = f" The table shows the first {fmt(len(rows))}." if shown else ""
    return say(
        f"{head}:\n"
        + "\n".join(f"- {line}" for line in lines)
        + (f"\n{more.strip()}" if more else "")
        + _owed_line(owed)
    )


def _owed_total(ctx: Ctx, e: Any, flts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Records listed for what is still owed on them ("which invoices are overdue"): what is
    owed on them all, per currency, beside the list."""
    owed = e.fields.get("outstanding")
    says_owed = any(f["field"] == "outstanding" and f["op"] == ">" for f in flts)
    if owed is None or not owed.summable or not says_owed or not ctx.has(f"{e.name}.aggregate"):
        return None
    by = [{"field": "currency"}] if "currency" in e.fields else []
    return {"measures": [{"func": "sum", "field": "outstanding"}], "group_by": by, "filters": flts}


def _owed_line(owed: Any) -> str:
    if owed is None or not owed.ok:
        return ""
    sums = [
        f"{row.get('currency') or ''} {fmt(row.get('sum_outstanding'))}".strip()
        for row in rows_of(owed)
        if is_number(row.get("sum_outstanding"))
    ]
    return f"\nOutstanding on them in total: {'; '.join(sums)}." if sums else ""
