"""Write requests become proposals: the exact tool call the gateway turns into a change the
user confirms. The planner fills only what the request, the session or the ERP says; anything
else it asks for."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from erp_agent.catalog import Entity, Field, FieldType
from erp_agent.planner import master_data, own_employee, proposals, write_fields, write_names
from erp_agent.planner.answer import fmt, join
from erp_agent.planner.parse_amounts import money_said, to_number
from erp_agent.planner.reporting import company_step
from erp_agent.planner.steps import Ctx, Step, call, earlier_id, enable, failed, rows_of, say


def handle(ctx: Ctx) -> Step:
    req = ctx.req
    e = req.entity
    assert e is not None
    assert req.verb is not None
    answered = proposals.proposed(ctx, e)
    if answered is not None:
        return answered
    # What the verb asks for (questions.yaml's verbs): "draw up" a quotation creates one.
    change = req.change or "update"
    if change == "create":
        return _create(ctx, e)
    found = req.doc_ids[0] if req.doc_ids else earlier_id(ctx, e)
    if found is None and change == "update" and _records_a_day(e, req.statuses, req.names):
        # "Mark Kevin Mwangi as absent today": a new attendance record, not a change to one.
        return _create(ctx, e)
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
    required = list(schema.get("required") or [])
    names = [v for h, v in ctx.req.names if h is None] + [v for h, v in ctx.req.names if h]
    # Item lines only where the document has them ("25,000 bob from Gulf Traders" is a sum).
    lined = any(f.type is FieldType.TABLE and "item" in f.fields for f in e.fields.values())
    wanted = write_names.lines(ctx.req.text) if lined else []
    person, step = _person(ctx, e, required, names)
    if step is not None:
        return step
    if person is not None and names:
        names = names[1:]  # "Kevin Mwangi" is whom the leave is for, not its leave type
    draft = _Draft(
        ctx, e, dict(schema.get("properties") or {}), names, wanted,
        write_names.party_name(ctx, [n for _, n in wanted]), person,
    )  # fmt: skip
    _, step = draft.moved_between()  # the warehouses first: they say the kind and company
    if step is not None:
        return step
    for name in required:
        f = e.fields.get(name)
        step = draft.fill(name, f) if f is not None else None
        if step is not None:
            return step
    step = draft.fill_said()
    if step is not None:
        return step
    if draft.missing:
        return say(
            f"To prepare the {e.label.lower()} I need: {join(draft.missing)}. Please give them."
        )
    lines = draft.args.get("items")
    if draft.warehouse and isinstance(lines, list) and "warehouse" in _line_fields(e):
        # Each line is for the warehouse named, as the form's "set warehouse" fills them.
        draft.args["items"] = [{**r, "warehouse": r.get("warehouse") or draft.warehouse}
                               for r in lines if isinstance(r, dict)]  # fmt: skip
    if person and person.get("leave_approver") and {"leave_type", "approver"} <= set(draft.props):
        # The employee's leave approver decides, as the leave form fills it.
        draft.args["approver"] = person["leave_approver"]
    return call(tool, draft.args)


@dataclass
class _Draft:
    """A new document's arguments, filled field by field from the request, the session and
    the ERP; what none of them gives is ``missing`` (and asked for)."""

    ctx: Ctx
    e: Entity
    props: dict[str, Any]
    names: list[str]
    wanted: list[tuple[float, str]]
    party: str | None
    person: dict[str, Any] | None  # the employee it is for
    args: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    warehouse: str | None = None  # the one warehouse named as where the goods are for

    def put(self, name: str, value: Any, wanting: str) -> None:
        if value is None:
            self.missing.append(wanting)
        else:
            self.args[name] = value

    def fill(self, name: str, f: Field) -> Step | None:
        if f.target == "employee":
            # Whose leave or claim: the one named, else the user's own employee record.
            self.put(name, self.person["id"] if self.person else None, "the employee it is for")
            return None
        if name == "party" or f.target in proposals.PARTY_KINDS:
            return self._party(name, f)
        if f.target == "company" or name == "company":
            if self.person and self.person.get("company"):
                self.args[name] = self.person["company"]  # the employee's, as the form fills it
                return None
            company, step = self.moved_between()
            if step is None and company is None:
                company, step = self.warehouse_company()
            if step is not None or company is not None:
                self.args[name] = company  # the warehouses', as the stock entry form fills it
                return step
            if self.party is not None and not any(
                k in self.args for k in ("party", *proposals.PARTY_KINDS)
            ):
                # The party first: the company its documents are in is the new one's.
                step = self.fill_said()
                if step is not None:
                    return step
            company, step = _company(self.ctx, self.e, self.args)
            self.args[name] = company
            return step
        if f.type is FieldType.TABLE:
            return self._table(name, f)
        if f.type is FieldType.ENUM and set(_PARTY_OF) <= set(f.values):
            return self._direction(name, f)
        if f.type is FieldType.LINK and not self.names and f.target in _SHORT_LISTS:
            # "annual leave": the one leave type the request names.
            found, step = write_fields.named_record(self.ctx, f.target)
            self.put(name, found, f.label.lower())
            return step
        self._plain(name, f)
        return None

    def fill_said(self) -> Step | None:
        """Fields a document need not have that the request names: a payment's party ("from
        Gulf Traders") and its mode of payment ("via M-Pesa"); the ERP fills the rest."""
        for name, f in self.e.fields.items():
            if f.required or name in self.args or name not in self.props:
                continue
            if (name == "party" or f.target in proposals.PARTY_KINDS) and self.party is not None:
                step = self._party(name, f)
            elif f.target in _SAID_OPTIONAL:
                found, step = write_fields.named_record(self.ctx, f.target)
                if found is not None:
                    self.args[name] = found
            else:
                continue
            if step is not None:
                return step
        return None

    def moved_between(self) -> tuple[str | None, Step | None]:
        """'Transfer 60 cartons from Kisumu Stores to Mombasa Stores': the two warehouses
        (found as the user can see them) and the one company both belong to."""
        m = _FROM_TO.search(self.ctx.req.text)
        if m is None or not {"from_warehouse", "to_warehouse"} <= set(self.props):
            return None, None
        said = [m.group(1).strip(), m.group(2).strip()]
        found, step = master_data.resolve(self.ctx, [("warehouse", w) for w in said], ["warehouse"])
        if step is not None or not all(w in found for w in said):
            return None, step
        places = [found[w][1] for w in said]
        self.args["from_warehouse"], self.args["to_warehouse"] = places
        return self._company_of(places)

    def _company_of(self, places: list[str]) -> tuple[str | None, Step | None]:
        """The one company these warehouses belong to (as the user sees them), or the look-up
        still to make."""
        query = {"filters": [{"field": "id", "op": "in", "value": places}],
                 "fields": ["id", "company"], "limit": len(places)}  # fmt: skip
        r = self.ctx.result("warehouse.list", query)
        if r is None:
            return None, call("warehouse.list", query)
        companies = {str(row.get("company")) for row in rows_of(r) if row.get("company")}
        return (companies.pop() if len(companies) == 1 else None), None

    def warehouse_company(self) -> tuple[str | None, Step | None]:
        """'A material request for 100 cartons for Nakuru Stores': the company of the one
        warehouse named (found as the user can see it)."""
        m = _AT_WAREHOUSE.search(self.ctx.req.text)
        if m is None:
            return None, None
        said = m.group(1).strip()
        parties = any(f.target in proposals.PARTY_KINDS for f in self.e.fields.values())
        if parties and self.party and said.lower() in self.party.lower():
            return None, None  # "for Chui Stores": the customer, not a warehouse
        found, step = master_data.resolve(self.ctx, [("warehouse", said)], ["warehouse"])
        if step is not None and not step.calls:
            return None, None  # only when found: "Stores" may end a customer's name too
        if step is not None or said not in found:
            return None, step
        self.warehouse = found[said][1]
        return self._company_of([self.warehouse])

    def _direction(self, name: str, f: Field) -> Step | None:
        """Whether money is received or paid: as said ("received", "pay"), else as the
        party named implies ("a payment from Gulf Traders", a customer: received)."""
        said = _enum_value(self.ctx, f.values, False)
        if said is not None or self.party is None:
            self.put(name, said, f.label.lower())
            return None
        kinds = [k for k in _PARTY_OF.values() if k in getattr(self.ctx.catalog, "dimensions", {})]
        found, step = master_data.resolve(self.ctx, [(None, self.party)], kinds)
        if step is not None:
            return step
        kind = found[self.party][0] if self.party in found else None
        self.put(name, next((v for v, k in _PARTY_OF.items() if k == kind), None), f.label.lower())
        return None

    def _party(self, name: str, f: Field) -> Step | None:
        # The party by name, found among the records the user can see (never the company).
        dimension = (
            f.target
            if f.target in proposals.PARTY_KINDS
            else str(
                self.args.get("quotation_to")
                or self.args.get("party_type")
                or _PARTY_OF.get(str(self.args.get("payment_type")), "customer")
            )
        )
        if "party_type" in self.props and name == "party":
            self.args.setdefault("party_type", dimension)
        if self.party is None:
            self.missing.append(f"the {dimension} it is for")
            return None
        party_id, step = write_names.resolve_party(self.ctx, self.party, dimension)
        self.args[name] = party_id
        return step

    def _table(self, name: str, f: Field) -> Step | None:
        ctx = self.ctx
        if _money_lines(f):
            # "KSh 1,800 for fuel from yesterday": one claim line from the sum and its purpose.
            claimed = write_fields.money_rows(ctx, f, ctx.req.period, ctx.view.today)
            self.put(name, claimed, f"{f.label.lower()} (what for and how much)")
            return None
        if self.wanted and not _needs_rate(self.props.get(name, {})):
            # Lines by item name or code; the ERP fills rates from the price list.
            rows, step = write_names.resolve_lines(ctx, self.wanted)
            self.args[name] = rows
            return step
        rows, step = _item_rows(ctx, f.fields, self.props.get(name, {}))
        if step is None:
            self.put(name, rows, f"{f.label.lower()} (item codes and quantities)")
        return step

    def _plain(self, name: str, f: Field) -> None:
        ctx = self.ctx
        if f.type is FieldType.ENUM:
            hit = _enum_value(ctx, f.values, bool(self.names or self.party)) or _named_value(ctx, f)
            if hit is None and {"from_warehouse", "to_warehouse"} <= set(self.args):
                # Goods moved from one warehouse to another: a transfer, whatever the verb.
                hit = next((v for v in f.values if "transfer" in v.lower()), None)
            hit = hit or write_fields.first_status(self.e, name, f) or f.default
            self.put(name, hit, f.label.lower())
        elif f.type is FieldType.MONEY and money_said(ctx.req.text) is not None:
            # "25,000 bob received from Gulf Traders": the sum the change is for.
            self.args[name] = float(money_said(ctx.req.text) or 0)
        elif f.type in (FieldType.DATE, FieldType.DATETIME):
            self.args[name] = write_fields.date_value(
                name, ctx.req.period, ctx.req.text, ctx.view.today
            )
        elif (
            f.type is FieldType.STRING or (f.type is FieldType.LINK and f.target != "account")
        ) and self.names:
            # A name said fills a name field; never an account (a party is not its ledger).
            self.args[name] = self.names[0]
        else:
            self.missing.append(f.label.lower())


def _line_fields(e: Entity) -> set[str]:
    items = e.fields.get("items")
    return set(items.fields) if items is not None else set()


# Whom money received comes from, and paid goes to, when the request does not say.
_PARTY_OF = {"Receive": "customer", "Pay": "supplier"}
# Links a document need not have, filled when the request names one of their few records.
_SAID_OPTIONAL = ("mode_of_payment",)
# Links to kinds of record few enough to read whole and match by their words.
_SHORT_LISTS = ("leave_type", "mode_of_payment", "department", "designation")


def _person(
    ctx: Ctx, e: Entity, required: list[str], names: list[str]
) -> tuple[dict[str, Any] | None, Step | None]:
    """The employee a new leave application or claim is for: one named, else the user."""
    if not any(getattr(e.fields.get(n), "target", None) == "employee" for n in required):
        return None, None
    if names:  # "leave for Kevin Mwangi, I'm his manager": Kevin's
        return own_employee.named(ctx, names[0])
    lowered = write_names.lowercase_for(ctx)
    if lowered:  # "leave for otieno wafula": typed in lower case, still someone named
        return own_employee.named(ctx, lowered[0])
    return own_employee.own(ctx)


def _records_a_day(e: Entity, statuses: list[str], names: list[tuple[str | None, str]]) -> bool:
    """Whether marking a named employee with a status records it anew: the records are an
    employee's status for a day (attendance), not documents with a life of their own."""
    employee = e.fields.get("employee")
    status = e.fields.get(e.status_field or "")
    return (
        bool(names and statuses)
        and employee is not None
        and employee.required
        and status is not None
        and status.required
        and not status.read_only
        and e.date_field is not None
        and not {"to_date", "end_date"} & set(e.fields)  # one day each, not a span (leave)
        and all(s in status.values for s in statuses)
    )


def _money_lines(f: Field) -> bool:
    """A table of sums (a claim's expenses), not of items."""
    return "item" not in f.fields and any(
        sub.type is FieldType.MONEY and sub.required for sub in f.fields.values()
    )


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
        company, step = proposals.party_company(ctx, e, args)
        if step is not None or company is not None:
            return company, step
    return company_step(ctx)


def _enum_value(ctx: Ctx, values: tuple[str, ...], party_named: bool) -> str | None:
    # A value said as a word, inflected or not ("received" is Receive; "payment" is not Pay).
    text = ctx.req.text.lower()
    hit = next(
        (
            v
            for v in values
            if re.search(rf"\b{re.escape(v.lower().rstrip('e'))}(?:e|es|ed|ing|s)?\b", text)
        ),
        None,
    )
    # A quotation's party kind: the request names a party to sell to, i.e. a customer.
    return hit or ("customer" if "customer" in values and party_named else None)


def _named_value(ctx: Ctx, f: Field) -> str | None:
    """An enum value said by one of its everyday names ("stock transfer": Material Transfer)."""
    low = ctx.req.text.lower()
    said = [v for v, names in f.value_names.items()
            if any(re.search(rf"\b{re.escape(n.lower())}\b", low) for n in names)]  # fmt: skip
    return said[0] if len(said) == 1 else None


# "from Kisumu Stores to Mombasa Stores": where goods leave and where they arrive.
# A warehouse named as where the goods are for ("for nakuru stores", "into the Mombasa store").
_AT_WAREHOUSE = re.compile(
    r"\b(?:for|at|to|into|in)\s+(?:the\s+)?((?:[a-z][\w&'\-]*\s+){1,3}(?:stores?|warehouse))\b",
    re.IGNORECASE,
)
_FROM_TO = re.compile(
    r"\bfrom\s+(?:the\s+)?(.+?)\s+(?:to|into)\s+(?:the\s+)?(.+?)"
    r"(?=\s*(?:[,.;!?]|$)|\s+(?:today|tomorrow|please|pls|asap|on|by|for)\b)",
    re.IGNORECASE,
)


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
