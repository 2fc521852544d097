"""Guards: each exists because of a named failure, and each has a test that reproduces it.

- repeated identical call      → a model loops on the same call instead of reading the result
- paging to total              → a model pages through rows to add them up (wrong and costly)
- tool not offered             → a model names a tool it saw in an earlier turn or made up
- consecutive failures         → a model keeps retrying failing calls; stop with a clear message
- number provenance            → a figure in the answer that no tool produced (an invented number,
                                 or one the model computed itself: "about a third", "twice as
                                 much"); dates and years in any form ("November 2026", "Q2
                                 2026", "FY 2025/26") are not figures and never cost a call
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

MAX_CONSECUTIVE_FAILURES = 3
MAX_PAGES = 2


@dataclass
class GuardState:
    calls: set[str] = field(default_factory=set)
    pages: dict[str, int] = field(default_factory=dict)
    consecutive_failures: int = 0


def call_key(name: str, arguments: Any) -> str:
    return name + ":" + json.dumps(arguments, sort_keys=True, default=str)


def check_call(state: GuardState, name: str, arguments: Any, offered: Iterable[str]) -> str | None:
    """A reason to refuse this call without running it, or None."""
    if name not in set(offered):
        return (
            f"The tool {name} is not offered in this turn. Use tools.search to find and enable "
            "a tool for what you need, or use one of the tools you were given."
        )
    key = call_key(name, arguments)
    if key in state.calls:
        return (
            f"You already called {name} with exactly these arguments in this turn; its result "
            "is above. Use it instead of calling again."
        )
    if (
        name.endswith(".list")
        and isinstance(arguments, dict)
        and int(arguments.get("start") or 0) > 0
    ):
        pages = state.pages.get(name, 0) + 1
        if pages > MAX_PAGES:
            entity = name.split(".")[0]
            return (
                f"Paging through {entity} rows to total or count them is not allowed. Use "
                f"{entity}.aggregate or analytics.aggregate for totals and counts, or {entity}.count."
            )
        state.pages[name] = pages
    state.calls.add(key)
    return None


def record_result(state: GuardState, ok: bool) -> bool:
    """Track failures; True when the turn must stop."""
    state.consecutive_failures = 0 if ok else state.consecutive_failures + 1
    return state.consecutive_failures >= MAX_CONSECUTIVE_FAILURES


# ------------------------------------------------------------------ number provenance

_NUMBER = re.compile(
    r"(?<![\w.\-/])(?P<sign>-)?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"\s*(?P<scale>%|k\b|K\b|m\b|M\b|bn\b|million\b|billion\b|thousand\b)?"
)
_ID_LIKE = re.compile(r"\b[A-Za-z]+(?:[-/][A-Za-z0-9]+)*[-/]\d[\w\-/]*")
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"
# Dates and years in any form: they are when, not how much.
_DATE_LIKE = re.compile(
    "|".join(
        [
            r"\b\d{4}-\d{2}(?:-\d{2})?\b",  # 2026-11-30, 2026-11
            r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",  # 30/11/2026, 30.11.26
            rf"\b(?:{_DAY}\s+(?:of\s+)?)?{_MONTH}(?:\s+{_DAY}\b)?(?:,?\s+'?\d{{2,4}})?\b",
            r"\b(?:q[1-4]|h[12]|fy)\s*'?\d{2,4}(?:\s*[/-]\s*\d{2,4})?\b",  # Q2 2026, FY25/26
            rf"\b(?:q[1-4]|h[12]|fy|quarter|half|year|fiscal year)\s+(?:of\s+)?{_YEAR}\b",
            rf"\b{_YEAR}\s*[/-]\s*(?:{_YEAR}|\d{{2}})\b",  # 2025/26, 2025-2026
            r"\b\d{1,2}:\d{2}(?::\d{2})?\b",  # 14:30
            rf"\b{_DAY[:-1]}(?:st|nd|rd|th)\b",  # the 30th
            # A bare year: four digits from 1900 to 2099 with no sign of an amount about them.
            rf"(?<![\d,.$€£¥])\b{_YEAR}\b(?![\d,.]|\s*(?:%|k\b|m\b|bn\b|million|billion|thousand))",
        ]
    ),
    re.I,
)
_SCALES = {
    "k": 1_000,
    "thousand": 1_000,
    "m": 1_000_000,
    "million": 1_000_000,
    "bn": 10**9,
    "billion": 10**9,
}


@dataclass(frozen=True)
class Figure:
    text: str
    value: Decimal
    tolerance: Decimal
    percent: bool = False
    worded: bool = False  # written in words ("a third", "twice as much", "fifteen")


def figures_in(text: str) -> list[Figure]:
    """Numbers stated in prose, with the tolerance their shown precision implies; figures
    written in words too (a share, a multiple, a number). Dates and years are not figures."""
    cleaned = _DATE_LIKE.sub(" ", _ID_LIKE.sub(" ", text))
    found = _worded(cleaned)
    for m in _NUMBER.finditer(cleaned):
        raw = m.group("num").replace(",", "")
        try:
            value = Decimal(raw)
        except InvalidOperation:
            continue
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        tolerance = Decimal(1).scaleb(-decimals) / 2
        scale_word = (m.group("scale") or "").lower()
        percent = scale_word == "%"
        if scale_word in _SCALES:
            value *= _SCALES[scale_word]
            tolerance *= _SCALES[scale_word]
        if m.group("sign"):
            value = -value
        found.append(Figure(m.group(0).strip(), value, tolerance, percent))
    return found


def numbers_in(value: Any, out: set[Decimal] | None = None) -> set[Decimal]:
    """Every number in a tool result (strings included: reports carry numbers in text)."""
    out = set() if out is None else out
    if isinstance(value, bool) or value is None:
        return out
    if isinstance(value, (int, float)):
        with contextlib.suppress(InvalidOperation):
            out.add(Decimal(str(value)))
    elif isinstance(value, str):
        for figure in figures_in(value):
            out.add(figure.value)
    elif isinstance(value, dict):
        for item in value.values():
            numbers_in(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            numbers_in(item, out)
    return out


_HEDGE = r"(?:(?:about|around|roughly|nearly|almost|approximately|some|over|under|just over|just under|more than|less than|close to)\s+)?"
_HEDGE_WORDS = frozenset(
    [
        "about",
        "around",
        "roughly",
        "nearly",
        "almost",
        "approximately",
        "some",
        "over",
        "under",
        "just",
        "more",
        "less",
        "close",
    ]
)
_FRACTIONS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4,
              "fifth": 5, "fifths": 5, "tenth": 10, "tenths": 10}  # fmt: skip
_SMALL = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}  # fmt: skip
_TENS = {w: 10 * i for i, w in enumerate(["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]) if i > 1}  # fmt: skip
_SCALE_WORDS = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 10**9}
_COUNT = "|".join(["a", "one", *(w for w in _SMALL if w not in ("zero", "one"))])
_SHARE = re.compile(
    rf"\b{_HEDGE}(?P<n>{_COUNT})[\s-]+(?P<part>{'|'.join(_FRACTIONS)})\b(?!\s+(?:ago|of (?:the|a) year|of \d{{4}}|\d{{4}}))"
    rf"|\b{_HEDGE}(?<!first )(?<!second )(?<!last )(?<!next )(?<!this )(?P<half>half)\b(?!\s*(?:-\s*)?(?:year|an? hour|time))"
    rf"|\bone in (?P<in>{'|'.join(_SMALL)}|\d+)\b",
    re.I,
)
_MULTIPLE = re.compile(
    rf"\b(?:(?P<twice>twice|double|triple)\s+(?:as|the)\b|(?P<done>doubled|tripled)\b"
    rf"|(?P<times>{'|'.join(w for w in _SMALL if w not in ('zero', 'one'))}|\d+(?:\.\d+)?)\s+times\s+(?:as|more|higher|larger|bigger|greater|the)\b)",
    re.I,
)
_NUMBER_WORDS = re.compile(
    rf"\b(?:(?:{'|'.join([*_SMALL, *_TENS, *_SCALE_WORDS, 'a'])})(?:[\s-]+(?:and[\s-]+)?|\b)){{1,8}}",
    re.I,
)
_MULTIPLES = {"twice": 2, "double": 2, "doubled": 2, "triple": 3, "tripled": 3}


def _worded(text: str) -> list[Figure]:
    """Shares ("about a third", "half", "one in five"), multiples ("twice as much", "three
    times higher") and numbers ("fifteen", "two hundred") written in words."""
    found: list[Figure] = []
    for m in _SHARE.finditer(text):
        if m.group("in"):
            n = m.group("in").lower()
            share = Decimal(1) / Decimal(_SMALL.get(n) or int(n) or 1)
        elif m.group("half"):
            share = Decimal("0.5")
        else:
            count = _SMALL.get(m.group("n").lower(), 1)
            share = Decimal(count) / _FRACTIONS[m.group("part").lower()]
        hedged = m.group(0).split()[0].lower() in _HEDGE_WORDS
        found.append(
            Figure(m.group(0).strip(), share * 100, Decimal(4 if hedged else 2), True, True)
        )
    for m in _MULTIPLE.finditer(text):
        word = (m.group("twice") or m.group("done") or "").lower()
        times = m.group("times")
        value = Decimal(_MULTIPLES[word]) if word else Decimal(_SMALL.get(times.lower()) or times)
        found.append(Figure(m.group(0).strip(), value, Decimal("0.15") * value, False, True))
    for m in _NUMBER_WORDS.finditer(text):
        number = _word_number(m.group(0))
        if number is not None and number > 12:
            found.append(Figure(m.group(0).strip(), Decimal(number), Decimal("0.5"), False, True))
    return found


def _word_number(text: str) -> int | None:
    """'two hundred and five' → 205; None for words that hold no number ('a', 'and')."""
    total = current = 0
    seen = False
    for word in re.split(r"[\s-]+", text.lower().strip()):
        if word in ("and", ""):
            continue
        if word == "a":
            current = max(current, 1)
        elif word in _SMALL:
            current += _SMALL[word]
            seen = True
        elif word in _TENS:
            current += _TENS[word]
            seen = True
        elif word == "hundred":
            current = max(current, 1) * 100
            seen = True
        elif word in _SCALE_WORDS:
            total += max(current, 1) * _SCALE_WORDS[word]
            current = 0
            seen = True
    return total + current if seen else None


def _matches(figure: Figure, sources: set[Decimal]) -> bool:
    candidates = [figure.value]
    if figure.percent:
        candidates.append(figure.value / 100)
    for candidate in candidates:
        tolerance = figure.tolerance if candidate == figure.value else figure.tolerance / 100
        for source in sources:
            if abs(abs(source) - abs(candidate)) <= tolerance:
                return True
    return False


def unsupported_figures(answer: str, sources: set[Decimal], user_text: str = "") -> list[str]:
    """Figures in the answer that appear in no tool result (nor in the user's own message).

    Small whole numbers (≤ 12: "top 5", "3 invoices" from a count the model rephrased as a word
    elsewhere) and the user's own numbers are let through; everything else must be traceable.
    """
    allowed = set(sources) | {f.value for f in figures_in(user_text)}
    missing = []
    for figure in figures_in(answer):
        if (
            not figure.percent
            and not figure.worded
            and figure.value == figure.value.to_integral_value()
            and abs(figure.value) <= 12
        ):
            continue
        if not _matches(figure, allowed):
            missing.append(figure.text)
    return missing
