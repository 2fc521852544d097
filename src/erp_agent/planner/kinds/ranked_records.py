"""'Top 3 sales invoices by amount', 'the biggest customer payments this month', 'the last
invoice we sent Gulf Traders', 'Gulf Traders' oldest unpaid invoice': the records themselves,
ranked by their amount or their date — not a figure per customer. Amounts in two currencies
never share one ranking: one list per currency (or per company, whose currency the records are
in) unless the question names one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner.answer import fmt
from erp_agent.planner.filters import OWED_STATUSES, all_filters, documents_wanted
from erp_agent.planner.parse_amounts import NUMBER_WORDS
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

# The word a ranking starts with, and what it ranks by: the amount, largest first; the date,
# newest or oldest first.
_BY_AMOUNT = re.compile(r"\b(?:top|largest|biggest|highest|greatest|heaviest|priciest|leading)\b")
_NEWEST = re.compile(r"\b(?:last|latest|newest|most recent)\b")
_OLDEST = re.compile(r"\b(?:oldest|earliest|first)\b")
_RECENTLY = re.compile(r"\b(?:recently|the other day|last time)\b")
_HEAD_WINDOW = 5  # words after the ranking word in which its noun stands


@dataclass(frozen=True)
class Order:
    field: str
    descending: bool
    words: str  # how the answer names the order ("largest … by grand total", "latest")
    limit: int


def applies(ctx: Ctx) -> bool:
    return _order(ctx) is not None


def _order(ctx: Ctx) -> Order | None:
    req, e = ctx.req, ctx.req.entity
    if e is None or req.doc_ids or req.group or e.kind.value != "transaction":
        return None
    low = req.text.lower().split(" ; ")[-1]
    field = _owed_field(e, req.statuses, low) or e.amount_field or ""
    amount = e.fields.get(field)
    if amount is not None and amount.sortable:
        n = _ranks_records(ctx, e, _BY_AMOUNT.search(low), low)
        if n is not None:
            label = f"largest by {amount.label.lower()}"
            return Order(field, True, label, req.top or n)
    dated = e.fields.get(e.date_field or "")
    if dated is None or not dated.sortable:
        return None
    for pattern, descending, words in ((_NEWEST, True, "latest"), (_OLDEST, False, "oldest")):
        n = _ranks_records(ctx, e, pattern.search(low), low)
        if n is not None:
            return Order(e.date_field or "", descending, words, n)
    if _RECENTLY.search(low) and req.fields_asked:
        # "Lakeside paid us by cheque recently - what was the cheque number?": the latest one.
        return Order(e.date_field or "", True, "latest", 1)
    return None


_OWED = re.compile(r"\b(unpaid|outstanding|owed?|owing|overdue|past due|open balance)\b")


def _owed_field(e: Entity, statuses: list[str], low: str) -> str | None:
    """ "The biggest unpaid invoices" are the biggest by what is unpaid on them (outstanding),
    not by their total."""
    owed = e.fields.get("outstanding")
    if owed is None or not owed.sortable:
        return None
    said = bool(set(statuses) & set(OWED_STATUSES)) or bool(_OWED.search(low))
    return "outstanding" if said else None


def _ranks_records(ctx: Ctx, e: Entity, m: re.Match[str] | None, low: str) -> int | None:
    """How many records the ranking word picks out when its noun is the records' own ("the 3
    biggest customer payments": 3, "the last invoice": 1, "the latest invoices": 5), not a
    party's ("the top 3 customers by payments") or a period's ("last month"); else None."""
    if m is None:
        return None
    words = re.findall(r"[a-z0-9]+", low[m.end() :])[:_HEAD_WINDOW]
    nouns = {n.lower() for n in (e.label, e.plural, *e.synonyms, *e.keywords)}
    masters = {
        w.lower()
        for other in ctx.catalog.entities.values()
        if other.kind.value == "master"
        for w in (other.plural, other.label + "s", *(s + "s" for s in other.synonyms))
    }
    before = re.findall(r"[a-z0-9]+", low[: m.start()])[-_HEAD_WINDOW:]
    if any(w in masters for w in before):
        return None  # "the 2 customers with the biggest unpaid balances": customers ranked
    count = None
    for i in range(len(words)):
        if words[i] in masters or words[i] in _PERIODS:
            return None  # "top 3 customers …", "last month": not the records ranked
        if words[i] in ("one", "ones") and i == len(words) - 1:
            return count or (1 if words[i] == "one" else 5)  # "…, the latest one": of these
        if count is None and (words[i].isdigit() or words[i] in NUMBER_WORDS):
            count = int(words[i]) if words[i].isdigit() else NUMBER_WORDS[words[i]]
            continue
        for n in nouns:
            said = " ".join(words[i : i + len(n.split())])
            if said in (n, n + "s"):
                plural = said != n or n == e.plural.lower()
                return count or (5 if plural else 1)
    return None


_PERIODS = frozenset(["week", "weeks", "month", "months", "quarter", "quarters", "year", "years",
                      "day", "days", "fy", "time"])  # fmt: skip


def _partition(e: Entity, flts: list[dict[str, Any]]) -> str | None:
    """The field an amount ranking is kept apart by: the records' currency, else their company
    (whose currency they are in); none when the filters already hold it to one."""
    for name in ("currency", "company"):
        f = e.fields.get(name)
        if f is not None and f.filterable and f.groupable:
            held = any(x.get("field") == name and x.get("op") in ("=", "in") for x in flts)
            return None if held else name
    return None


def handle(ctx: Ctx) -> Step | None:
    e, order = ctx.req.entity, _order(ctx)
    if e is None or order is None:
        return None
    if not ctx.has(f"{e.name}.list"):
        return missing_tool(ctx, e)
    flts, step = all_filters(ctx, e)
    if step is not None:
        return step
    part = _partition(e, flts) if order.field != e.date_field else None  # money: per currency
    values: list[str | None] = [None]
    if part == "currency" and ctx.req.currency:
        # "In shillings": that currency's list alone.
        part, values = None, [None]
        flts = [*flts, {"field": "currency", "op": "=", "value": ctx.req.currency}]
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
            "order_by": [
                {"field": order.field, "direction": "desc" if order.descending else "asc"}
            ],
            "limit": order.limit,
            **documents_wanted(ctx, e),
        }
        lists.append((value, args, ctx.result(f"{e.name}.list", args)))
    pending = [Call(f"{e.name}.list", args) for _, args, r in lists if r is None]
    if pending:
        return Step(calls=pending)
    return _answer(ctx, e, part, order, lists)


def _answer(ctx: Ctx, e: Entity, part: str | None, order: Order, lists: list[Any]) -> Step:
    desc = described(ctx, names_said(ctx))
    blocks = []
    for value, _, r in lists:
        if not r.ok:
            return failed(r)
        rows = rows_of(r)
        if not rows:
            continue
        what = e.label.lower() if len(rows) == 1 else f"{fmt(len(rows))} {e.plural.lower()}"
        first, _, by = order.words.partition(" by ")
        head = f"The {first} {what}{desc}" + (f" by {by}" if by else "")
        if value is not None and len(lists) > 1:
            head += f" ({part} {value})"
        blocks.append((r, head, rows))
    if not blocks:
        return say(f"No records found: there are no {e.plural.lower()}{desc} that you can see.")
    if len(blocks) == 1 and len(blocks[0][2]) > 1 and ctx.result("display.table") is None:
        shown = display(ctx, blocks[0][0], title=blocks[0][1])
        if shown is not None:
            return shown
    text = "\n\n".join(
        f"{head}:\n" + "\n".join(f"- {with_asked(ctx, e, row)}" for row in rows)
        for _, head, rows in blocks
    )
    return say(text)
