"""Arithmetic asked in words or digits → one calculator expression (the calculator computes it).

"what is 17.5% VAT on 1,234.56?" → 1234.56 * 17.5 / 100; "twelve times 3.5" → 12 * 3.5;
"20% off 5,000" → 5000 * (100 - 20) / 100; "(1200-980)/980*100" as written. Only a message
made of numbers, operators and arithmetic words is arithmetic: "top 5 customers over 10k" is not.
"""

from __future__ import annotations

import re
from typing import Any

from erp_agent.planner.parse_amounts import to_number

_LEAD = re.compile(
    r"^\s*(?:please\s+)?(?:what(?:'s| is| are)|whats|calculate|compute|work out|evaluate|how much is|"
    r"can you (?:calculate|compute|work out)|tell me)?\s*",
    re.IGNORECASE,
)
_NUM = r"(?:[$€£]|ksh\.?\s?|kes\s?|usd\s?)?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(k|m|mn|bn|million|thousand|billion)?\b"
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
}  # fmt: skip
_OPERATORS = [
    (r"\bmultiplied by\b|\btimes\b|\bx\b|×", "*"),
    (r"\bdivided by\b|÷", "/"),
    (r"\bplus\b|\badded to\b", "+"),
    (r"\bminus\b|\bless\b", "-"),
    (r"\bsquared\b", "** 2"),
]
_TAXES = r"(?:vat|tax|gst|sales tax|withholding(?: tax)?|wht|commission|discount|markup|interest)"


def _number(raw: str, scale: str | None) -> str:
    return format(to_number(raw, scale or ""), "f")


_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_WORD_NUMBER = re.compile(
    r"\b(?:"
    + "|".join([*_NUMBER_WORDS, "million"])
    + r")(?:(?:\s+and)?[\s-]+(?:"
    + "|".join([*_NUMBER_WORDS, "million"])
    + r"))*\b",
    re.IGNORECASE,
)


def _compound(words: list[str]) -> int:
    """'three hundred and fifty' → 350, 'twenty five thousand' → 25000."""
    total, part = 0, 0
    for word in words:
        if word in ("hundred",):
            part = (part or 1) * 100
        elif word in ("thousand", "million"):
            total += (part or 1) * _SCALES[word]
            part = 0
        else:
            part += _NUMBER_WORDS[word]
    return total + part


def _words_to_digits(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        words = [w for w in re.split(r"[\s-]+", m.group(0).lower()) if w and w != "and"]
        if all(w in _SCALES for w in words):
            return m.group(0)  # "1.2 million": a scale of the figure before it
        return str(_compound(words))

    return _WORD_NUMBER.sub(one, text)


_PCT = r"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)"


def _n(m: re.Match[str], at: int) -> str:
    return _number(m.group(at), m.group(at + 1))


# Whole phrasings of everyday sums: (pattern over the message, the expression it means).
_PHRASES: list[tuple[str, Any]] = [
    (
        rf"(?:the\s+)?{_TAXES}\s+(?:at|of)\s+{_PCT}\s+(?:on|of|for)\s+{_NUM}",
        lambda m: f"{_n(m, 2)} * {m.group(1)} / 100",
    ),
    (
        rf"add\s+{_PCT}\s*(?:{_TAXES}\s*)?to\s+{_NUM}",
        lambda m: f"{_n(m, 2)} * (100 + {m.group(1)}) / 100",
    ),
    (
        rf"gross\s+up\s+{_NUM}\s+(?:by|at|with)\s+{_PCT}\s*(?:{_TAXES})?",
        lambda m: f"{_n(m, 1)} * (100 + {m.group(3)}) / 100",
    ),
    (
        rf"(?:split|divide)\s+{_NUM}\s+(?:into|in|by|over)\s+(\d+)\s*(?:equal\s+)?\w*",
        lambda m: f"{_n(m, 1)} / {m.group(3)}",
    ),
    (
        rf"{_NUM}\s+(?:over|across|in)\s+(\d+)\s+(?:months|weeks|years|payments|instalments|installments)"
        r"(?:[,\s]+(?:per|a|each)\s+\w+)?",
        lambda m: f"{_n(m, 1)} / {m.group(3)}",
    ),
    (
        rf"(\d+(?:\.\d+)?)\s*(?:units?|pcs|pieces|items?|boxes)?\s+at\s+{_NUM}\s*(?:each|apiece|per unit)?",
        lambda m: f"{m.group(1)} * {_n(m, 2)}",
    ),
    (
        rf".*?\b(?:buy|bought|cost|costs|purchase[ds]?)\b(?:\s+(?:is|at|for|of))?\s+{_NUM}.*?"
        rf"\b(?:sell|sold|price|selling)\b(?:\s+(?:is|at|for|of))?\s+{_NUM}.*\bmargin\b.*",
        lambda m: f"({_n(m, 3)} - {_n(m, 1)}) / {_n(m, 3)} * 100",
    ),
    (
        rf".*?\bmargin\b.*?\bcost\s+(?:is\s+)?{_NUM}.*?\bprice\s+(?:is\s+)?{_NUM}.*",
        lambda m: f"({_n(m, 3)} - {_n(m, 1)}) / {_n(m, 3)} * 100",
    ),
    (
        r"(\([\d\s.+\-*/()]+\)[\d\s.+\-*/()]*)\s+as\s+a\s+percent(?:age)?",
        lambda m: f"{m.group(1).strip()} * 100",
    ),
]


def expression(text: str) -> str | None:
    """The calculator expression the message asks for, or None when it is not arithmetic."""
    body = _LEAD.sub("", text.strip(), count=1).strip().rstrip("?.!= ").strip()
    if (
        not body
        or len(body) > 200
        or not re.search(r"\d|\b(" + "|".join(_NUMBER_WORDS) + r")\b", body, re.I)
    ):
        return None
    body = _words_to_digits(body)
    pct = r"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)"
    for pattern, build in _PHRASES:
        m = re.fullmatch(pattern, body, re.I)
        if m:
            return str(build(m))
    m = re.fullmatch(rf"{pct}\s*(?:{_TAXES}\s*)?(?:of|on)\s+{_NUM}", body, re.I)
    if m:
        return f"{_number(m.group(2), m.group(3))} * {m.group(1)} / 100"
    m = re.fullmatch(
        rf"{_NUM}\s*(?:plus|with|including|inclusive of|\+|and)\s+{pct}\s*{_TAXES}?", body, re.I
    )
    if m:
        return f"{_number(m.group(1), m.group(2))} * (100 + {m.group(3)}) / 100"
    m = re.fullmatch(rf"{pct}\s*(?:off|discount on|less on)\s+{_NUM}", body, re.I)
    if m:
        return f"{_number(m.group(2), m.group(3))} * (100 - {m.group(1)}) / 100"
    m = re.fullmatch(rf"{_NUM}\s*(?:minus|less|-)\s+{pct}", body, re.I)
    if m:
        return f"{_number(m.group(1), m.group(2))} * (100 - {m.group(3)}) / 100"
    expr = body
    for pattern, op in _OPERATORS:
        expr = re.sub(pattern, f" {op} ", expr, flags=re.IGNORECASE)
    expr = re.sub(_NUM, lambda m: _number(m.group(1), m.group(2)), expr, flags=re.IGNORECASE)
    expr = re.sub(r"\s+", " ", expr).strip()
    if not re.fullmatch(r"[\d.\s+\-*/()%]+", expr) or not re.search(r"\d\s*[+\-*/%]\s*[\d(]", expr):
        return None
    return expr
