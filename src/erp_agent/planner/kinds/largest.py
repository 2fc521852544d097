"""'Top 3 sales invoices by amount', 'the biggest customer payments this month': the records
themselves ranked by their amount, largest first — not a figure per customer. Amounts in two
currencies never share one ranking: one list per currency (or per company, whose currency the
records are in) unless the question names one."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner.answer import fmt
from erp_agent.planner.filters import all_filters
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

# The ranking word a top-N starts with ("top", "biggest 3", "5 largest").
_RANK = re.compile(r"\b(?:top|largest|biggest|highest|greatest|heaviest|priciest|leading)\b")
_NUMBER = re.compile(
    r"^(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)$"
)
_HEAD_WINDOW = 5  # words after the ranking word in which its noun stands


def applies(ctx: Ctx) -> bool:
    req, e = ctx.req, ctx.req.entity
    if req.top is None or e is None or req.doc_ids or req.group:
        return False
    if e.kind.value != "transaction" or not e.amount_field:
        return False
    return e.fields[e.amount_field].sortable and _ranks_records(ctx, e)


def _ranks_records(ctx: Ctx, e: Entity) -> bool:
    """Whether the noun the ranking word picks out is the records' own ("the 3 biggest customer
    payments"), not a party's ("the top 3 customers by payments")."""
    low = ctx.req.text.lower()
    m = _RANK.search(low)
    if m is None:
        return False
    words = re.findall(r"[a-z0-9]+", low[m.end() :])[:_HEAD_WINDOW]
    nouns = {n.lower() for n in (e.label, e.plural, *e.synonyms, *e.keywords)}
    masters = {
        w
        for other in ctx.catalog.entities.values()
        if other.kind.value == "master"
        for w in (other.plural, other.label + "s", *(s + "s" for s in other.synonyms))
    }
    masters = {w.lower() for w in masters}
    for i in range(len(words)):
        if words[i] in masters:
            return False  # "top 3 customers …": the customers are ranked
        if any(" ".join(words[i : i + len(n.split())]) in (n, n + "s") for n in nouns):
            return True
    return False


def _partition(e: Entity, flts: list[dict[str, Any]]) -> str | None:
    """The field the ranking is kept apart by: the records' currency, else their company (whose
    currency they are in); none when the filters already hold it to one."""
    for name in ("currency", "company"):
        f = e.fields.get(name)
        if f is not None and f.filterable and f.groupable:
            held = any(x.get("field") == name and x.get("op") in ("=", "in") for x in flts)
            return None if held else name
    return None


def handle(ctx: Ctx) -> Step | None:
    e = ctx.req.entity
    if e is None or e.amount_field is None or ctx.req.top is None:
        return None  # applies() saw them: a request changed since is the other kinds' to answer
    if not ctx.has(f"{e.name}.list"):
        return missing_tool(ctx, e)
    flts, step = all_filters(ctx, e)
    if step is not None:
        return step
    part = _partition(e, flts)
    values: list[str | None] = [None]
    if part is not None:
        tool = f"{e.name}.aggregate"
        if not ctx.has(tool):
            return enable(ctx, tool) or say(
                f"I can't keep {e.plural.lower()} in different currencies apart with the tools "
                "available, so I won't rank them together."
            )
        counts = {"measures": [{"func": "count"}], "group_by": [{"field": part}], "filters": flts}
        r = ctx.result(tool, counts)
        if r is None:
            return Step(calls=[Call(tool, counts)])
        if not r.ok:
            return failed(r)
        values = [str(row[part]) for row in rows_of(r) if row.get(part)] or [None]
    lists = []
    for value in values:
        extra = [] if value is None else [{"field": part, "op": "=", "value": value}]
        args: dict[str, Any] = {
            "filters": [*flts, *extra],
            "order_by": [{"field": e.amount_field, "direction": "desc"}],
            "limit": ctx.req.top,
        }
        lists.append((value, args, ctx.result(f"{e.name}.list", args)))
    pending = [Call(f"{e.name}.list", args) for _, args, r in lists if r is None]
    if pending:
        return Step(calls=pending)
    return _answer(ctx, e, part, lists)


def _answer(ctx: Ctx, e: Entity, part: str | None, lists: list[Any]) -> Step:
    desc = described(ctx, names_said(ctx))
    amount = e.fields[e.amount_field or ""].label.lower()
    blocks = []
    for value, _, r in lists:
        if not r.ok:
            return failed(r)
        rows = rows_of(r)
        if not rows:
            continue
        head = f"The {fmt(len(rows))} largest {e.plural.lower()}{desc} by {amount}"
        if value is not None and len(lists) > 1:
            head += f" ({part} {value})"
        blocks.append((r, head, rows))
    if not blocks:
        return say(f"No records found: there are no {e.plural.lower()}{desc} that you can see.")
    if len(blocks) == 1 and ctx.result("display.table") is None:
        shown = display(ctx, blocks[0][0], title=blocks[0][1])
        if shown is not None:
            return shown
    text = "\n\n".join(
        f"{head}:\n" + "\n".join(f"- {with_asked(ctx, e, row)}" for row in rows)
        for _, head, rows in blocks
    )
    return say(text)
