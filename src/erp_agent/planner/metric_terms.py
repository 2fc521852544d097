"""Which figures of the semantic layer a request names: each metric's terms (its label, name
and synonyms, in any everyday inflection) found in the words."""

from __future__ import annotations

import functools
import re
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.planner.terms import TERM_FILLERS, CatalogKey, has_term, norm

# Words that ask what something is worth: a figure in money, not a count or a quantity.
VALUE_WORDS = {"worth": "value", "valued": "value", "valuation": "value", "values": "value"}
# Words that say what a two-word term measures; only such terms are matched with their words
# apart ("how much is the stock … worth" names the stock value).
# Words of a measure a two-word term may be said apart from: "leave … left" ("how many leave
# days does Grace have left") is the leave left, as "the stock … worth" is the stock value.
_MEASURE_WORDS = frozenset(["value", "amount", "quantity", "count", "number", "average", "total",
                            "left", "remaining", "units", "taken"])  # fmt: skip
_SPREAD = 6  # at most this many words between the two words of such a term


def metric_terms(metric: Any) -> list[tuple[str, int]]:
    label = str(metric.label).split("(")[0].strip()
    return [(label, 3), (metric.name.replace("_", " "), 3), *((s, 2) for s in metric.synonyms)]


# Participles a figure's name uses, and the forms a question says them in ("leave taken": "how
# many days did staff take").
_IRREGULAR = {
    "taken": frozenset(["take", "takes", "took", "taking"]),
    "paid": frozenset(["pay", "pays", "paying"]),
    "sold": frozenset(["sell", "sells", "selling"]),
    "spent": frozenset(["spend", "spends", "spending"]),
    "bought": frozenset(["buy", "buys", "buying"]),
}


@functools.lru_cache(maxsize=8192)
def _inflections(word: str) -> frozenset[str]:
    """A word's everyday forms: spend → spends, spending; sell → selling; bill → billings."""
    forms = {word, word + "s", word + "es", word + "ing", word + "ings", word + "ed", word + "d"}
    forms |= _IRREGULAR.get(word, frozenset())
    if word.endswith("e"):
        forms |= {word[:-1] + "ing", word[:-1] + "ings"}
    if len(word) > 2 and word[-1] not in "aeiouwy" and word[-2] in "aeiou":
        forms |= {word + word[-1] + "ing", word + word[-1] + "ed"}
    return frozenset(forms)


def says(haystack: str, term: str) -> bool:
    """Whether the text says ``term``, any word of it in an everyday inflection."""
    words = norm(term).split()
    if not words:
        return False
    if has_term(haystack, term):
        return True
    text = haystack.split()
    n = len(words)
    forms = [_inflections(w) for w in words]
    said = set(text)
    if not all(said & f for f in forms):
        return False
    return any(all(text[i + k] in forms[k] for k in range(n)) for i in range(len(text) - n + 1))


# Terms that only qualify a total ("purchases this quarter, before tax"): they weigh less than
# any figure's own name, so they never turn one subject's figure into another's.
_QUALIFIER = re.compile(
    r"^(?:before|after|excluding|excl|ex|net of|without|including|incl|inclusive of|"
    r"exclusive of) (?:tax|taxes|vat)$"
)


# "31 to 60 days late", "90+ days behind": an age past the due date is overdue.
_LATE = re.compile(r"(\bdays?)\s+(?:late|behind|past due|in arrears)\b", re.IGNORECASE)


def metric_scores(catalog: Catalog, text: str) -> dict[str, int]:
    """Metrics named by their own words. A term that is only an entity's name ("sales
    invoices") names the records, not a figure: "the total of sales invoices" is theirs."""
    # Cached: the planner asks this of the same words many times in one request.
    return dict(_scores(CatalogKey(catalog), text))


@functools.lru_cache(maxsize=8)
def _record_names(key: CatalogKey) -> dict[str, frozenset[str]]:
    """Each entity's label and plural, normalised: the words that name records, not figures."""
    entities = key.catalog.entities.values()
    return {e.name: frozenset(norm(t).strip() for t in (e.label, e.plural)) for e in entities}


@functools.lru_cache(maxsize=4096)
def _scores(key: CatalogKey, text: str) -> dict[str, int]:
    catalog = key.catalog
    haystack = norm(_LATE.sub(r"\1 overdue", TERM_FILLERS.sub(" ", text)))
    names_of = _record_names(key)
    every_name = {g for gs in names_of.values() for g in gs}
    said_names = {g for g in every_name if f" {g} " in haystack}  # records the text names
    scores: dict[str, int] = {}
    for name, metric in catalog.metrics.items():
        # A balance (records with no date, e.g. stock balances) is named by its figure.
        entity = catalog.entities.get(metric.entity)
        own = (
            names_of.get(metric.entity, frozenset()) if entity and not entity.date_field else set()
        )
        generic, named_here = every_name - own, said_names - own
        best = 0
        for term, weight in metric_terms(metric):
            words = len(norm(term).split())
            low = norm(term).strip()
            if low in generic:
                continue
            # "sales" inside "sales invoices" is the entity's name, not the revenue metric.
            inside = any(low in g and low != g for g in named_here)
            if not inside and says(haystack, term) and _QUALIFIER.match(low):
                best = max(best, 1)  # "before tax" says which total, not whose figure
            elif not inside and says(haystack, term):
                best = max(best, weight * words + words)
            elif not inside and _said_apart(haystack, low, generic):
                best = max(best, weight * words)
        if best:
            scores[name] = best
    return scores


def figures_message(catalog: Catalog, text: str) -> str:
    """The newest message that names a figure (follow-ups are joined with " ; "): the words
    that say which figures are asked, side by side or in buckets, and so stay asked when a
    later message only moves the period or the scope ("and last month?", "as a chart")."""
    segments = text.split(" ; ")
    return next((s for s in reversed(segments) if metric_scores(catalog, s)), segments[-1])


def _said_apart(haystack: str, term: str, records: set[str]) -> bool:
    """A two-word term of a measure said with words between ("the stock in Mombasa … worth"
    is the stock value): both words, in any order, at most ``_SPREAD`` words apart, in one
    message (follow-ups are joined with " ; "). Not when the other word names records ("the
    total value of quotations" is their own amount, as the record plane sums it)."""
    words = term.split()
    if len(words) != 2 or not _MEASURE_WORDS & set(words):
        return False
    present = {VALUE_WORDS.get(w, w) for w in haystack.split()}
    if not all(present & _inflections(word) for word in words):
        return False  # a word of the term is not said at all (most terms, most requests)
    for segment in haystack.split(" ; "):
        segment = f" {segment.strip()} "
        for name in sorted(records, key=len, reverse=True):
            # Records named ("sales orders") are not a word of a figure's term.
            for said in (name, f"{name}s", f"{name}es"):
                segment = segment.replace(f" {said} ", " ~ ")
        text = [VALUE_WORDS.get(w, w) for w in segment.split()]
        spots = [
            [i for i, w in enumerate(text) if w in _inflections(word) or w == word]
            for word in words
        ]
        if all(spots) and min(abs(i - j) for i in spots[0] for j in spots[1]) <= _SPREAD:
            return True
    return False
