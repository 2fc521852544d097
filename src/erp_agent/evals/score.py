"""Scoring one answer: the plane used, the expected figures present, nothing forbidden, every
figure traceable to a tool result."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from erp_agent.engine import guards

UNVERIFIED = "Not verified against ERP data"
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
# What an answer says when a period has nothing to report (an expected figure whose truth is
# empty or zero at the eval date); a suite may state its own words instead (``expect.empty``).
NOTHING = ("no records", "none", "nothing", "zero", "there are no", "there were no", "no match")


def plain(markdown: str) -> str:
    """The answer without link targets (a URL's port is not a figure the answer states)."""
    return _LINK.sub(r"\1", markdown)


def written_text(blocks: Iterable[Mapping[str, Any]]) -> str:
    """The answer's sentences (text blocks), without link targets: what groundedness checks,
    since a table is drawn from a stored tool result and the words are composed."""
    return plain("\n".join(str(b.get("markdown", "")) for b in blocks if b.get("type") == "text"))


def answer_text(blocks: Iterable[Mapping[str, Any]]) -> str:
    """What the user reads: the text blocks and the rows of the tables shown (a figure in a
    table is stated as much as one in a sentence), without link targets."""
    parts: list[str] = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append(str(block.get("markdown", "")))
        elif block.get("type") == "table":
            for row in block.get("rows") or []:
                cells = row.values() if isinstance(row, dict) else row
                parts.append(" | ".join("" if c is None else str(c) for c in cells))
    return plain("\n".join(parts))


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def figure_present(answer: str, value: Any) -> bool:
    """Whether ``value`` is stated in the answer (any thousands separators, rounded to cents)."""
    target = _decimal(value)
    if target is None:
        return str(value).lower() in answer.lower()
    for figure in guards.figures_in(answer):
        tolerance = max(figure.tolerance, Decimal("0.0051"))
        if abs(abs(figure.value) - abs(target)) <= tolerance:
            return True
    return False


def nothing_in(values: Sequence[Any]) -> bool:
    """Whether a truth says there is nothing: no rows, or only zeros and blanks."""
    return all(v is None or (_decimal(v) is not None and _decimal(v) == 0) for v in values)


def says_nothing(answer: str, phrases: Sequence[str] = ()) -> bool:
    """Whether the answer says there is nothing: one of ``phrases`` (default ``NOTHING``, as
    whole words) or a stated zero."""
    text = answer.lower()
    words = phrases or NOTHING
    if any(re.search(rf"(?<!\w){re.escape(w.lower())}(?!\w)", text) for w in words):
        return True
    return any(f.value == 0 for f in guards.figures_in(answer))


def tool_sources(messages: Iterable[dict[str, Any]]) -> list[Any]:
    out = []
    for m in messages:
        if m.get("role") == "tool" and m.get("content"):
            try:
                out.append(json.loads(m["content"]))
            except (TypeError, json.JSONDecodeError):
                continue
    return out


def grounded(answer: str, sources: Sequence[Any], question: str) -> bool:
    if UNVERIFIED in answer:
        return False
    return not guards.unsupported_figures(answer, guards.numbers_in(list(sources)), question)


def states_figures(answer: str) -> bool:
    """Any figure beyond the small counts the provenance guard also lets through."""
    return any(abs(f.value) > 12 or f.percent for f in guards.figures_in(answer))


def search_ids(sources: Sequence[Any], k: int) -> list[str]:
    """Ids returned by search tools (records.search, knowledge.search), first k of each."""
    ids: list[str] = []
    for source in sources:
        result = source.get("result") if isinstance(source, dict) else None
        if not isinstance(result, dict):
            continue
        for key in ("hits", "results", "records", "passages"):
            hits = result.get(key)
            if isinstance(hits, list):
                ids += [
                    str(h.get("id") or h.get("name") or "") for h in hits[:k] if isinstance(h, dict)
                ]
    return ids
