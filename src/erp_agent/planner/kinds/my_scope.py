"""'What's overdue in my branch?', 'leave taken in my department this year', 'what was my take
home pay last month?': "my branch", "my department" and "my" figure of an employee's are those
of the user's own Employee record (read as the user), named in the request as if the user had
said them; a user with no such record is told so, never answered for every branch or
everyone."""

from __future__ import annotations

import re

from erp_agent.planner import own_employee
from erp_agent.planner.metric_plan import pick
from erp_agent.planner.steps import Ctx, Step, say

_MY = re.compile(
    r"\b(?:my|our)\s+(branch|department|dept|store|stores|warehouse|warehouses)\b", re.IGNORECASE
)
# "Our store" is the branch's: its warehouses are the ones filed under that branch.
_FIELD = {"branch": "branch", "department": "department", "dept": "department",
          "store": "branch", "stores": "branch", "warehouse": "branch", "warehouses": "branch"}  # fmt: skip


# "The store", said by a user the ERP holds to one branch, is that branch's store.
_THE = re.compile(r"\bthe\s+(store|warehouse)\b", re.IGNORECASE)


def _said(ctx: Ctx, text: str) -> re.Match[str] | None:
    held = re.search(r"\bbranch [^;,]+", ctx.view.restricted, re.IGNORECASE)
    return _MY.search(text) or (_THE.search(text) if held else None)


def applies(ctx: Ctx) -> bool:
    return bool(_said(ctx, ctx.req.text.split(" ; ")[-1])) or _mine(ctx)


def _mine(ctx: Ctx) -> bool:
    """ "My take-home pay", "what have I claimed": a figure per employee, of the user's own."""
    req = ctx.req
    if req.names or req.doc_ids or not own_employee.speaks_of_own(req.text.split(" ; ")[-1]):
        return False
    metric = pick(ctx.catalog, req)
    return (
        metric is not None
        and "employee" in metric.dimensions
        and not any(f.value == "me" for f in metric.filters)  # "awaiting my approval"
    )


def handle(ctx: Ctx) -> Step | None:
    req = ctx.req
    m = _said(ctx, req.text)
    if m is None:
        return _own_figure(ctx) if _mine(ctx) else None
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


def _own_figure(ctx: Ctx) -> Step | None:
    person, step = own_employee.own_or_said(
        ctx,
        "I can't tell which employee you are: your user has no employee record in the ERP, "
        "so I won't answer with everyone's figure.",
    )
    if step is not None or person is None:
        return step
    name = str(person.get("employee_name") or person["id"])
    if ("employee", name) not in ctx.req.names:
        ctx.req.names.append(("employee", name))
    return None
