"""The employee a self-service request is about: the signed-in user's own Employee record (the
one whose user is theirs), or an employee the request names. Read as the user, so an employee
only ever finds their own record, and HR finds whoever they may see.

"I'd like 3 days of annual leave", "how much casual leave do I have left": "I" is the user's
Employee record, never a name to look up.
"""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner import master_data
from erp_agent.planner.steps import Ctx, Step, call, enable, rows_of, say

FIELDS = ["id", "employee_name", "company", "leave_approver", "department", "branch"]


# The user's own figure: "my leave", "have I taken", "I've claimed" — not "show me", "can I see".
_OWN = re.compile(
    r"\bmy\b|\bmine\b|\b(?:did|have|do|am|was)\s+i\b"
    r"|\bi(?:'ve|'m|\s+have|\s+had|\s+got|\s+get|\s+earn\w*|\s+took|\s+take|\s+claim\w*"
    r"|\s+spent|\s+was|\s+still)\b",
    re.IGNORECASE,
)


def speaks_of_own(text: str) -> bool:
    """Whether the words ask for the user's own figure ("my leave", "have I taken")."""
    return _OWN.search(text) is not None


def _row(ctx: Ctx, field: str, value: str) -> tuple[dict[str, Any] | None, Step | None]:
    if not ctx.has("employee.list"):
        return None, enable(ctx, "employee.list")
    query = {"filters": [{"field": field, "op": "=", "value": value}], "fields": FIELDS, "limit": 2}
    r = ctx.result("employee.list", query)
    if r is None:
        return None, call("employee.list", query)
    rows = rows_of(r) if r.ok else []
    return (dict(rows[0]) if len(rows) == 1 else None), None


def own(ctx: Ctx) -> tuple[dict[str, Any] | None, Step | None]:
    """The user's own Employee record; None when they have none (or the ERP shows none)."""
    if not ctx.view.user:
        return None, None
    return _row(ctx, "user", ctx.view.user)


def own_or_said(ctx: Ctx, missing: str) -> tuple[dict[str, Any] | None, Step | None]:
    """The user's own Employee record, or the step to find it, or ``missing`` said when they
    have none (never an answer for everyone instead)."""
    person, step = own(ctx)
    if step is None and person is None:
        step = say(missing)
    return person, step


def named(ctx: Ctx, name: str) -> tuple[dict[str, Any] | None, Step | None]:
    """The employee a name means, found among those the user can see (asks which one when
    several fit)."""
    found, step = master_data.resolve(ctx, [("employee", name)], ["employee"])
    if step is not None:
        return None, step
    hit = found.get(name)
    if hit is None:
        return None, None
    return _row(ctx, "id", hit[1])
