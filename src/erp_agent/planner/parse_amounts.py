"""Amounts and counts in a request: '$10,000', 'over 5k', 'more than 1.2m', 'under 500', 'top 5'."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

_SCALE = {"k": 1_000, "thousand": 1_000, "m": 1_000_000, "mn": 1_000_000, "million": 1_000_000,
          "bn": 10**9, "b": 10**9, "billion": 10**9}  # fmt: skip
_OPS = {
    ">": ("more than", "over", "above", "greater than", "exceeding", "bigger than", "larger than", "higher than", "in excess of", ">"),
    ">=": ("at least", "no less than", "minimum of", "or more", ">=", "≥"),
    "<": ("less than", "under", "below", "smaller than", "lower than", "<"),
    "<=": ("at most", "no more than", "up to", "maximum of", "<=", "≤"),
}  # fmt: skip
_CURRENCY = r"(?:\$|€|£|ksh\.?\s?|kes\s?|usd\s?|eur\s?|gbp\s?)?"
_NUMBER = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "twenty": 20}  # fmt: skip


@dataclass(frozen=True)
class Amount:
    op: str  # a filter operator: > >= < <= (=: the one amount a document is for)
    value: Decimal


def to_number(raw: str, scale: str = "") -> Decimal:
    return Decimal(raw.replace(",", "")) * _SCALE.get(scale.lower().strip(), 1)


def parse_amount(text: str) -> Amount | None:
    """A money threshold; a number followed by a unit of time or count is not money."""
    t = text.lower()
    # Longest phrase first: "no more than" is a ceiling, not "more than".
    pairs = sorted(((p, op) for op, ps in _OPS.items() for p in ps), key=lambda x: -len(x[0]))
    for phrase, op in pairs:
        if phrase == "or more":
            pattern = rf"{_CURRENCY}{_NUMBER}\s*(k|m|mn|bn|thousand|million|billion)?\b\s+or more"
        else:
            # A symbol (">", "≥") has no word boundary before it.
            start = r"\b" if phrase[0].isalnum() else r"(?<![<>=])"
            pattern = (
                rf"{start}{re.escape(phrase)}\s*{_CURRENCY}{_NUMBER}\s*(k|m|mn|bn|thousand|million|billion)?\b"
                r"(?!\s*(?:days?|weeks?|months?|years?|%|percent|units?|pcs|items?|invoices?|orders?|customers?))"
            )
        m = re.search(pattern, t)
        if m:
            return Amount(op, to_number(m.group(1), m.group(2) or ""))
    return None


_MONEY_WORDS = r"(?:dollars?|bucks|shillings?|bob|euros?|pounds?|usd|kes|ksh|eur|gbp)"
# "For 5407.42 dollars", "of $5,407.42", "worth KES 12,000": one amount a document is for.
_EXACT = re.compile(
    rf"\b(?:for|of|worth|totall?ing|amounting to|valued at|=)\s+(?:{_CURRENCY}{_NUMBER}\s*{_MONEY_WORDS}"
    rf"|(?:\$|€|£|ksh\.?\s?|kes\s?|usd\s?|eur\s?|gbp\s?){_NUMBER}|(\d{{1,3}}(?:,\d{{3}})*\.\d{{2}}|\d+\.\d{{2}}))\b"
)


def exact_amount(text: str) -> Amount | None:
    """The one amount a document is asked for by ("the invoice for 5407.42 dollars"): money by
    its currency or its cents, never a bare number (a year, a count)."""
    m = _EXACT.search(text.lower())
    if m is None:
        return None
    raw = next(g for g in m.groups() if g)
    return Amount("=", to_number(raw))


_SIGN = r"(?:\$|€|£|kshs?\.?\s?|kes\s?|usd\s?|eur\s?|gbp\s?)"
_SCALED = r"(?:\s?(k|m|mn|thousand|million)\b)?"
_SIGNED = re.compile(rf"(?<![\w.]){_SIGN}{_NUMBER}{_SCALED}")
_WORDED = re.compile(rf"(?<![\w.-]){_NUMBER}{_SCALED}\s*{_MONEY_WORDS}\b")
# A number that is part of a code or a date ("SAL-QTN-2026-00053", "2026-11-30") is no amount.
_BARE = re.compile(
    r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:\s?(k|m)\b)?(?![\w.,/-]*\d)"
)


def money_said(text: str) -> Decimal | None:
    """The sum of money a change is for ("25,000 bob", "KSh 1,800", "$40"): said with its
    currency, else the one number the message holds (never part of a code or a date)."""
    low = text.lower()
    for pattern in (_SIGNED, _WORDED):
        m = pattern.search(low)
        if m:
            return to_number(m.group(1), m.group(2) or "")
    # A year is no sum ("in 2025"); "a payment of 1000" is.
    bare = [m for m in _BARE.finditer(low) if not re.match(r"(?:19|20)\d{2}$", m.group(1))]
    return to_number(bare[0].group(1), bare[0].group(2) or "") if len(bare) == 1 else None


# "Rank all four", "rank them", "sort all of them": every group of the last figure, ranked.
_RANK_ALL = re.compile(
    r"^\s*(?:and\s+|now\s+|can you\s+|could you\s+|please\s+)*(?:rank|order|sort)\s+"
    r"(?:them|those|these|(?:them\s+)?all(?:\s+of\s+them)?|every\w*)"
    r"(?:\s+(\d{1,3}|" + "|".join(NUMBER_WORDS) + r"))?\b",
    re.IGNORECASE,
)


def rank_all(text: str) -> tuple[bool, int | None]:
    """Whether the message asks every group ranked, and how many it counts ("all four")."""
    m = _RANK_ALL.search(text)
    if m is None:
        return False, None
    word = (m.group(1) or "").lower()
    return True, (int(word) if word.isdigit() else NUMBER_WORDS.get(word))


def parse_top(text: str) -> int | None:
    """'top 5', 'top five', 'largest 10', 'biggest 3' → N; 'top customers' alone → 5."""
    t = text.lower()
    m = re.search(
        r"\b(?:top|largest|biggest|best|highest|leading|worst)\s+(\d{1,3}|"
        + "|".join(NUMBER_WORDS)
        + r")\b",
        t,
    )
    if m:
        word = m.group(1)
        return int(word) if word.isdigit() else NUMBER_WORDS[word]
    m = re.search(
        r"\b(\d{1,3}|"
        + "|".join(NUMBER_WORDS)
        + r")\s+(?:top|largest|biggest|best|highest|leading|worst)\b",
        t,
    )
    if m:
        word = m.group(1)
        return int(word) if word.isdigit() else NUMBER_WORDS[word]
    # "which 3 suppliers did we spend the most with": N things picked by the most of a figure.
    m = re.search(
        r"\b(?:which|what|the)\s+(\d{1,3}|"
        + "|".join(NUMBER_WORDS)
        + r")\s+[a-z]+\b.*\b(?:(?<!at )most|highest|biggest|largest)\b(?!\s+recent)",
        t,
    )
    if m:
        word = m.group(1)
        return int(word) if word.isdigit() else NUMBER_WORDS[word]
    # "which supplier did we spend the most with": the one thing with the most.
    # ("On the most recent receipt" is when, not a ranking.)
    m = re.search(r"\b(?:which|what)\s+([a-z]+)\b[^?]*\bthe\s+(?:most|highest)\b(?!\s+recent)", t)
    if m and m.group(1) not in ("is", "was", "has", "does", "us", "this"):
        # "which suppliers did we buy the most from": several, ranked (the usual five).
        return 5 if m.group(1).endswith("s") else 1
    if re.search(r"\b(top|biggest|largest|best|leading)\b", t):
        return 5
    return None
