"""Fields of a new document the request gives in passing, filled as the ERP's form would:
the days of leave asked for, the record a short name means ("annual leave"), the lines of a
claim ("KSh 1,800 for fuel from yesterday"), the status a new document starts in.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from erp_agent.catalog import Entity, Field, FieldType
from erp_agent.planner.parse_amounts import NUMBER_WORDS, money_said
from erp_agent.planner.parse_dates import Period, span_said, start_said
from erp_agent.planner.steps import Ctx, Step, call, enable, rows_of

_DAYS = re.compile(
    r"\b(\d+(?:\.5)?|" + "|".join(NUMBER_WORDS) + r"|a|one)\s+(?:working\s+|work\s+)?days?\b",
    re.IGNORECASE,
)
_STARTS = ("from_date", "start_date")
_ENDS = ("to_date", "end_date")
_PURPOSE = re.compile(
    r"\bfor\s+(?:the\s+|my\s+|a\s+|some\s+)?([a-z][a-z ]*?)"
    r"(?=\s+(?:from|on|at|during|yesterday|today|last|this|when|while|to|in|of)\b|[,.;!?]|$)",
    re.IGNORECASE,
)


def days_asked(text: str) -> float | None:
    m = _DAYS.search(text)
    if m is None:
        return None
    word = m.group(1).lower()
    return 1.0 if word in ("a", "one") else float(NUMBER_WORDS.get(word, 0) or word)


def _working_day_after(day: dt.date, count: int) -> dt.date:
    """The last of ``count`` working days (Monday to Friday) from ``day``."""
    while count > 1:
        day += dt.timedelta(days=1)
        if day.weekday() < 5:
            count -= 1
    return day


def date_value(name: str, period: Period | None, text: str, today: dt.date) -> str:
    """A date field of a new document: a start date is the period's start, an end date its end
    (or the last of the days asked for); any other date (the posting date) is today."""
    if name not in (*_STARTS, *_ENDS):
        return today.isoformat()
    span = span_said(text, today)
    if span is not None:
        # "2 days casual leave, 17th and 18th dec": those days.
        return (span[0] if name in _STARTS else span[1]).isoformat()
    start = start_said(text, today)
    if start is not None:
        # "3 days annual leave starting 11 jan": from that day, for the days asked.
        days = days_asked(text)
        if name in _STARTS:
            return start.isoformat()
        if days and days >= 1:
            return _working_day_after(start, int(days)).isoformat()
        return (period.end if period and period.end >= start else start).isoformat()
    if period is None:
        return today.isoformat()
    if name in _ENDS:
        days = days_asked(text)
        if days and days >= 1 and period.days == 1:
            return _working_day_after(period.start, int(days)).isoformat()
        return period.end.isoformat()
    return period.start.isoformat()


def first_status(e: Entity, name: str, f: Field) -> str | None:
    """A new document's status is the first its workflow has ("Open" for leave)."""
    if name == e.status_field and f.type is FieldType.ENUM and f.values:
        return f.values[0]
    return None


def named_record(ctx: Ctx, target: str) -> tuple[str | None, Step | None]:
    """The one record of a small list ("Annual Leave") the request names, whole or by the
    words its kind does not share ("annual" of the leave types); None when not exactly one."""
    tool = f"{target}.list"
    if not ctx.has(tool):
        return None, enable(ctx, tool)
    query = {"fields": ["id"], "limit": 100}
    r = ctx.result(tool, query)
    if r is None:
        return None, call(tool, query)
    ids = [str(row["id"]) for row in rows_of(r) if row.get("id")] if r.ok else []
    text = ctx.req.text.lower()
    whole = [i for i in ids if re.search(rf"\b{re.escape(i.lower())}\b", text)]
    if len(whole) == 1:
        return whole[0], None
    entity = ctx.catalog.entities.get(target)
    common = set((entity.label if entity else target).lower().split())
    loose = [
        i
        for i in ids
        if (own := [w for w in i.lower().split() if w not in common])
        and all(re.search(rf"\b{re.escape(w)}\b", text) for w in own)
    ]
    return (loose[0] if len(loose) == 1 else None), None


def money_rows(
    ctx: Ctx, f: Field, period: Period | None, today: dt.date
) -> list[dict[str, Any]] | None:
    """One line of a claim from the sum said and what it was for; None without a sum."""
    amount = money_said(ctx.req.text)
    if amount is None:
        return None
    purpose = _PURPOSE.search(ctx.req.text)
    what = purpose.group(1).strip() if purpose else None
    row: dict[str, Any] = {}
    for name, sub in f.fields.items():
        if sub.type is FieldType.MONEY and sub.required:
            row[name] = float(amount)
        elif sub.type in (FieldType.DATE, FieldType.DATETIME):
            row[name] = (period.start if period else today).isoformat()
        elif sub.type is FieldType.STRING and sub.required:
            if what is None:
                return None
            row[name] = what[:1].upper() + what[1:]
        elif sub.type is FieldType.TEXT and what is not None:
            row[name] = what
    return [row]
