"""'Pay Machakos Wire & Cable's bill ACC-PINV-2026-00147 in full', 'record Acme's payment of
500,000 against ACC-SINV-2026-00151 by cheque': a payment against one invoice, proposed as
ERPNext's "Create > Payment" on the invoice prepares it — received from the customer or paid to
the supplier of that invoice, in its company, for what is still outstanding on it (or the sum
said, never more), allocated to it. The accounts are the ERP's to fill, as its payment form does.
"""

from __future__ import annotations

import re
from typing import Any

from erp_agent.catalog import Entity
from erp_agent.catalog.questions import load_questions
from erp_agent.planner import proposals, write_fields
from erp_agent.planner.answer import fmt
from erp_agent.planner.parse_amounts import money_said
from erp_agent.planner.steps import Ctx, Step, call, enable, failed, say

TOOL = "payment_entry.create"
# Paying an invoice: a verb that settles it (after the courtesies questions.yaml knows), or a
# payment said to be for it.
_PAY = re.compile(
    rf"^\s*(?:{'|'.join(load_questions().patterns('polite'))})?(?:pay|settle|clear)\b"
    r"|\b(?:record|enter|post|log|book|receive|make)\b.*\bpayments?\b"
    r"|\bpayments?\s+(?:for|against|on|of)\b.*\b(?:record|enter|post|log|book)\b"
    r"|\b(?:mark|set)\b.*\bas\s+(?:fully\s+)?paid\b",
    re.IGNORECASE,
)
# Whose invoice it is, and which way the money goes.
_SIDES = {"customer": "Receive", "supplier": "Pay"}


def _invoice(ctx: Ctx) -> tuple[Entity, str] | None:
    for e, doc_id in ctx.req.doc_ids:
        if "outstanding" in e.fields and any(p in e.fields for p in _SIDES):
            return e, doc_id
    return None


def applies(ctx: Ctx) -> bool:
    text = ctx.req.text
    return "?" not in text and _invoice(ctx) is not None and bool(_PAY.search(text))


def handle(ctx: Ctx) -> Step | None:
    found = _invoice(ctx)
    if found is None:
        return None
    payments = ctx.catalog.entities.get("payment_entry")
    if payments is None or not ctx.has(TOOL):
        return enable(ctx, TOOL) or say("You can't record payments in this session.")
    answered = proposals.proposed(ctx, payments)
    if answered is not None:
        return answered
    e, doc_id = found
    r = ctx.result(f"{e.name}.get", {"id": doc_id})
    if r is None:
        return call(f"{e.name}.get", {"id": doc_id})
    if not r.ok:
        return failed(r)
    doc: dict[str, Any] = r.data if isinstance(r.data, dict) else {}
    outstanding = float(doc.get("outstanding") or 0)
    if doc.get("docstatus") not in (None, 1):
        return say(f"{e.label} {doc_id} is not submitted, so nothing can be paid against it yet.")
    if outstanding <= 0:
        return say(f"{e.label} {doc_id} has nothing outstanding: it is already paid.")
    said = money_said(ctx.req.text)
    amount = float(said) if said is not None else outstanding
    if amount > outstanding:
        return say(
            f"{e.label} {doc_id} has {fmt(outstanding)} outstanding, less than the "
            f"{fmt(amount)} you said; I won't allocate more than is owed on it."
        )
    side = next(p for p in _SIDES if p in e.fields)
    args: dict[str, Any] = {
        "payment_type": _SIDES[side],
        "date": ctx.view.today.isoformat(),
        "company": doc.get("company"),
        "party_type": side,
        "party": doc.get(side),
        "amount": amount,
        "references": [{"document_type": e.name, "document": doc_id, "allocated": amount}],
    }
    mode, step = write_fields.named_record(ctx, "mode_of_payment")
    if step is not None:
        return step
    if mode is not None:
        args["mode_of_payment"] = mode
    account = _account_said(ctx)
    if account is not None:
        # "From Bank - ST": the bank side of the payment (out of it when paying, into it when
        # receiving); the party's side is the ERP's to fill.
        args["paid_from" if args["payment_type"] == "Pay" else "paid_to"] = account
    return call(TOOL, {k: v for k, v in args.items() if v not in (None, "")})


def _account_said(ctx: Ctx) -> str | None:
    """An account named by its id ("Bank - ST"): its name and the company's abbreviation."""
    return next((v for _, v in ctx.req.names if re.search(r"\s-\s[A-Z]{1,6}$", v)), None)
