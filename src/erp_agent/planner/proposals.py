"""A proposal once prepared: what the user is asked to confirm, with the notes that say what
was chosen for them (the company its party's documents are in, the employee it is for)."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner.steps import Ctx, Step, call, failed, rows_of, say

PARTY_KINDS = ("customer", "supplier", "lead")


def proposed(ctx: Ctx, e: Entity) -> Step | None:
    """Once the change is prepared (or refused): what the user is asked to confirm."""
    done = next(
        (
            r
            for r in ctx.view.results
            if r.status in ("proposal", "invalid", "erp_refused", "refused")
            and r.name.split(".")[-1]
            in ("create", "update", "submit", "cancel", "delete", "workflow_action")
        ),
        None,
    )
    if done is not None:
        if done.status == "proposal":
            summary = (
                done.content.get("proposal", {}).get("summary")
                if isinstance(done.content.get("proposal"), dict)
                else None
            )
            default = ctx.view.default_company
            said = default is not None and default.lower() in ctx.req.text.lower()
            note = (
                f" Company: {default}, your default company in the ERP."
                if default and done.args.get("company") == default and not said
                else ""
            )
            if not note and not ctx.view.company and done.name.endswith(".create"):
                party_company(ctx, e, dict(done.args))  # its note, if the party implied it
            note += employee_named(ctx, done.args.get("employee"))
            return say(
                f"I've prepared this for you to confirm: {summary or done.message}. Nothing changes in the ERP until you confirm it."
                + note
            )
        return failed(done)
    return None


def party_company(ctx: Ctx, e: Entity, args: dict[str, Any]) -> tuple[str | None, Step | None]:
    """The company a party's documents of this kind all belong to ("a sales order for Lakeside
    Hardware": the company its orders are in), said in a note; None when they are in several,
    or none, or the party is not known yet (then the company is asked)."""
    party = next(((k, v) for k, v in args.items() if k in PARTY_KINDS or k == "party"), None)
    tool = f"{e.name}.aggregate"
    if party is None or "company" not in e.fields or party[0] not in e.fields or not ctx.has(tool):
        return None, None
    query = {"measures": [{"func": "count"}], "group_by": [{"field": "company"}],
             "filters": [{"field": party[0], "op": "=", "value": party[1]}]}  # fmt: skip
    r = ctx.result(tool, query)
    if r is None:
        return None, call(tool, query)
    companies = [str(row["company"]) for row in rows_of(r) if row.get("company")] if r.ok else []
    if len(companies) != 1:
        return None, None
    note = (
        f"Company: {companies[0]}, where {party[1]}'s {e.plural.lower()} are "
        "(name another to change it)."
    )
    if note not in ctx.view.notes:
        ctx.view.notes.append(note)
    return companies[0], None


def employee_named(ctx: Ctx, employee: Any) -> str:
    """ " Employee: Kevin Mwangi." for the employee record the proposal is for, by name."""
    for r in ctx.view.results:
        if r.name == "employee.list" and r.ok:
            for row in rows_of(r):
                if employee and row.get("id") == employee and row.get("employee_name"):
                    return f" Employee: {row['employee_name']} ({employee})."
    return ""
