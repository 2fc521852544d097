"""The words the planner knows, all taken from the catalog (entity, field, report, module and
metric names, labels, keywords and synonyms) plus the language of periods and questions; and
typo correction against them with rapidfuzz ("revnue" → "revenue", "yr" → "year")."""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz import fuzz, process
from rapidfuzz.distance import DamerauLevenshtein

from erp_agent.catalog import Catalog
from erp_agent.planner import shorthand

# Words of questions and periods: not catalog data, the grammar around it.
GRAMMAR = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "against",
        "all",
        "also",
        "altogether",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "average",
        "be",
        "been",
        "before",
        "below",
        "between",
        "biggest",
        "both",
        "break",
        "broken",
        "but",
        "by",
        "can",
        "chart",
        "combined",
        "compare",
        "compared",
        "count",
        "current",
        "daily",
        "day",
        "days",
        "did",
        "do",
        "does",
        "down",
        "each",
        "end",
        "ever",
        "every",
        "excel",
        "export",
        "fiscal",
        "for",
        "from",
        "give",
        "graph",
        "had",
        "has",
        "have",
        "held",
        "hold",
        "holding",
        "how",
        "i",
        "if",
        "in",
        "including",
        "is",
        "it",
        "its",
        "just",
        "largest",
        "last",
        "least",
        "less",
        "list",
        "lowest",
        "many",
        "me",
        "month",
        "monthly",
        "months",
        "more",
        "most",
        "much",
        "my",
        "next",
        "no",
        "not",
        "now",
        "number",
        "of",
        "on",
        "only",
        "or",
        "order",
        "our",
        "over",
        "overall",
        "per",
        "percent",
        "pie",
        "plot",
        "previous",
        "quarter",
        "quarterly",
        "quarters",
        "same",
        "show",
        "since",
        "so",
        "sort",
        "split",
        "still",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "today",
        "top",
        "total",
        "trend",
        "under",
        "until",
        "up",
        "us",
        "vs",
        "was",
        "we",
        "week",
        "weekly",
        "weeks",
        "what",
        "whats",
        "when",
        "where",
        "which",
        "who",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "year",
        "yearly",
        "years",
        "yesterday",
        "ytd",
        "mtd",
        "qtd",
        "you",
        "your",
        "sum",
        "worth",
        "value",
        "amount",
        "revenue",
        "sales",
        "turnover",
        "spend",
        "spent",
        "billed",
        "purchases",
        "earned",
        "received",
        "paid",
        "collected",
        "breakdown",
        "trending",
        "growth",
        "forecast",
        "projected",
        "predict",
        "expected",
        "outlook",
        "dependent",
        "concentration",
        "unusual",
        "anomalies",
        "outliers",
        "suspicious",
        # the other words intents read as "unusual": a typo fix must never turn them into a
        # catalog word ("strange" is not "storage")
        "strange",
        "odd",
        "weird",
        "irregular",
        "abnormal",
        "anomalous",
        "anomaly",
        "outlier",
        "ordinary",
        "share",
        "portion",
        "proportion",
        "percentage",
        "fraction",
        "part",
        "overdue",
        "outstanding",
        "unpaid",
        "owe",
        "owes",
        "owed",
        "approved",
        "pending",
        "draft",
        "submitted",
        "cancelled",
        "receivables",
        "payables",
        "ageing",
        "aging",
        "balance",
        "process",
        "approve",
        "approval",
        "create",
        "raise",
        "quotation",
        "submit",
        "cancel",
        "explain",
        "happens",
        "steps",
        "workflow",
    ]
)
# Everyday words near a catalog word ("send" is not "spend"): never corrected, and never
# taken for a name typed in lower case ("set up" is not a screwdriver set).
GRAMMAR |= frozenset(
    [
        # numbers and units said in words ("top five", "the second quarter", "20 rolls")
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "fifteen",
        "twenty",
        "thirty",
        "fifty",
        "hundred",
        "thousand",
        "million",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "half",
        "dozen",
        "units",
        "unit",
        "pcs",
        "pieces",
        "piece",
        "rolls",
        "roll",
        "boxes",
        "box",
        "packs",
        "pack",
        "cartons",
        "items",
        "instead",
        "again",
        "also",
        "though",
        "anyway",
        "times",
        "were",
        "is",
        "am",
        "should",
        "would",
        "might",
        "must",
        "shall",
        "ever",
        "usually",
        "set",
        "across",
        "near",
        "best",
        "good",
        "anything",
        "something",
        "everything",
        "right",
        "yet",
        "really",
        "far",
        "going",
        "doing",
        "being",
        "currently",
        "hi",
        "hello",
        "okay",
        "ok",
        "happened",
        "waiting",
        "sign",
        "off",
        "queue",
        "stopping",
        "needs",
        "stand",
        "please",
        "thank",
        "mine",
        "ones",
        "kind",
        "lot",
        "few",
        "bit",
        "too",
        "very",
        "more",
        "send",
        "sent",
        "get",
        "got",
        "make",
        "made",
        "need",
        "show",
        "tell",
        "give",
        "want",
        "like",
        "know",
        "find",
        "look",
        "please",
        "thanks",
        "there",
        "where",
        "here",
        "would",
        "could",
        "should",
        "about",
        "which",
        "while",
        "still",
        "again",
        "other",
        "every",
    ]
)

# English's function words (prepositions, conjunctions, pronouns, hedges): never a record's
# name, so "money in from Lakeside Hardware during october" is not a search for "during".
GRAMMAR |= frozenset(
    [
        "during",
        "throughout",
        "till",
        "via",
        "toward",
        "towards",
        "around",
        "upon",
        "among",
        "beside",
        "besides",
        "despite",
        "except",
        "inside",
        "outside",
        "onto",
        "into",
        "whether",
        "either",
        "neither",
        "nor",
        "although",
        "because",
        "whilst",
        "whereas",
        "unless",
        "even",
        "never",
        "already",
        "several",
        "some",
        "such",
        "another",
        "own",
        "quite",
        "rather",
        "almost",
        "nearly",
        "roughly",
        "approximately",
        "exactly",
        "nothing",
        "everyone",
        "someone",
        "anyone",
        "none",
        "whom",
        "theirs",
        "ours",
        "yours",
        "he",
        "she",
        "his",
        "her",
        "whole",
        "entire",
        "thus",
        "hence",
        "therefore",
        "kindly",
    ]
)
ABBREVIATIONS = {"yr": "year", "yrs": "years", "mth": "month", "mo": "month", "qtr": "quarter",
                 "amt": "amount", "inv": "invoice", "invs": "invoices", "cust": "customer",
                 "custs": "customers", "supp": "supplier", "qty": "quantity", "whats": "what is",
                 "hw": "how", "tot": "total", "pls": "please", "plz": "please", "u": "you",
                 "thru": "through", "wk": "week", "avg": "average", "num": "number"}  # fmt: skip
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


_CACHE: dict[int, tuple[Catalog, frozenset[str], frozenset[str]]] = {}


def _catalog_words(catalog: Catalog) -> frozenset[str]:
    """Cached per catalog object (catalogs are immutable once loaded)."""
    return _cached(catalog)[1]


def _catalog_phrases(catalog: Catalog) -> frozenset[str]:
    return _cached(catalog)[2]


def _cached(catalog: Catalog) -> tuple[Catalog, frozenset[str], frozenset[str]]:
    hit = _CACHE.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit
    phrases = _phrases(catalog)
    words = frozenset(w.lower() for p in phrases for w in _WORD.findall(p) if len(w) > 2)
    _CACHE[id(catalog)] = (catalog, words, frozenset(p.lower() for p in phrases if p))
    return _CACHE[id(catalog)]


def _phrases(catalog: Catalog) -> list[str]:
    phrases: list[str] = []
    for e in catalog.entities.values():
        phrases += [e.name.replace("_", " "), e.label, e.plural, *e.keywords, *e.synonyms]
        for name, f in e.fields.items():
            phrases += [name.replace("_", " "), f.label or ""]
            phrases += [str(v) for v in getattr(f, "values", ()) or ()]
    for r in catalog.reports.values():
        phrases += [r.label, *r.keywords]
    for m in catalog.modules.values():
        phrases += [m.label, *m.keywords]
    metrics: dict[str, Any] = getattr(catalog, "metrics", None) or {}
    for metric in metrics.values():
        phrases += [str(getattr(metric, "label", "")), *getattr(metric, "synonyms", [])]
    dimensions: dict[str, Any] = getattr(catalog, "dimensions", None) or {}
    for dim in dimensions.values():
        phrases += [str(getattr(dim, "label", "")), *getattr(dim, "synonyms", [])]
    return phrases


def known_words(catalog: Catalog) -> frozenset[str]:
    return _catalog_words(catalog) | GRAMMAR


def _month_words() -> frozenset[str]:
    import calendar

    return frozenset(
        [m.lower() for m in calendar.month_name if m]
        + [m.lower() for m in calendar.month_abbr if m]
    )


_MONTHS = _month_words()


# Everyday phrasings of a status or a comparison, said the way the catalog says them.
PHRASES = (
    (r"\bnot (?:yet )?(?:completed|complete|finished|closed)\b", "open"),
    (r"\b(?:incomplete|uncompleted|unfinished)\b", "open"),
    (r"\b(?:unsubmitted|not (?:yet )?submitted|(?:have|has)n'?t been submitted(?: yet)?|"
     r"(?:have|has) not been submitted(?: yet)?)\b", "draft"),
    (r"\b(?:waiting|awaiting) (?:for )?(?:approval|sign[- ]?off)\b", "pending approval"),
    (r"\bsign(?:ed)?[- ]off\b", "approve"),
    (r"\b(more|less|greater|fewer|other) then\b", r"\1 than"),
    (r"\b(what|how|who|where|that|it|there)['’]s\b", r"\1 is"),
)  # fmt: skip


def rephrase(text: str) -> str:
    for pattern, said in PHRASES:
        text = re.sub(pattern, said, text, flags=re.IGNORECASE)
    return text


def correct(text: str, catalog: Catalog) -> str:
    """The text with misspelt lowercase words replaced by the catalog word they are closest to.

    Capitalised words are left alone (they are names: customers, items, places), and so is any
    word the vocabulary already holds or that is too short to judge."""
    vocab = _catalog_words(catalog)
    phrases = _catalog_phrases(catalog)
    choices = sorted(vocab | GRAMMAR | _MONTHS)

    def known(phrase: str) -> bool:
        # A catalog term of these words, in the singular too ("gl entries": "gl entry").
        one = re.sub(r"ies$", "y", phrase) if phrase.endswith("ies") else phrase.removesuffix("s")
        return phrase in phrases or one in phrases

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low in ABBREVIATIONS and word == low:
            return ABBREVIATIONS[low]
        if word != low or low in vocab or low in GRAMMAR or low in _MONTHS:
            return word
        period = shorthand.period_word(low)
        if period is not None:
            return period
        if len(low) < 5:
            return word
        if low.endswith("'s") and (low[:-2] in vocab or low[:-2] in GRAMMAR):
            return word  # "this year's": a possessive, not a typo
        if any(stem in vocab or stem in GRAMMAR for stem in _stems(low)):
            return word  # "spending", "billings": a known word inflected, not "pending"
        found = process.extractOne(low, choices, scorer=fuzz.ratio, score_cutoff=84)
        if found:
            return str(found[0])
        # Two letters swapped ("ordres", "recieved"): one edit away, however short the word.
        near = process.extractOne(low, choices, scorer=DamerauLevenshtein.distance, score_cutoff=1)
        return str(near[0]) if near and len(low) >= 5 else word

    return _WORD.sub(fix, rephrase(shorthand.expand(text, known)))


def _stems(word: str) -> list[str]:
    """What an inflected word may come from: spending → spend, billings → bill, invoiced →
    invoice, shipped → ship."""
    out = []
    for end in ("ings", "ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            stem = word[: -len(end)]
            out += [stem, stem + "e"]
            if len(stem) > 3 and stem[-1] == stem[-2]:
                out.append(stem[:-1])
    return out


def loose_names(text: str, catalog: Catalog) -> list[str]:
    """Runs of lowercase words the vocabulary does not hold ("grey hamers", "nakuru"): they may
    name a record typed in lower case. The caller looks them up in the master data and keeps
    only what is found there."""
    vocab = known_words(catalog) | _MONTHS
    runs: list[list[str]] = [[]]
    for word in re.findall(r"[A-Za-z][A-Za-z'&\-]*|\S", text):
        low = word.lower().strip("'").removesuffix("'s")
        stem = low[:-1] if low.endswith("s") else low
        unknown = word == low and len(low) > 2 and low not in vocab and stem not in vocab
        if unknown and low not in ABBREVIATIONS:
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    return list(dict.fromkeys(" ".join(r) for r in runs if r))


def unknown_words(text: str, catalog: Catalog) -> list[str]:
    """Lowercase words of the text the vocabulary does not hold (what was not understood)."""
    vocab = known_words(catalog) | _MONTHS
    out = []
    for word in _WORD.findall(text):
        low = word.lower().strip("'")
        stem = low[:-1] if low.endswith("s") else low
        if word == low and len(low) > 2 and low not in vocab and stem not in vocab:
            out.append(word)
    return list(dict.fromkeys(out))
