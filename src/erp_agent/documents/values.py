"""Printed values as numbers and dates: amounts in either decimal convention, OCR's letter-for-
digit confusions, dates in the common layouts with day/month ambiguity reported."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from dateutil import parser as dateparser

CURRENCIES = (
    "KES", "USD", "EUR", "GBP", "UGX", "TZS", "RWF", "ETB", "ZAR", "NGN", "GHS", "INR", "AED",
    "SAR", "CNY", "JPY", "CHF", "CAD", "AUD", "SGD",
)  # fmt: skip
SYMBOLS = {"KSH": "KES", "KSHS": "KES", "€": "EUR", "£": "GBP", "$": "USD", "US$": "USD"}

# A number standing alone: not the digits inside a code like SKU-8498-GRY.
NUMBER = re.compile(
    r"(?<![\w.,-])[-+]?[\dOolI][\dOolI,.']*[\dOolI](?:%)?(?![\w-])|(?<![\w.,-])\d(?![\w.,-])"
)
DATE = re.compile(
    r"\b(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+[A-Za-z]{3,9}\.?,?\s+\d{4}|[A-Za-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})\b"
)


@dataclass
class Reading:
    """One field as read: its value, how sure, and why not (None when sure)."""

    value: Any
    confidence: float | None = 100.0
    doubt: str | None = None

    def as_dict(self) -> dict[str, Any]:
        value = self.value.isoformat() if isinstance(self.value, dt.date) else self.value
        return {"value": value, "confidence": self.confidence, "doubt": self.doubt}


def parse_number(token: str) -> float | None:
    """A printed amount: ``1,234.50``, ``1.234,50``, ``1 234.50``, ``3``; OCR's O/l/I for 0/1."""
    text = token.strip().rstrip("%").replace("'", "").replace(" ", "")
    text = text.translate(str.maketrans("OoIl", "0011"))
    if not text or not re.fullmatch(r"[-+]?[\d.,]+", text):
        return None
    sign = -1.0 if text.startswith("-") else 1.0
    text = text.lstrip("+-")
    last = max(text.rfind("."), text.rfind(","))
    if last >= 0 and len(text) - last - 1 in (1, 2):
        whole, decimals = text[:last], text[last + 1 :]
    else:
        whole, decimals = text, ""
    whole = whole.replace(",", "").replace(".", "")
    if not whole.isdigit() and whole != "":
        return None
    try:
        return sign * float(f"{whole or 0}.{decimals or 0}")
    except ValueError:
        return None


def numbers_in(text: str) -> list[tuple[float, bool, int]]:
    """Each number in ``text``: value, whether it was a percentage, and where it ends."""
    out = []
    for match in NUMBER.finditer(text):
        token = match.group(0)
        if not any(ch.isdigit() for ch in token):
            continue
        value = parse_number(token)
        if value is not None:
            out.append((value, token.endswith("%"), match.end()))
    return out


def parse_date(text: str) -> Reading | None:
    match = DATE.search(text)
    if not match:
        return None
    raw = match.group(1)
    parts = re.split(r"[/.\-]", raw)
    ambiguous = (
        len(parts) == 3
        and len(parts[0]) <= 2
        and parts[0].isdigit()
        and parts[1].isdigit()
        and int(parts[0]) <= 12
        and int(parts[1]) <= 12
        and parts[0] != parts[1]
    )
    try:
        value = dateparser.parse(raw, dayfirst=not raw[:4].isdigit(), fuzzy=True).date()
    except (ValueError, OverflowError):
        return None
    doubt = f"{raw} could be day/month or month/day; read as day/month" if ambiguous else None
    return Reading(value, 100.0, doubt)
