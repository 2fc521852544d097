"""A scanned document → a draft Purchase Invoice (or Sales Order) proposal, through the gateway.

    documents.scan (read the file) → <party>.list, item.list, company.list (as the user)
    → <entity>.create (a proposal: nothing is written until the user confirms it)

Every step is a gateway call in the user's session, so the user's tool grants and the ERP's
permissions apply exactly as if they had asked in chat. Names are matched with rapidfuzz;
a match below ``SURE`` is used but flagged, one below ``MAYBE`` is left out and flagged. What
the parser doubted (an OCR'd digit, totals that do not add up) is flagged too.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from erp_agent.calls.outcome import ChoiceOption, Choices, Outcome, ProposalView, Status
from erp_agent.calls.session import Session
from erp_agent.gateway.gateway import Gateway

SURE = 92.0  # a name this close is the same name (case, punctuation, one OCR'd letter)
MAYBE = 72.0  # below this a candidate is not taken at all
AMBIGUOUS_GAP = 8.0  # a rival this close to the best match makes the party a choice
_PARTY = {"purchase_invoice": "supplier", "sales_order": "customer"}
_LABEL = {"purchase_invoice": "Purchase Invoice", "sales_order": "Sales Order"}


@dataclass
class Flag:
    field: str
    level: str  # "unmatched" (left out or missing) | "uncertain" (used, please check)
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "level": self.level, "message": self.message}


@dataclass
class ScanResult:
    """What a scan produced: the fields read, the values proposed and what needs a look."""

    ok: bool
    message: str
    entity: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)
    matches: dict[str, Any] = field(default_factory=dict)
    extraction: dict[str, Any] = field(default_factory=dict)
    document: dict[str, Any] = field(default_factory=dict)
    proposal: ProposalView | None = None
    choices: Choices | None = None  # the party to choose, when several records fit
    unreadable: bool = False  # the file itself was refused (the message says what to send)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "message": self.message,
            "entity": self.entity,
            "values": self.values,
            "flags": [f.as_dict() for f in self.flags],
            "matches": self.matches,
            "extraction": self.extraction,
            "document": self.document,
            "proposal": self.proposal,
            "choices": self.choices,
        }


def _normal(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _score(read: str, *names: str) -> float:
    read_n = _normal(read)
    return max((fuzz.token_sort_ratio(read_n, _normal(n)) for n in names if n), default=0.0)


class _Lookup:
    """ERP reads for one scan, each a gateway call as the user."""

    def __init__(self, gateway: Gateway, session: Session) -> None:
        self.gateway, self.session = gateway, session
        self.refusals: list[str] = []

    async def records(
        self, entity: str, filters: list[dict[str, Any]], limit: int = 50
    ) -> list[dict[str, Any]]:
        outcome = await self.gateway.call(
            self.session, f"{entity}.list", {"filters": filters, "limit": limit}
        )
        if outcome.status is not Status.OK:
            self.refusals.append(outcome.message)
            return []
        records = outcome.data.get("records") if isinstance(outcome.data, dict) else None
        return list(records or [])

    async def candidates(self, entity: str, field_name: str, text: str) -> list[dict[str, Any]]:
        """Records whose ``field_name`` shares a word with ``text`` (a few like-filters)."""
        words = sorted(set(re.findall(r"[A-Za-z0-9]{3,}", text)), key=len, reverse=True)[:4]
        found: dict[str, dict[str, Any]] = {}
        for word in words:
            filters = [{"field": field_name, "op": "like", "value": f"%{word}%"}]
            for record in await self.records(entity, filters):
                found.setdefault(str(record.get("id")), record)
        return list(found.values())


def _best(
    read: str, records: list[dict[str, Any]], *keys: str
) -> tuple[dict[str, Any] | None, float]:
    scored = [(_score(read, *(str(r.get(k) or "") for k in keys)), r) for r in records]
    scored.sort(key=lambda pair: -pair[0])
    if not scored:
        return None, 0.0
    return scored[0][1], scored[0][0]


async def _party(
    look: _Lookup, entity: str, doc: dict[str, Any], flags: list[Flag]
) -> dict[str, Any]:
    label = entity.replace("_", " ").capitalize()
    scored: dict[str, tuple[float, dict[str, Any], str]] = {}
    for name in doc["party_candidates"]:
        for record in await look.candidates(entity, "name", name):
            score = _score(name, str(record.get("name") or ""), str(record.get("id") or ""))
            key = str(record.get("id"))
            if score > scored.get(key, (-1.0, {}, ""))[0]:
                scored[key] = (score, record, name)
        if any(score >= SURE for score, _, _ in scored.values()):
            break
    ranked = sorted(scored.values(), key=lambda t: -t[0])
    score, record, read = ranked[0] if ranked else (0.0, {}, "")
    if not record or score < MAYBE:
        printed = read or doc["party"]["value"] or "no name"
        flags.append(
            Flag(
                label, "unmatched", f"“{printed}” is not a {label.lower()} you can see in the ERP."
            )
        )
        return {"read": printed, "id": None, "score": round(score, 1)}
    # Two records that the printed name fits about equally well: the user chooses; the best
    # is only the starting point of the draft, flagged, never a silent guess.
    rivals = [
        {"id": r["id"], "name": r.get("name"), "score": round(s, 1)}
        for s, r, _ in ranked[1:6]
        if score < 100.0 and s >= max(MAYBE, score - AMBIGUOUS_GAP)
    ]
    if rivals:
        names = ", ".join(str(r["id"]) for r in rivals)
        flags.append(
            Flag(
                label,
                "uncertain",
                f"read “{read}”: it fits {record['id']} ({score:.0f}% alike) and also {names}; "
                "choose the right one.",
            )
        )
    elif score < SURE or doc["party"].get("doubt"):
        flags.append(
            Flag(
                label,
                "uncertain",
                f"read “{read}”, matched to {record['id']} ({score:.0f}% alike).",
            )
        )
    return {
        "read": read, "id": record["id"], "name": record.get("name"), "score": round(score, 1),
        "alternatives": rivals,
    }  # fmt: skip


def party_choices(result: ScanResult) -> Choices | None:
    """A ``choices`` block for a party the printed name fits several records of: each option
    edits the draft's party (a new proposal, re-filled by the ERP), nothing else."""
    party = result.matches.get("party") or {}
    rivals = party.get("alternatives") or []
    if not rivals or result.proposal is None or result.entity is None:
        return None
    label = _PARTY[result.entity]
    options: list[ChoiceOption] = [
        {
            "label": str(c["id"])
            if c.get("name") in (None, c["id"])
            else f"{c['name']} ({c['id']})",
            "value": str(c["id"]),
            "edit": {"proposal": result.proposal["id"], "party": str(c["id"])},
        }
        for c in [{"id": party["id"], "name": party.get("name")}, *rivals]
    ]
    return {
        "type": "choices",
        "question": f"Which {label} is “{party['read']}”? The draft uses {party['id']}.",
        "options": options,
        "slot": f"scan:{label}",
    }


async def _items(
    look: _Lookup, rows: list[dict[str, Any]], flags: list[Flag]
) -> list[dict[str, Any]]:
    codes = sorted({r["code"] for r in rows if r.get("code")})
    exact: dict[str, dict[str, Any]] = {}
    if codes:
        for known in await look.records(
            "item", [{"field": "id", "op": "in", "value": codes}], len(codes)
        ):
            exact[str(known["id"])] = known
    out: list[dict[str, Any]] = []
    for number, row in enumerate(rows, start=1):
        where = f"Line {number}"
        read = " ".join(x for x in (row.get("code"), row.get("description")) if x)
        record: dict[str, Any] | None = exact.get(row.get("code") or "")
        score = 100.0 if record else 0.0
        if record is None:
            pool: dict[str, dict[str, Any]] = {}
            if row.get("description"):
                for r in await look.candidates("item", "item_name", row["description"]):
                    pool[str(r["id"])] = r
            for digits in re.findall(r"\d{3,}", row.get("code") or ""):
                for r in await look.records(
                    "item", [{"field": "id", "op": "like", "value": f"%{digits}%"}]
                ):
                    pool[str(r["id"])] = r
            by_name, name_score = _best(
                row.get("description") or read, list(pool.values()), "item_name"
            )
            by_code, code_score = _best(row.get("code") or "", list(pool.values()), "id")
            record, score = (
                (by_code, code_score) if code_score > name_score else (by_name, name_score)
            )
        if record is None or score < MAYBE:
            flags.append(
                Flag(
                    f"{where} item",
                    "unmatched",
                    f"“{read}” is not an item you can see in the ERP; the line is left out.",
                )
            )
            out.append({"read": read, "id": None, "score": round(score, 1)})
            continue
        if score < SURE:
            flags.append(
                Flag(
                    f"{where} item",
                    "uncertain",
                    f"read “{read}”, matched to {record['id']} {record.get('item_name', '')} ({score:.0f}% alike).",
                )
            )
        if row.get("doubt"):
            flags.append(Flag(f"{where} qty/rate", "uncertain", row["doubt"]))
        out.append(
            {
                "read": read,
                "id": record["id"],
                "name": record.get("item_name"),
                "score": round(score, 1),
            }
        )
    return out


async def _company(
    look: _Lookup, doc: dict[str, Any], session: Session, flags: list[Flag]
) -> str | None:
    if session.company:
        return session.company
    companies = await look.records("company", [], 50)
    if len(companies) == 1:
        return str(companies[0]["id"])
    recipient = doc.get("recipient")
    if recipient:
        record, score = _best(recipient, companies, "name", "id")
        if record is not None and score >= SURE:
            return str(record["id"])
    currency = doc["fields"]["currency"]["value"]
    same = [c for c in companies if c.get("currency") == currency]
    if len(same) == 1:
        flags.append(Flag("Company", "uncertain", f"chosen as the only company in {currency}."))
        return str(same[0]["id"])
    flags.append(
        Flag("Company", "unmatched", "the document does not say which of your companies it is for.")
    )
    return None


def _field_flags(doc: dict[str, Any], flags: list[Flag]) -> None:
    names = {
        "number": "Document number", "date": "Date", "due_date": "Due date", "currency": "Currency",
        "net_total": "Subtotal", "tax_total": "Tax", "grand_total": "Total",
    }  # fmt: skip
    for key, label in names.items():
        reading = doc["fields"].get(key)
        if reading is None:
            continue
        if reading["value"] is None:
            level = "unmatched" if key in ("number", "date", "currency") else "uncertain"
            flags.append(Flag(label, level, reading["doubt"] or f"no {label.lower()} was read"))
        elif reading.get("doubt"):
            flags.append(Flag(label, "uncertain", reading["doubt"]))
    for text in doc.get("unread") or []:
        message = f"“{text}” could not be read as a line; it is left out."
        flags.append(Flag("Table line", "unmatched", message))
    if doc["kind"].get("doubt"):
        flags.append(Flag("Document type", "uncertain", doc["kind"]["doubt"]))


def _values(
    kind: str,
    doc: dict[str, Any],
    party: str,
    company: str | None,
    rows: list[dict[str, Any]],
    matches: list[dict[str, Any]],
) -> dict[str, Any]:
    fields = {k: v["value"] for k, v in doc["fields"].items()}
    items = []
    for row, match in zip(rows, matches, strict=True):
        if match["id"] is None:
            continue
        line = {"item": match["id"], "qty": row["qty"], "rate": row["rate"]}
        if kind == "sales_order" and fields.get("due_date"):
            line["delivery_date"] = fields["due_date"]
        items.append(line)
    values: dict[str, Any] = {_PARTY[kind]: party, "company": company, "date": fields.get("date")}
    if kind == "purchase_invoice":
        values |= {
            "due_date": fields.get("due_date"),
            "supplier_invoice_no": fields.get("number"),
            "supplier_invoice_date": fields.get("date"),
        }
    else:
        values |= {
            "delivery_date": fields.get("due_date"),
            "customer_po": fields.get("number"),
            "order_type": "Sales",
        }
    values["currency"] = fields.get("currency")
    values["items"] = items
    return {k: v for k, v in values.items() if v not in (None, "")}


async def scan_to_draft(
    gateway: Gateway, session: Session, data: bytes, filename: str = "", kind: str = "auto"
) -> ScanResult:
    """Read ``data``, look its party and items up as the user, and propose the document."""
    scanned = await gateway.call(
        session,
        "documents.scan",
        {
            "filename": filename[:255],
            "content_base64": base64.b64encode(data).decode(),
            "kind": kind,
        },
    )
    if scanned.status is not Status.OK:
        message = scanned.message or "; ".join(scanned.errors)
        return ScanResult(False, message, unreadable=scanned.status is Status.INVALID)
    doc = scanned.data["document"]
    entity = doc["kind"]["value"]
    flags: list[Flag] = []
    look = _Lookup(gateway, session)
    party = await _party(look, _PARTY[entity], doc, flags)
    item_matches = await _items(look, doc["lines"], flags)
    company = await _company(look, doc, session, flags)
    _field_flags(doc, flags)
    result = ScanResult(
        False, "", entity, flags=flags, extraction=scanned.data["extraction"], document=doc,
        matches={"party": party, "items": item_matches, "company": company},
    )  # fmt: skip
    result.values = _values(entity, doc, party["id"], company, doc["lines"], item_matches)
    missing = [f.field for f in flags if f.level == "unmatched" and not f.field.startswith("Line")]
    if not result.values.get("items"):
        missing.append("items")
    if (
        party["id"] is None
        or company is None
        or not result.values.get("items")
        or not doc["fields"]["date"]["value"]
    ):
        result.message = (
            f"Read the document, but a draft {_LABEL[entity]} needs "
            f"{', '.join(dict.fromkeys(missing)) or 'more'}; nothing was prepared or written."
            + (f" The ERP said: {look.refusals[0]}" if look.refusals else "")
        )
        return result
    proposed = await gateway.call(session, f"{entity}.create", result.values)
    result = _with_proposal(result, proposed, entity)
    result.choices = party_choices(result)
    return result


def _compare_totals(result: ScanResult, filled: dict[str, Any]) -> None:
    """Where the ERP filled the draft (taxes and totals from its own rules), flag each total
    that differs from what the document says: a wrong tax template, a missed line, a misread."""
    fields = result.document.get("fields") or {}
    for key, label in (("net_total", "Subtotal"), ("tax_total", "Tax"), ("total", "Total")):
        erp = filled.get(key)
        printed = (fields.get("grand_total" if key == "total" else key) or {}).get("value")
        if not (isinstance(erp, int | float) and isinstance(printed, int | float)):
            continue
        if abs(float(erp) - float(printed)) > 0.015:
            message = f"the ERP computes {float(erp):,.2f}; the document says {printed:,.2f}."
            result.flags.append(Flag(label, "uncertain", message))


def _with_proposal(result: ScanResult, proposed: Outcome, entity: str) -> ScanResult:
    if proposed.status is Status.PROPOSAL and proposed.proposal:
        result.ok = True
        result.proposal = proposed.proposal
        _compare_totals(result, proposed.proposal.get("document") or {})
        doubt = len(result.flags)
        result.message = (
            f"Draft {_LABEL[entity]} prepared, not written"
            + (f"; {doubt} field{'s' * (doubt != 1)} need a look" if doubt else "")
            + ". Review it and confirm."
        )
        return result
    result.message = proposed.message or "; ".join(proposed.errors)
    return result
