"""Count: how many records the request describes, in all or per group (the ERP counts)."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner.answer import fmt, is_number
from erp_agent.planner.filters import all_filters
from erp_agent.planner.steps import (
    Ctx,
    Step,
    call,
    counted_line,
    described,
    failed,
    group_keys,
    missing_tool,
    names_said,
    rows_of,
    say,
)


def handle(ctx: Ctx) -> Step:
    e = ctx.req.entity
    assert e is not None
    flts, step = all_filters(ctx, e)
    if step:
        return step
    keys = group_keys(ctx, e) if ctx.req.group else []
    if not keys and len(ctx.req.statuses) > 1 and e.status_field and _EACH.search(ctx.req.text):
        # "How many absents, half days etc": a count for each status named, not their sum.
        keys = [{"field": e.status_field}]
    if keys and ctx.has(f"{e.name}.aggregate"):
        return count_by(ctx, e, flts, keys)
    name = f"{e.name}.count"
    args: dict[str, Any] = {"filters": flts}
    if not ctx.has(name):
        if not ctx.has(f"{e.name}.aggregate"):
            return missing_tool(ctx, e, "count")
        name, args = f"{e.name}.aggregate", {"measures": [{"func": "count"}], "filters": flts}
    r = ctx.result(name, args)
    if r is None:
        return call(name, args)
    if not r.ok:
        return failed(r)
    data = r.data if isinstance(r.data, dict) else {}
    n = data.get("count", data.get("record_count"))
    if not is_number(n):
        return say(f"The ERP did not return a count for {e.plural.lower()}.")
    desc = described(ctx, names_said(ctx))
    if n == 0:
        return say(f"No records found: there are 0 {e.plural.lower()}{desc} that you can see.")
    return say(f"There are {fmt(n)} {e.plural.lower()}{desc}." + counted_line(r))


# Statuses listed to be counted each ("absents, half days", "how many of each").
_EACH = re.compile(r",|\betc\b|\beach\b|\bper status\b|\bby status\b|\bsummary\b|\bbreakdown\b")


def count_by(ctx: Ctx, e: Entity, flts: list[dict[str, Any]], keys: list[dict[str, Any]]) -> Step:
    """'How many … per branch': the ERP counts each group (an aggregate as the user)."""
    name = f"{e.name}.aggregate"
    args = {"measures": [{"func": "count"}], "group_by": keys, "filters": flts}
    r = ctx.result(name, args)
    if r is None:
        return call(name, args)
    if not r.ok:
        return failed(r)
    rows = [row for row in rows_of(r) if row.get("count_records")]
    desc = described(ctx, names_said(ctx))
    if not rows:
        return say(f"No records found: there are 0 {e.plural.lower()}{desc} that you can see.")
    cols = [k for k in rows[0] if k != "count_records"]
    lines = [
        f"- {', '.join(str(row.get(c)) for c in cols)}: {fmt(row.get('count_records'))}"
        for row in sorted(rows, key=lambda row: -float(row.get("count_records") or 0))
    ]
    by = str(keys[-1].get("part") or keys[-1]["field"]).replace("_", " ")
    return say(f"{e.plural} by {by}{desc}:\n" + "\n".join(lines) + counted_line(r))
