"""Filters from what a request says: statuses, enum values, periods, ages, amounts, the
company in play and the names it mentions (probed where they could live, looked up in the
master data when typed in lower case)."""

from __future__ import annotations

import datetime as dt
import itertools
import re
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.planner import master_data, vocabulary
from erp_agent.planner.answer import capabilities, is_number
from erp_agent.planner.context import Result
from erp_agent.planner.reading import Kind
from erp_agent.planner.steps import Call, Ctx, Filter, Step, say
from erp_agent.planner.terms import message_saying, norm

_PARTY_ENTITIES = ("customer", "supplier", "employee", "lead")
_PLACE_FIELDS = ("branch", "territory", "country", "customer_group", "supplier_group", "warehouse", "project",
                 "department", "cost_center", "item_group", "company")  # fmt: skip


def base_filters(ctx: Ctx, e: Entity) -> tuple[list[Filter], str | None]:
    """Filters from statuses, enums, dates, age and amount; or a reason they cannot be applied."""
    req = ctx.req
    out: list[Filter] = []
    fields = e.fields
    overdue = _overdue_by_dates(e, req.statuses)
    if overdue:
        # Overdue means money still owed past its due date, whatever status the document
        # shows (a partly paid invoice past due is overdue too): the ERP's own ageing reads it so.
        out += [{"field": "outstanding", "op": ">", "value": 0},
                {"field": "due_date", "op": "<", "value": ctx.view.today.isoformat()}]  # fmt: skip
        rest = [s for s in req.statuses if s not in OWED_STATUSES]
        if rest and e.status_field:
            out.append(value_filter(e.status_field, rest))
    elif req.statuses and e.status_field:
        out.append(value_filter(e.status_field, req.statuses))
    for name, values in req.enum_filters.items():
        out.append(value_filter(name, values))
    out += [{"field": name, "op": "=", "value": int(on)} for name, on in req.flags.items()]
    out += [{"field": name, "op": "<=", "value": 0} for name in req.nil_fields]
    if req.period is not None and e.date_field and req.kind not in (Kind.TREND,):
        out.append({"field": _dated_by(e, req.text), "op": "between",
                    "value": [req.period.start.isoformat(), req.period.end.isoformat()]})  # fmt: skip
    elif req.period is not None and req.kind not in (Kind.TREND,):
        # Records with no business date ("new customers this year"): when they were created,
        # as ERPNext's own "creation" filter; a period is never dropped in silence.
        created = fields.get("created")
        if created is None or not created.filterable:
            return out, f"{e.plural} have no date I can filter on"
        after = req.period.end + dt.timedelta(days=1)
        out += [{"field": "created", "op": ">=", "value": req.period.start.isoformat()},
                {"field": "created", "op": "<", "value": after.isoformat()}]  # fmt: skip
    if req.age_days is not None:
        if "due_date" not in fields or not fields["due_date"].filterable:
            return out, f"{e.plural} have no due date I can filter on"
        cutoff = ctx.view.today - dt.timedelta(days=req.age_days)
        out = [f for f in out if not (f["field"] == "due_date" and f["op"] == "<")]
        out.append({"field": "due_date", "op": "<", "value": cutoff.isoformat()})
        if req.age_until is not None:
            # "1-30 days overdue": the bucket's far end too.
            first = ctx.view.today - dt.timedelta(days=req.age_until)
            out.append({"field": "due_date", "op": ">=", "value": first.isoformat()})
        if not overdue and "outstanding" in fields and fields["outstanding"].filterable:
            out.append({"field": "outstanding", "op": ">", "value": 0})
            req.statuses = req.statuses or ["Overdue"]
        elif (
            not overdue
            and e.status_field
            and not req.statuses
            and "Overdue" in fields[e.status_field].values
        ):
            req.statuses = ["Overdue"]
            out.append(value_filter(e.status_field, ["Overdue"]))
    if req.amount is not None:
        owed = any(
            w in norm(req.text) for w in (" owe", " owes ", " outstanding ", " unpaid ", " due ")
        )
        candidates = (["outstanding"] if owed else []) + [e.amount_field or "", "outstanding"]
        target = next((n for n in candidates if n in fields and fields[n].filterable), None)
        if target is None:
            return out, f"I can't filter {e.plural.lower()} by amount with the tools available"
        out.append({"field": target, "op": req.amount.op, "value": float(req.amount.value)})
    if ctx.view.company and "company" in fields and fields["company"].filterable:
        out.append({"field": "company", "op": "=", "value": ctx.view.company})
    return out, None


# "Invoices that fall due next week", "bills due in the next 14 days": the period is of the
# due date, not of the posting date.
_FALLING_DUE = re.compile(
    r"\b(?:falls?|falling|fell|comes?|coming|become|becomes|becoming)\s+due\b"
    r"|\bdue\s+(?:in|on|by|before|within|during|over|this|next|between|from|for)\b|\bdue dates?\b"
)


def _dated_by(e: Entity, text: str) -> str:
    """The date field a period in the request is of."""
    due = e.fields.get("due_date")
    if due is not None and due.filterable and _FALLING_DUE.search(text.lower()):
        return "due_date"
    return e.date_field or ""


# Statuses that only say money is still owed: read from the amounts and dates instead.
OWED_STATUSES = ("Overdue", "Unpaid", "Partly Paid")


def _overdue_by_dates(e: Entity, statuses: list[str]) -> bool:
    """Whether the statuses ask for what is overdue and the records carry what decides it."""
    fields = e.fields
    has = all(n in fields and fields[n].filterable for n in ("outstanding", "due_date"))
    return has and statuses == ["Overdue"]


def value_filter(name: str, values: list[str]) -> Filter:
    if len(values) == 1:
        return {"field": name, "op": "=", "value": values[0]}
    return {"field": name, "op": "in", "value": list(values)}


_ORGANISATION_FIELDS = ("organization", "organisation", "company_name")


def name_candidates(e: Entity, hint: str | None, value: str) -> list[Filter]:
    """Where a name could live on this entity, most likely first."""
    fields = e.fields
    if hint and hint in fields:
        return [{"field": hint, "op": "=", "value": value}]
    out: list[Filter] = []
    title = e.title_field
    if e.kind.value == "master" and title is not None and title.filterable:
        # A master named by its name ("customer Acme Ltd"): its own title first.
        out.append({"field": title.name, "op": "like", "value": f"%{value}%"})
    for name in _ORGANISATION_FIELDS:
        # "A lead from Duma Ventures": the organisation a person's record is of.
        if name in fields and fields[name].filterable:
            out.append({"field": name, "op": "like", "value": f"%{value}%"})
    for name, f in fields.items():
        if not f.filterable:
            continue
        if f.target in _PARTY_ENTITIES or name == "party":
            named = f"{name}_name" if f"{name}_name" in fields else None
            if named and fields[named].filterable:
                out.append({"field": named, "op": "like", "value": f"%{value}%"})
            else:
                out.append({"field": name, "op": "=", "value": value})
    company = fields.get("company")
    if company is not None and company.filterable:
        # "Harbor Goods" for Harbor Goods Inc: a company is named by the start of its name.
        out.append({"field": "company", "op": "like", "value": f"{value}%"})
    # A place or group typed in lowercase ("wholesale customers") matches its name in any case.
    op = "like" if value == value.lower() else "="
    for place in _PLACE_FIELDS:
        f2 = fields.get(place)
        if f2 is not None and f2.filterable and place == "warehouse":
            # ERPNext names a warehouse "<name> - <company abbr>": "Mombasa" is its start.
            out.append({"field": place, "op": "like", "value": f"{value}%"})
        elif f2 is not None and f2.filterable and place != "company":
            out.append({"field": place, "op": op, "value": value})
    if not out and title is not None and title.filterable:
        out.append({"field": title.name, "op": "like", "value": f"%{value}%"})
    return out[:5]


def probe_for(ctx: Ctx, e: Entity, flt: Filter) -> tuple[str, dict[str, Any]] | None:
    if ctx.has(f"{e.name}.count"):
        return f"{e.name}.count", {"filters": [flt]}
    if ctx.has(f"{e.name}.list"):
        return f"{e.name}.list", {"filters": [flt], "fields": ["id"], "limit": 1}
    return None


def found_any(r: Result) -> bool:
    data = r.data
    if isinstance(data, dict):
        if is_number(data.get("count")):
            return bool(data["count"])
        return bool(data.get("records") or data.get("rows"))
    return False


def name_filters(ctx: Ctx, e: Entity) -> tuple[list[Filter], Step | None]:
    """Filters for the names the request mentions; probing where a name could belong."""
    out: list[Filter] = []
    pending: list[Call] = []
    said_by: list[str] = []  # the name each filter is for, in step with ``out``
    before = ""
    for hint, value in ctx.req.names:
        said_by += [before] * (len(out) - len(said_by))
        before = value
        if hint == "company" and "company" in e.fields:
            # "The Kenyan company", "the Kenya side": the one company in that country.
            company, lookup = master_data.by_country(ctx, value)
            if lookup is not None:
                pending.append(lookup)
                continue
            if company is not None:
                out.append({"field": "company", "op": "=", "value": company})
                # The answer names the company, not the word that led to it.
                ctx.req.names = [(h, company if v == value else v) for h, v in ctx.req.names]
                continue
        options = name_candidates(e, hint, value)
        if re.search(rf"\b(?:based|located|registered|situated)\s+in\s+(?:the\s+)?{re.escape(value)}\b",
                     ctx.req.text, re.I):  # fmt: skip
            # "Suppliers based in Kenya": a place, tried before any record named like it.
            options.sort(key=lambda o: o["field"] not in _PLACE_FIELDS)
        if not options:
            continue
        if len(options) == 1:
            out.append(options[0])
            continue
        probes = [(o, probe_for(ctx, e, o)) for o in options]
        if any(p is None for _, p in probes):
            out.append(options[0])
            continue
        answered = [(o, ctx.result(p[0], p[1])) for o, p in probes if p is not None]
        missing = [
            Call(*p) for (o, p), (_, r) in zip(probes, answered, strict=True) if r is None and p
        ]
        if missing:
            pending += missing
            continue
        hit = next((o for o, r in answered if r is not None and r.ok and found_any(r)), None)
        if hit is None:
            return out, say(
                f"No records found: I found no {e.plural.lower()} for {value} that you can see."
            )
        out.append(hit)
    said_by += [before] * (len(out) - len(said_by))
    kept = _newest_of_each_field(ctx.req.text, out, said_by)
    if len(kept) < len(out):
        # The names replaced are not said in the answer either.
        gone = {n for f, n in zip(out, said_by, strict=True) if n and f not in kept}
        ctx.req.names = [(h, v) for h, v in ctx.req.names if v not in gone]
    return kept, (Step(calls=pending) if pending else None)


def _newest_of_each_field(text: str, out: list[Filter], said_by: list[str]) -> list[Filter]:
    """'ok and mombasa' after 'staff in kisumu', 'same for harbor goods': a follow-up's name
    replaces the earlier one on the same field (follow-ups are joined with " ; ")."""
    segments = [seg.lower() for seg in text.split(" ; ")]
    if len(segments) < 2:
        return out
    at = [message_saying(segments, name) if name else 0 for name in said_by]
    newest: dict[str, int] = {}
    for f, i in zip(out, at, strict=True):
        if f.get("op") == "=":
            newest[str(f["field"])] = max(newest.get(str(f["field"]), 0), i)
    return [f for f, i in zip(out, at, strict=True)
            if f.get("op") != "=" or i == newest[str(f["field"])]]  # fmt: skip


LOOSE_DIMENSIONS = ("customer", "supplier", "item", "warehouse", "branch", "territory")


def lookup_loose_names(ctx: Ctx) -> Step | None:
    """Lowercase words no vocabulary holds ("mombasa invoices"): looked up in the master data
    and kept as names when found there; otherwise the request is not answered without them."""

    req = ctx.req
    said = " ".join(v.lower() for _, v in req.names) + " " + " ".join(req.settled).lower()
    loose = [n for n in vocabulary.loose_names(req.text, ctx.catalog) if n.lower() not in said]
    if not loose:
        return None
    # The groups the records themselves are filed under too ("how many are wholesale?" of
    # customers is their customer group).
    known = getattr(ctx.catalog, "dimensions", {}) or {}
    own = [f.target for f in req.entity.fields.values()
           if f.filterable and f.target in known] if req.entity else []  # fmt: skip
    dims = list(dict.fromkeys([*LOOSE_DIMENSIONS, *(t for t in own if t)]))
    loose, step = _rest_of_names(ctx, loose, dims)
    if step is not None or not loose:
        return step
    found, step = master_data.resolve(ctx, [(None, n) for n in loose], dims, loose)
    if step is not None:
        return step
    for _name, (dim, record) in found.items():
        # The record as the ERP names it ("mombasa" is the branch Mombasa): filters match ids.
        req.names.append((dim if req.entity and dim in req.entity.fields else None, record))
    req.settled += loose
    return None


def _rest_of_names(ctx: Ctx, loose: list[str], dims: list[str]) -> tuple[list[str], Step | None]:
    """The loose words left once the names said just before them are found: "hardware" of
    "Jambo hardware" is the rest of Jambo Hardware & Tools' name, not a name of its own. A
    name found nowhere, or fitting several records, is left to the name filters to report."""
    text = ctx.req.text
    before = [v for _, v in ctx.req.names
              if any(re.search(rf"\b{re.escape(v)}\s+{re.escape(n)}\b", text, re.I) for n in loose)]  # fmt: skip
    if not before:
        return loose, None
    found, step = master_data.resolve(ctx, [(None, v) for v in before], dims)
    if step is not None and step.calls and all(c.name.endswith(".list") for c in step.calls):
        return loose, step  # the look-ups still to make
    records = [record for _, record in found.values()]
    return [n for n in loose if not any(master_data.holds(r, n) for r in records)], None


# "Did my last leave request get approved or is it still pending?", "status of my claim": the
# state is what is asked, so no state filters the records and drafts are among them.
_STATE_ASKED = re.compile(
    r"\b(?:status|state)\s+(?:of|on)\b|\bwhat(?:'s| is) the (?:status|state)\b"
    r"|\b(?:approved|rejected|paid|accepted|submitted|cancelled|signed off)\s+or\b"
    r"|\bor\s+(?:is\s+it\s+|was\s+it\s+)?(?:still\s+)?(?:pending|open|waiting|outstanding)\b",
    re.IGNORECASE,
)
_OWN = re.compile(r"\b(?:my|mine)\b", re.IGNORECASE)


def state_asked(text: str) -> bool:
    return bool(_STATE_ASKED.search(text))


def documents_wanted(ctx: Ctx, e: Entity) -> dict[str, str]:
    """The list argument that lets drafts in: when the state is asked, or the user's own
    records are listed ("my expense claims": the draft waiting is one of them)."""
    text = ctx.req.text.split(" ; ")[-1]
    if "docstatus" not in e.fields or not (state_asked(text) or _OWN.search(text)):
        return {}
    return {"documents": "all"}


def all_filters(ctx: Ctx, e: Entity) -> tuple[list[Filter], Step | None]:
    if state_asked(ctx.req.text.split(" ; ")[-1]):
        ctx.req.statuses = []  # which state it is in is the question, not a filter
    if ctx.req.compared_field:
        label = e.fields[ctx.req.compared_field].label.lower()
        return [], say(
            f"I can't compare {e.plural.lower()} against their {label} with the tools available, "
            f"so I won't guess which ones qualify. {capabilities(e, ctx.tools)}"
        )
    step = lookup_loose_names(ctx)
    if step is not None:
        return [], step
    base, problem = base_filters(ctx, e)
    if problem:
        return [], say(
            f"{problem[0].upper()}{problem[1:]}, so I won't guess an answer. {capabilities(e, ctx.tools)}"
        )
    named, step = name_filters(ctx, e)
    if step is not None:
        return base + named, step
    described, step = _described(ctx, e)
    return base + named + described, step


def _described(ctx: Ctx, e: Entity) -> tuple[list[Filter], Step | None]:
    """'Looking for an item, it's a tape measure of some sort': everyday words left over in a
    search for master records, looked for in their names; those some record's name holds
    become filters (the rest stay left out, and the reading says so)."""
    req, title = ctx.req, e.title_field
    count = f"{e.name}.count"
    if (req.kind not in (Kind.LIST, Kind.FIND) or e.kind.value != "master" or title is None
            or not title.filterable or req.names or not ctx.has(count)):  # fmt: skip
        return [], None
    left = [*req.ignored, *vocabulary.filler_words(req.text, ctx.catalog)]
    words = [w for w in dict.fromkeys(left) if len(w) > 3 and w.isalpha() and w not in req.settled]
    if not words:
        return [], None
    # A word with the one after it ("tape measure") is tried too: the longer phrase that some
    # name holds is the description.
    tokens = re.findall(r"[a-z]+", req.text.lower())
    after = {t: n for t, n in itertools.pairwise(tokens) if n not in vocabulary.GRAMMAR}
    phrases = [p for w in words for p in ([f"{w} {after[w]}"] if w in after else []) + [w]]
    calls = [
        (w, Call(count, {"filters": [{"field": title.name, "op": "like", "value": f"%{w}%"}]}))
        for w in phrases
    ]
    pending = [c for _, c in calls if ctx.result(c.name, c.args) is None]
    if pending:
        return [], Step(calls=pending)
    kept: list[str] = []
    for phrase, c in calls:
        r = ctx.result(c.name, c.args)
        found = r is not None and r.ok and found_any(r)
        if found and not any(phrase in k for k in kept):
            kept.append(phrase)
    said = {w for k in kept for w in k.split()}
    req.ignored = [w for w in req.ignored if w not in said]
    req.settled += sorted(said)  # words of the names asked for, not words left out
    return [{"field": title.name, "op": "like", "value": f"%{w}%"} for w in kept], None
