"""Where a question may name records in lowercase words ("balance of cash in hand", "what we
paid for black cordless drills"): the runs of words left once the question's own words,
grammar and dates are taken out, to be looked up among the records a handler asks about."""

from __future__ import annotations

import calendar
import re
from collections.abc import Collection

from erp_agent.planner import vocabulary

_MONTH_WORDS = frozenset(m.lower() for m in (*calendar.month_name, *calendar.month_abbr) if m)
# A comma, colon or question mark ends a name ("shelves, ohio valley or athi river").
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9&'.]*|-|[,;:?!()]")


def name_phrases(
    text: str, own: frozenset[str], *, parts: bool = True, with_own: bool = False
) -> list[str]:
    """Runs of the words left once the question's ``own`` words, grammar and dates are taken
    out: what could be a record's name ("Debtors", "Debtors - ST", "cash"); two runs joined by
    one "in", "of" or "and" are also offered whole ("cash in hand"), and with ``parts`` the
    words of a longer run on their own, last ("salary" of "salary expense"). ``with_own``: a
    name may hold one of the question's own words ("Office Expenses - ST", "Cost of Goods
    Sold"), so a run is also offered across one such word, or with one and a joiner before it.
    """
    runs: list[list[str]] = [[]]
    gaps: list[list[str]] = [[]]  # the words dropped after each run
    said: list[list[str]] = [[]]  # the same, as written
    tokens = _TOKEN.findall(_HYPHENATED.sub(" ", text))
    for at, token in enumerate(tokens):
        low = token.lower().strip("'.").removesuffix("'s")
        # A dash before a company's code joins an account's name ("Debtors - ST"); before
        # anything else it sets two things apart ("ohio valley imports - orange LED bulb").
        code = token == "-" and _is_code(tokens[at + 1 : at + 3], own)
        keep = (token == "-" and code) or not (
            token == "-"
            or token in ",;:?!()"
            or low in vocabulary.GRAMMAR
            or low in own
            or low in _MONTH_WORDS
            or low.isdigit()
        )
        # "Silver cartons": how goods are packed ends an item's name said just before it.
        keep = keep or (low in vocabulary.PACKAGING and bool(runs[-1]) and not gaps[-1])
        if keep:
            if gaps[-1]:
                runs.append([])
                gaps.append([])
                said.append([])
            runs[-1].append(re.sub(r"'s$", "", token))
        else:
            gaps[-1].append(low)
            said[-1].append(token)
    out = [" ".join(r).strip(" -") for r in runs]
    joined = [
        f"{out[i]} {gaps[i][0]} {out[i + 1]}"
        for i in range(len(out) - 1)
        if out[i] and out[i + 1] and len(gaps[i]) == 1 and gaps[i][0] in _JOINERS
    ]
    if with_own:
        joined += _with_own_words(runs, out, gaps, said, own)
    # A run that is no account's name may hold one ("salary expense"): its words, last.
    words = [w for r in runs if parts and len(r) > 1 and "-" not in r for w in r]
    return list(dict.fromkeys(p for p in [*joined, *out, *words] if p and p != "-"))


def _with_own_words(
    runs: list[list[str]],
    out: list[str],
    gaps: list[list[str]],
    said: list[list[str]],
    own: frozenset[str],
) -> list[str]:
    """Runs offered with one of the question's own words inside: before a company's code
    ("Office [Expenses] - ST"), or before the run with a joiner ("[Cost of] Goods Sold")."""
    found = []
    for i in range(len(out) - 1):
        suffix = runs[i + 1][:1] == ["-"]  # a company's code after its account's name
        if out[i] and suffix and len(gaps[i]) == 1 and gaps[i][0] in own:
            found.append(f"{out[i]} {said[i][0]} {' '.join(runs[i + 1])}".replace("  ", " "))
    for i in range(1, len(out)):
        gap = gaps[i - 1]
        if out[i] and len(gap) >= 2 and gap[-1] in _JOINERS and gap[-2] in own:
            found.append(f"{said[i - 1][-2]} {said[i - 1][-1]} {out[i]}")
    return found


def _is_code(after: list[str], own: Collection[str]) -> bool:
    """Whether the words after a dash are a company's code: "ST", or "st" ending the name."""
    if not after or not after[0].isalnum() or len(after[0]) > 5:
        return False
    if after[0].isupper():
        return True
    ends = len(after) == 1 or not after[1][0].isalnum() or after[1].lower() in own
    return len(after[0]) <= 3 and (ends or after[1].lower() in vocabulary.GRAMMAR)


_HYPHENATED = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")  # "cash-in-hand"; "Debtors - ST" stays
_WORD = re.compile(r"[\w&]+")
_JOINERS = frozenset(["in", "of", "and", "&"])


def whole_first(found: Collection[str]) -> set[str]:
    """Of the phrases that found a record, those to drop: the words of a longer phrase found
    whole ('cash' and 'hand' once 'cash in hand' is an account; 'Office' and 'goods sold'
    once 'Office Expenses - ST' and 'cost of goods sold' are)."""

    def words(phrase: str) -> str:
        # "rent (Rent - HG)": a name found again in another company is not a longer name.
        return " " + " ".join(_WORD.findall(phrase.split("(")[0].lower())) + " "

    return {
        w
        for w in found
        if any(words(w) != words(o) and words(w) in words(o) for o in found if " " in o)
    }
