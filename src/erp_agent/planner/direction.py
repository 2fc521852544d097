"""Which way the money went, read from who does what in the sentence: "Gulf Traders paid us",
"received from", "collections" are money in; "we paid", "payments to", "disbursed" are money
out. The words "pay" and "receive" alone say nothing about it: "what did Gulf Traders pay us?"
asks for receipts although it says "pay".

The direction is an enum field of the records whose values include both ``IN`` and ``OUT``
(ERPNext's Payment Entry ``payment_type``); the catalog's values name it."""

from __future__ import annotations

import re

from erp_agent.catalog import Entity, FieldType

IN, OUT = "Receive", "Pay"

_PAY = r"(?:pay|pays|paid|paying)"
_US = r"(?:we|i|you|our|us)"
_OTHER = rf"(?!{_US}\b)[\w&.'-]+"  # a word that is not us
_CUSTOMERS = r"(?:customers?|clients?|debtors?)"
_SUPPLIERS = r"(?:suppliers?|vendors?|creditors?)"
# Money said ("how much … got from", "cash … sent to"): "what did we get from Acme" may be goods.
_SUM = r"(?:how\s+much|cash|money|funds|payments?)"
# Who receives: us. Who pays: someone not us, or a payment that comes from somewhere.
_MONEY_IN = re.compile(
    rf"\b{_PAY}\s+(?:to\s+|in\s+to\s+)?us\b|\b(?:get|gets|got|getting|been|be|being)\s+paid\b|"
    r"\b(?:receiv\w*|receipts?|collect\w*|incoming|inflows?|money in|takings)\b|"
    r"\b(?:came|come|comes|coming)\s+in\b|"
    r"\b(?:payments?|money|cash|remittances?)\s+(?:\w+\s+){0,2}from\b|"
    rf"\b{_SUM}\s+(?:\w+\s+){{0,3}}?(?:get|gets|got|gotten|getting)\s+(?:\w+\s+){{0,3}}?from\b|"
    rf"\b{_CUSTOMERS}'?\s+payments?\b|\b{_CUSTOMERS}\s+(?:who\s+|that\s+)?(?:have\s+|has\s+)?paid\b|\bpayments?\s+(?:from|by)\s+{_CUSTOMERS}\b|"
    # "did Gulf Traders pay", "has Acme paid": a party, not we, pays.
    rf"\b(?:did|has|have|had)\s+{_OTHER}(?:\s+{_OTHER}){{0,4}}?\s+{_PAY}\b"
)
_MONEY_OUT = re.compile(
    rf"\b(?:we|i)\s+(?:have\s+|had\s+|did\s+|'ve\s+|already\s+|still\s+)*{_PAY}\b|"
    rf"\b(?:did|have|had)\s+(?:we|i)\s+(?:\w+ly\s+|already\s+|ever\s+)?{_PAY}\b|"
    r"\bpaid\s+(?:out|away)\b|\bpayments?\s+(?:(?:we|i)\s+)?(?:made\s+|sent\s+|issued\s+)?to\b|"
    rf"\b{_SUM}\s+(?:\w+\s+){{0,3}}?(?:sent|send|sends|sending|transferred|wired|remitted)\s+(?:\w+\s+){{0,3}}?to\b|"
    rf"\b{_SUPPLIERS}'?\s+payments?\b|\b{_SUPPLIERS}\s+(?:we\s+)?paid\b|"
    rf"\b(?:paid|pay|paying)\s+(?:our\s+|the\s+)?{_SUPPLIERS}\b|"
    r"\b(?:disburs\w*|outgoing|outflows?|money out|paid to)\b|\b(?:went|go|goes|going)\s+out\b"
)


def direction_field(entity: Entity) -> str | None:
    """The enum field that says whether money came in or went out, if the records have one."""
    for name, f in entity.fields.items():
        if f.type is FieldType.ENUM and f.filterable and {IN, OUT} <= set(f.values):
            return name
    return None


def money_direction(text: str) -> str | None:
    """``IN``, ``OUT``, or None when the sentence does not say (or says both)."""
    low = " ".join(text.lower().replace("’", "'").split())
    into, out = bool(_MONEY_IN.search(low)), bool(_MONEY_OUT.search(low))
    return None if into == out else IN if into else OUT


def direction_filter(
    entity: Entity, text: str, found: dict[str, list[str]]
) -> dict[str, list[str]]:
    """The enum filters with the direction read by meaning. A direction value matched only as
    a word ("pay" in "did they pay us") is dropped: the sentence decides, or nothing does."""
    name = direction_field(entity)
    if name is None:
        return found
    out = dict(found)
    said = [v for v in out.pop(name, []) if v not in (IN, OUT)]  # e.g. "internal transfer"
    way = money_direction(text)
    if way is not None:
        out[name] = [way]
    elif said:
        out[name] = said
    return out
