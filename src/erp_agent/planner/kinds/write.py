"""Write requests become proposals: the exact tool call the gateway turns into a change the
user confirms. The planner fills only what the request, the session or the ERP says; anything
else it asks for."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.catalog import Entity, FieldType
from erp_agent.planner import write_names
from erp_agent.planner.answer import fmt, join
from erp_agent.planner.parse_amounts import money_said, to_number
from erp_agent.planner.reporting import company_step
from erp_agent.planner.steps import Ctx, Step, call, earlier_id, enable, failed, rows_of, say


def handle(ctx: Ctx) -> Step:
    req = ctx.req
    e = req.entity
    assert e is not None
    assert req.verb is not None
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
                _party_company(ctx, e, dict(done.args))  # its note, if the party implied it
            return say(
                f"I've prepared this for you to confirm: {summary or done.message}. Nothing changes in the ERP until you confirm it."
                + note
            )
        return failed(done)
    # What the verb asks for (questions.yaml's verbs): "draw up" a quotation creates one.
    change = req.change or "update"
    if change == "create":
        return _create(ctx, e)
    found = req.doc_ids[0] if req.doc_ids else earlier_id(ctx, e)
    if found is None:
        return say(
            f"Which {e.label.lower()}? Give its id and I'll prepare the change for you to confirm."
        )
    e, doc_id = found
    if change in ("approve", "reject") or (
        change == "submit" and ctx.has(f"{e.name}.workflow_action")
    ):
        return _workflow_action(ctx, e, doc_id)
    if change in ("submit", "cancel", "delete"):
        op = change
        tool = f"{e.name}.{op}"
        if not ctx.has(tool):
            return say(f"You can't {op} {e.plural.lower()} in this session.")
        return call(tool, {"id": doc_id})
    return _update(ctx, e, doc_id)


def _workflow_action(ctx: Ctx, e: Entity, doc_id: str) -> Step:
    verb = ctx.req.change or ctx.req.verb or ""
    tool = f"{e.name}.workflow_action"
    if not ctx.has(tool):
        return enable(ctx, tool) or say(f"You can't {verb} {e.plural.lower()} in this session.")
    describe = f"{e.name}.workflow"
    if ctx.has(describe):
        r = ctx.result(describe, {"id": doc_id})
        if r is None:
            return call(describe, {"id": doc_id})
        if not r.ok:
            return failed(r)
        info = r.data if isinstance(r.data, dict) else {}
        actions = [
            str(a.get("action")) for a in info.get("available_actions") or [] if isinstance(a, dict)
        ]
        chosen = next((a for a in actions if a.lower().startswith(verb)), None)
        if chosen is None:
            state = info.get("current_state") or "its current state"
            avail = join(actions) if actions else "none"
            return say(
                f"You can't {verb} {e.label} {doc_id} now: it is in state {state}. Actions available to you: {avail}."
            )
        return call(tool, {"id": doc_id, "action": chosen})
    return call(tool, {"id": doc_id, "action": verb.capitalize()})


def _update(ctx: Ctx, e: Entity, doc_id: str) -> Step:
    tool = f"{e.name}.update"
    if not ctx.has(tool):
        return say(f"You can't change {e.plural.lower()} in this session.")
    value = (ctx.req.target_value or "").strip().lower()
    fields = [n for n in ([e.status_field] if e.status_field else []) + list(e.fields) if n]
    for name in dict.fromkeys(fields):
        f = e.fields[name]
        if f.type is FieldType.ENUM and not f.read_only:
            hit = next((v for v in f.values if v.lower() == value), None)
            if hit:
                return call(tool, {"id": doc_id, "values": {name: hit}})
    return say(
        f"I don't know which field of {e.label} {doc_id} to set to '{value}'. Name the field and its new value."
    )


def _create(ctx: Ctx, e: Entity) -> Step:
    tool = f"{e.name}.create"
    first = _before_create(ctx, e, tool)
    if first is not None:
        return first
    schema = ctx.tools[tool]
    props: dict[str, Any] = dict(schema.get("properties") or {})
    required = list(schema.get("required") or [])
    args: dict[str, Any] = {}
    names = [v for h, v in ctx.req.names if h is None] + [v for h, v in ctx.req.names if h]
    wanted = write_names.lines(ctx.req.text)
    party = write_names.party_name(ctx, [n for _, n in wanted])
    missing: list[str] = []
    for name in required:
        f = e.fields.get(name)
        if f is None:
            continue
        kind = f.target if f.target in _PARTY_KINDS else None
        if name == "party" or kind:
            # The party by name, found among the records the user can see (never the company).
            dimension = kind or str(args.get("quotation_to") or "customer")
            if party is None:
                missing.append(f"the {dimension} it is for")
                continue
            party_id, step = write_names.resolve_party(ctx, party, dimension)
            if step is not None:
                return step
            args[name] = party_id
        elif f.target == "company" or name == "company":
            company, step = _company(ctx, e, args)
            if step:
                return step
            args[name] = company
        elif f.type is FieldType.ENUM:
            hit = _enum_value(ctx, f.values, bool(names or party))
            if hit is None:
                missing.append(f.label.lower())
            else:
                args[name] = hit
        elif f.type is FieldType.MONEY and money_said(ctx.req.text) is not None:
            # "25,000 bob received from Gulf Traders": the sum the change is for.
            args[name] = float(money_said(ctx.req.text) or 0)
        elif f.type in (FieldType.DATE, FieldType.DATETIME):
            args[name] = ctx.view.today.isoformat()
        elif f.type is FieldType.TABLE and wanted and not _needs_rate(props.get(name, {})):
            # Lines by item name or code; the ERP fills rates from the price list.
            rows, step = write_names.resolve_lines(ctx, wanted)
            if step is not None:
                return step
            args[name] = rows
        elif f.type is FieldType.TABLE:
            rows, step = _item_rows(ctx, f.fields, props.get(name, {}))
            if step:
                return step
            if rows is None:
                missing.append(f"{f.label.lower()} (item codes and quantities)")
            else:
                args[name] = rows
        elif (
            f.type is FieldType.STRING or (f.type is FieldType.LINK and f.target != "account")
        ) and names:
            # A name said fills a name field; never an account (a party is not its ledger).
            args[name] = names[0]
        else:
            missing.append(f.label.lower())
    if missing:
        return say(f"To prepare the {e.label.lower()} I need: {join(missing)}. Please give them.")
    return call(tool, args)


_PARTY_KINDS = ("customer", "supplier", "lead")


def _before_create(ctx: Ctx, e: Entity, tool: str) -> Step | None:
    if not ctx.has(tool):
        return enable(ctx, tool) or say(f"You can't create {e.plural.lower()} in this session.")
    if ctx.has("company.list") and ctx.result("company.list") is None:
        # The companies first: "for Savanna Trading Ltd" names the company, never the party.
        return call("company.list", {"fields": ["id"], "limit": 20})
    return None


def _company(ctx: Ctx, e: Entity, args: dict[str, Any]) -> tuple[str | None, Step | None]:
    """The new document's company: the session's, the one the party's documents are all in,
    else as a report's (named, the only one, the user's default, or asked)."""
    if not ctx.view.company:
        company, step = _party_company(ctx, e, args)
        if step is not None or company is not None:
            return company, step
    return company_step(ctx)


def _enum_value(ctx: Ctx, values: tuple[str, ...], party_named: bool) -> str | None:
    hit = next((v for v in values if v.lower() in ctx.req.text.lower()), None)
    # A quotation's party kind: the request names a party to sell to, i.e. a customer.
    return hit or ("customer" if "customer" in values and party_named else None)


def _party_company(ctx: Ctx, e: Entity, args: dict[str, Any]) -> tuple[str | None, Step | None]:
    """The company a party's documents of this kind all belong to ("a sales order for Lakeside
    Hardware": the company its orders are in), said in a note; None when they are in several,
    or none, or the party is not known yet (then the company is asked)."""
    party = next(((k, v) for k, v in args.items() if k in _PARTY_KINDS or k == "party"), None)
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


def _needs_rate(prop: dict[str, Any]) -> bool:
    return "rate" in (prop.get("items", {}).get("required") or [])


def _item_rows(
    ctx: Ctx, row_fields: dict[str, Any], prop: dict[str, Any]
) -> tuple[list[dict[str, Any]] | None, Step | None]:
    items = ctx.req.items
    if not items:
        return None, None
    text = ctx.req.text
    rows: list[dict[str, Any]] = []
    needs_rate = "rate" in (prop.get("items", {}).get("required") or [])
    for code in items:
        m = re.search(
            rf"(\d+(?:\.\d+)?)\s*(?:units?|pcs|pieces|nos|x|boxes|of|\s)*{re.escape(code)}", text
        )
        qty = float(m.group(1)) if m else None
        if qty is None:
            return None, say(f"How many of {code}? Give a quantity.")
        row: dict[str, Any] = {"item": code, "qty": qty}
        # A rate only when the user gave one; otherwise the ERP prices the line from the
        # party's price list when the proposal is prepared (never the item's standard rate).
        price = re.search(r"(?:at|@)\s*(?:[A-Za-z$€£]{0,4}\s?)?(\d[\d,]*(?:\.\d+)?)", text)
        if price and "rate" in row_fields:
            row["rate"] = float(to_number(price.group(1)))
        elif needs_rate:
            return None, say(f"At what rate should I quote {code}? (e.g. 'at {fmt(1500)} each')")
        rows.append({k: v for k, v in row.items() if k in row_fields})
    return rows, None
