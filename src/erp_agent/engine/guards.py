"""Guards: each exists because of a named failure, and each has a test that reproduces it.

- repeated identical call      → a model loops on the same call instead of reading the result
- paging to total              → a model pages through rows to add them up (wrong and costly)
- tool not offered             → a model names a tool it saw in an earlier turn or made up
- consecutive failures         → a model keeps retrying failing calls; stop with a clear message
- number provenance            → a figure in the answer that no tool produced (an invented number)
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
_DATE_LIKE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
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


def figures_in(text: str) -> list[Figure]:
    """Numbers stated in prose, with the tolerance their shown precision implies."""
    cleaned = _DATE_LIKE.sub(" ", _ID_LIKE.sub(" ", text))
    found = []
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
            and figure.value == figure.value.to_integral_value()
            and abs(figure.value) <= 12
        ):
            continue
        if not _matches(figure, allowed):
            missing.append(figure.text)
    return missing
