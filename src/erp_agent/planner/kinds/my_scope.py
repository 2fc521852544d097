"""'What's overdue in my branch?', 'leave taken in my department this year': "my branch" and
"my department" are those of the user's own Employee record (read as the user), named in the
request as if the user had said them; a user with no such record is told so, never answered
for every branch."""

from __future__ import annotations

import re

from erp_agent.planner import own_employee
from erp_agent.planner.steps import Ctx, Step, say

_MY = re.compile(r"\b(?:my|our)\s+(branch|department|dept)\b", re.IGNORECASE)
_FIELD = {"branch": "branch", "department": "department", "dept": "department"}


def applies(ctx: Ctx) -> bool:
    return bool(_MY.search(ctx.req.text.split(" ; ")[-1])) and _MY.search(ctx.req.text) is not None


def handle(ctx: Ctx) -> Step | None:
    req = ctx.req
    m = _MY.search(req.text)
    if m is None:
        return None
    field = _FIELD[m.group(1).lower()]
    # The one branch the user's permissions hold them to, else their employee record's.
    held = re.search(rf"\b{field} ([^;,]+?)(?:;|$)", ctx.view.restricted, re.IGNORECASE)
    value = held.group(1).strip() if held else ""
    if not value:
        person, step = own_employee.own(ctx)
        if step is not None:
            return step
        value = str(person.get(field) or "") if person else ""
    if not value:
        return say(
            f"I can't tell which {field} is yours: your user has no employee record with a "
            f"{field} in the ERP. Name the {field} and I'll answer for it."
        )
    # The request as if the user had named it: "the Kisumu branch".
    req.text = req.text[: m.start()] + f"the {value} {field}" + req.text[m.end() :]
    if (field, value) not in req.names:
        req.names.append((field, value))
    return None
