"""Finance shorthand said the way the catalog says it, before any vocabulary matching.

"AP aging" is accounts payable, never receivables; "p and l ytd" is the profit and loss to date;
"mnth", "yrly" are a month and yearly with letters left out. Each abbreviation expands to the
words the catalog uses for it, so the rest of the reading sees one vocabulary."""

from __future__ import annotations

import re
from collections.abc import Callable

# Abbreviation (a regex, matched case-insensitively as a whole word) → what it stands for.
SHORTHAND: tuple[tuple[str, str], ...] = (
    (r"p\s*(?:&|and|n)\s*l|pnl|p/l", "profit and loss"),
    (r"a/r|ar", "accounts receivable"),
    (r"a/p|ap", "accounts payable"),
    (r"gl", "general ledger"),
    (r"tb", "trial balance"),
    (r"cogs", "cost of goods sold"),
    (r"owing to", "owed to"),
    (r"owing", "owe"),
)
# Words of periods and groupings, which people shorten by dropping letters ("mnth", "qtrly").
PERIOD_WORDS = ("month", "months", "monthly", "quarter", "quarters", "quarterly", "year",
                "years", "yearly", "week", "weeks", "weekly", "daily")  # fmt: skip
_TOKEN = re.compile(r"[A-Za-z][A-Za-z&'/]*")


def expand(text: str, known_phrase: Callable[[str], bool]) -> str:
    """The text with shorthand spelled out. An abbreviation is left as it is when the catalog
    knows it together with the next word ("GL entries", "GL account": the catalog's own term),
    or when it starts a capitalised name ("AR Traders")."""
    for pattern, meaning in SHORTHAND:
        regex = re.compile(rf"(?<![\w&/])(?:{pattern})(?![\w&/])", re.IGNORECASE)

        def swap(m: re.Match[str], meaning: str = meaning, source: str = text) -> str:
            nxt = _TOKEN.search(source, m.end())
            after = nxt.group(0) if nxt and not source[m.end() : nxt.start()].strip() else ""
            said = m.group(0)
            if after and known_phrase(f"{said} {after}".lower()):
                return said
            if after[:1].isupper() and said.isupper() and not known_phrase(after.lower()):
                return said
            return meaning

        text = regex.sub(swap, text)
    return text


def period_word(word: str) -> str | None:
    """'mnth' → month, 'qtrly' → quarterly, 'yrs' → years: a period word typed as its consonants
    (first letter kept, vowels left out, the rest in order), where a typo is too short to judge
    by edit distance. A word of other letters ('gear') or with its vowels ('yes') is not one."""
    low = word.lower()
    if not 3 <= len(low) <= 6 or re.search(r"[aeiou]", low[1:]):
        return None
    fits = [p for p in PERIOD_WORDS if p[0] == low[0] and len(p) > len(low) and _within(low, p)]
    # The shortest that fits: 'mnth' is a month, not monthly; 'mnthly' is monthly.
    fits = [p for p in fits if p.endswith("ly") == low.endswith("ly")]
    return min(fits, key=len) if fits else None


def _within(short: str, long: str) -> bool:
    letters = iter(long)
    return all(c in letters for c in short)
