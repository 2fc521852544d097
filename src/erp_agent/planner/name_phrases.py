"""Where a question may name records in lowercase words ("balance of cash in hand", "what we
paid for black cordless drills"): the runs of words left once the question's own words,
grammar and dates are taken out, to be looked up among the records a handler asks about."""

from __future__ import annotations

import calendar
import re
from collections.abc import Collection

from erp_agent.planner import vocabulary

_MONTH_WORDS = frozenset(m.lower() for m in (*calendar.month_name, *calendar.month_abbr) if m)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9&'.]*|-")


def name_phrases(text: str, own: frozenset[str], *, parts: bool = True) -> list[str]:
    """Runs of the words left once the question's ``own`` words, grammar and dates are taken
    out: what could be a record's name ("Debtors", "Debtors - ST", "cash"); two runs joined by
    one "in", "of" or "and" are also offered whole ("cash in hand", "cost of goods sold"), and
    with ``parts`` the words of a longer run on their own, last ("salary" of "salary expense")."""
    runs: list[list[str]] = [[]]
    gaps: list[list[str]] = [[]]  # the words dropped after each run
    for token in _TOKEN.findall(_HYPHENATED.sub(" ", text)):
        low = token.lower().strip("'.").removesuffix("'s")
        keep = token == "-" or not (
            low in vocabulary.GRAMMAR or low in own or low in _MONTH_WORDS or low.isdigit()
        )
        if keep:
            if gaps[-1]:
                runs.append([])
                gaps.append([])
            runs[-1].append(re.sub(r"'s$", "", token))
        else:
            gaps[-1].append(low)
    out = [" ".join(r).strip(" -") for r in runs]
    joined = [
        f"{out[i]} {gaps[i][0]} {out[i + 1]}"
        for i in range(len(out) - 1)
        if out[i] and out[i + 1] and len(gaps[i]) == 1 and gaps[i][0] in _JOINERS
    ]
    # A run that is no account's name may hold one ("salary expense"): its words, last.
    words = [w for r in runs if parts and len(r) > 1 and "-" not in r for w in r]
    return list(dict.fromkeys(p for p in [*joined, *out, *words] if p and p != "-"))


_HYPHENATED = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")  # "cash-in-hand"; "Debtors - ST" stays
_JOINERS = frozenset(["in", "of", "and", "&"])


def whole_first(found: Collection[str]) -> set[str]:
    """Of the phrases that found a record, those to drop: the words of a longer phrase found
    whole ('cash' and 'hand' once 'cash in hand' is an account; an account's own "X - ST" is
    one name, never split)."""
    whole = [w for w in found if " " in w and " - " not in w]
    parts = {p.lower() for w in whole for p in w.split()}
    return {w for w in found if w not in whole and w.lower() in parts}
