"""'Who is info@equatorlogistics.co.ke?', 'which customer has the phone number 0722 802 476?',
"who's Megan Johnson?": the contacts, customers and suppliers an email address, a phone number
or a person's name in the question belongs to. An email is matched whole (any case); a phone by its last nine digits, so
"0722 802 476" finds "+254 722802476" as the ERP stores it."""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner.answer import join
from erp_agent.planner.steps import Call, Ctx, Step, call, rows_of, say

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# Eight digits or more, spaced or not, with no letter or hyphen joined on (not "INV-44035").
_PHONE = re.compile(r"(?<![\w/.-])\+?\d[\d ()]{6,}\d(?![\w/.-])")
_PHONE_WORDS = re.compile(
    r"\b(phone|mobile|tel|telephone|cell|number|whatsapp|call(?:ed|s)?)\b", re.I
)
_PHONE_DIGITS = 9  # the subscriber part, without a country or trunk prefix
# (entity, field) pairs an email or a phone is looked up in, in this order.
_EMAIL_FIELDS = [("contact", "email"), ("customer", "email"), ("supplier", "email")]
_PHONE_FIELDS = [("contact", "mobile"), ("contact", "phone"), ("customer", "mobile")]
_PERSON_FIELDS = [("contact", "full_name")]
_PARTY_FIELDS = [("contact", "organization")]
_SHOWN = {
    "contact": ["id", "full_name", "organization", "linked_type", "linked_id", "email", "phone",
                "mobile"],
    "customer": ["id", "name", "email", "mobile"],
    "supplier": ["id", "name", "email"],
}  # fmt: skip


# A person asked about by name: "who's Megan Johnson?", "Dennis Mwangi's mobile number", "the
# email of Grace Otieno". Two or three capitalised words make the name.
_PERSON = r"([A-Z][a-z]+(?:[ '-][A-Z][a-z]+){1,2})"
_PERSON_ASKED = [
    re.compile(rf"\bwho(?:'s| is| was)\s+{_PERSON}\b"),
    re.compile(
        rf"\b{_PERSON}'s\s+(?:\w+\s+)?(?:phone|mobile|cell|email|e-mail|number|contact|details|company)\b"
    ),
    re.compile(
        rf"\b(?:phone|mobile|cell|email|e-mail|number|contact details|details)\s+(?:of|for)\s+{_PERSON}\b"
    ),
    # "Which supplier is Otieno Chepkoech from?": whose contact the person is.
    re.compile(
        rf"\b(?:which|what)\s+(?:supplier|customer|company|vendor|client|firm)\s+(?:is|does)\s+{_PERSON}\b"
    ),
]
# The people at a customer or supplier: "who do we deal with over at chui stores?", "our
# contact at Gulf Traders", "who's the contact person for acme?".
_AT_PARTY = re.compile(
    r"\b(?:who (?:do|should|can|would) (?:we|i) (?:deal|talk|speak|work) with|contacts?(?: person| people)?"
    r"|who(?:'s| is) (?:our|the) (?:contact|person|guy|lady|man|woman))\s+(?:over\s+)?(?:at|in|from|for|with)"
    r"\s+(?:the\s+)?([a-z0-9][\w&.' -]{2,40}?)\s*(?=[?.!,;]|\s+-\s|\s+(?:need|and|please|pls)\b|$)",
    re.IGNORECASE,
)


def person(text: str) -> str | None:
    """The person a question asks about by name, if it asks about one."""
    for pattern in _PERSON_ASKED:
        m = pattern.search(text)
        if m:
            return m.group(1)
    return None


def said(text: str) -> tuple[str, str, str] | None:
    """('email', address, as typed), ('phone', digits, as typed) or ('person', name, name) the
    text holds, if any."""
    email = _EMAIL.search(text)
    if email:
        typed = email.group(0).strip(".")
        return "email", typed.lower(), typed
    cued = bool(_PHONE_WORDS.search(text))
    for m in _PHONE.finditer(text):
        typed = m.group(0).strip()
        digits = re.sub(r"\D", "", typed)
        groups = re.findall(r"\d+", typed.lstrip("+"))
        # A number as people write a phone: its groups of three digits or more ("0722 802
        # 476"), from a trunk 0 or a +, or said to be one; not "30 60 90 120".
        looks = all(len(g) >= 3 for g in groups[1 if typed.startswith("+") else 0 :])
        if len(digits) >= 9 and looks and (cued or typed[0] in "+0"):
            return "phone", digits, typed
    name = person(text)
    if name:
        return "person", name, name
    at = _AT_PARTY.search(text)
    return ("party", at.group(1).strip(), at.group(1).strip()) if at else None


def applies(ctx: Ctx) -> bool:
    req = ctx.req
    return not req.doc_ids and req.change is None and said(req.text) is not None


def _calls(ctx: Ctx, kind: str, value: str) -> list[Call]:
    pairs = {"email": _EMAIL_FIELDS, "phone": _PHONE_FIELDS, "person": _PERSON_FIELDS,
             "party": _PARTY_FIELDS}[kind]  # fmt: skip
    # A phone's digits in order, whatever stands between them ("+254 722 802 476" as stored);
    # the rows are then held to those digits exactly (``_same_phone``).
    pattern = {
        "email": value,
        "phone": "%" + "%".join(value[-_PHONE_DIGITS:]) + "%",
        "person": f"%{value}%",
        "party": f"%{value}%",
    }[kind]
    calls = []
    for entity, name in pairs:
        spec = ctx.catalog.entities.get(entity)
        if spec is None or name not in spec.fields or not ctx.has(f"{entity}.list"):
            continue
        fields = [f for f in _SHOWN[entity] if f == "id" or f in spec.fields]
        flt = {"field": name, "op": "like", "value": pattern}
        calls.append(Call(f"{entity}.list", {"filters": [flt], "fields": fields, "limit": 20}))
    return calls


def handle(ctx: Ctx) -> Step | None:
    found = said(ctx.req.text)
    if found is None:
        return None
    kind, value, typed = found
    if typed not in ctx.req.settled and kind != "person":
        ctx.req.settled.append(typed)  # its words are the address, not words left out
    calls = _calls(ctx, kind, value)
    if not calls:
        return None
    pending = [c for c in calls if ctx.result(c.name, c.args) is None]
    if pending:
        return Step(calls=pending)
    lines: list[str] = []
    picked = {v for h, v in ctx.req.names if h == "contact"}
    for c in calls:
        r = ctx.result(c.name, c.args)
        if r is None or not r.ok:
            continue
        entity = c.name.removesuffix(".list")
        rows = [
            row
            for row in rows_of(r)
            if kind != "phone" or _same_phone(row, c.args["filters"][0]["field"], value)
        ]
        if entity == "contact" and kind == "person":
            rows = [row for row in rows if not picked or str(row.get("id")) in picked]
            step = _which_person(ctx, value, rows)
            if step is not None:
                return step
        lines += [_line(entity, row) for row in rows]
    lines = list(dict.fromkeys(lines))
    if not lines and kind in ("person", "party"):
        return None  # not a contact's name: the question is read another way
    if not lines:
        return say(f"No contact, customer or supplier you can see has the {kind} {typed}.")
    return say("\n".join(f"- {line}" for line in lines))


# One detail of a person asked ("Dennis Mwangi's mobile"), not who they are.
_ONE_DETAIL = re.compile(r"\b(phone|mobile|cell|email|e-mail|number|whatsapp|extension)\b", re.I)


def _which_person(ctx: Ctx, name: str, rows: list[dict[str, Any]]) -> Step | None:
    """Two people of one name, one detail asked: which of them is meant (their firms tell
    them apart). Asking who someone is shows every one of that name."""
    same = [r for r in rows if str(r.get("full_name") or "").lower() == name.lower()]
    if len(same) < 2 or not _ONE_DETAIL.search(ctx.req.text):
        return None
    options = [
        {"label": f"{name} of {r.get('linked_id') or r.get('organization') or r.get('id')}",
         "value": str(r.get("id"))}
        for r in same[:8]
    ]  # fmt: skip
    question = f"There are {len(same)} contacts named {name}. Which one do you mean?"
    if ctx.has("display.choices") and ctx.result("display.choices") is None:
        slot = f"name:contact:{name}"[:60]
        return call("display.choices", {"question": question, "options": options, "slot": slot})
    return say(question + " " + ", ".join(o["label"] for o in options) + ".")


def _same_phone(row: dict[str, Any], field: str, digits: str) -> bool:
    stored = re.sub(r"\D", "", str(row.get(field) or ""))
    return len(stored) >= 8 and stored[-_PHONE_DIGITS:] == digits[-_PHONE_DIGITS:]


def _line(entity: str, row: dict[str, Any]) -> str:
    reach = join([f"{k} {row[k]}" for k in ("email", "phone", "mobile") if row.get(k)], "and")
    if entity == "contact":
        who = str(row.get("full_name") or row.get("id"))
        owner = (
            f" of {row.get('linked_type')} {row.get('linked_id')}"
            if row.get("linked_id")
            else (f" of {row['organization']}" if row.get("organization") else "")
        )
        return f"Contact {who}{owner}: {reach}"
    return f"{entity.capitalize()} {row.get('name') or row.get('id')}: {reach}"
