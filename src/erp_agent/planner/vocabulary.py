"""The words the planner knows, all taken from the catalog (entity, field, report, module and
metric names, labels, keywords and synonyms) plus the language of periods and questions; and
typo correction against them with rapidfuzz ("revnue" → "revenue", "yr" → "year")."""

from __future__ import annotations

import functools
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
        "highest",
        "fewest",
        "stretch",
        "inclusive",
        "exclusive",
        # Comparisons of price: "who sells us hinges cheapest".
        "cheap",
        "cheaper",
        "cheapest",
        "dearer",
        "dearest",
        "expensive",
        "pricier",
        "priciest",
        "smallest",
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
        # How a figure is coming along ("how's this month tracking"): the figure, no slot.
        "tracking",
        "performing",
        "faring",
        "shaping",
        # Asking for a document or a figure to be brought up ("pull lakeshore's statement").
        "pull",
        "grab",
        "fetch",
        "being",
        "currently",
        "hi",
        "hello",
        "morning",
        "afternoon",
        "evening",
        "hiya",
        "howdy",
        "etc",
        "etcetera",
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

# What people ask an assistant to do before the question itself ("remind me what we last
# paid…", "can you confirm…", "just wondering…"): never a record's name.
GRAMMAR |= frozenset(
    [
        "remind",
        "recall",
        "confirm",
        "wonder",
        "wondering",
        "curious",
        "quick",
        "quickly",
        "round",
        "rank",
        "ranked",
        "ranking",
        "put",
    ]  # "last time round", "rank them all"
)

# Currencies as people write them ("in KES", "in shillings"): the figure's currency, never a
# record's name (planner/intents.py reads which one).
GRAMMAR |= frozenset(
    [
        "kes",
        "ksh",
        "kshs",
        "shilling",
        "shillings",
        "bob",
        "usd",
        "dollar",
        "dollars",
        "eur",
        "euro",
        "euros",
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
        "moment",
    ]
)
ABBREVIATIONS = {"r": "are", "rev": "revenue", "yr": "year", "yrs": "years", "mth": "month", "mo": "month", "qtr": "quarter",
                 "amt": "amount", "inv": "invoice", "invs": "invoices", "cust": "customer",
                 "custs": "customers", "supp": "supplier", "qty": "quantity", "whats": "what is", "whos": "who is",
                 "hw": "how", "tot": "total", "pls": "please", "plz": "please", "u": "you",
                 "wats": "what is", "mch": "much", "dd": "did", "mnths": "months", "sel": "sell",
                 "thru": "through", "wk": "week", "avg": "average", "num": "number",
                 "atm": "at the moment", "rn": "right now", "frm": "from", "fr": "from",
                 "wat": "what", "wht": "what", "abt": "about", "hv": "have", "ur": "your",
                 "bal": "balance", "yday": "yesterday", "lst": "last", "mnth": "month",
                 "n": "and", "tym": "time", "dept": "department", "yr's": "year's", "lpr": "last purchase rate", "ppl": "people"}  # fmt: skip
# Initialisms staff type in capitals that are never a record's code ("LPR for red sprockets").
INITIALISMS = frozenset(["LPR"])
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")

# How often a word occurs in everyday English (pyspellchecker's frequency list, built from
# subtitles and Wiktionary): a word this common is filler unless the catalog gives it a meaning
# ("came", "better", "board", "please"); rarer English words may still be a record's name
# ("contractors", "coast"); a word English does not know at all is a name or a typo.
COMMON = 50_000
RARE = 5_000  # below this, an English word may well be a place or a company's name
ENGLISH = 50  # the list's floor: a word it knows at all


def _english() -> Any:
    return _checker().word_frequency


@functools.cache
def _checker() -> Any:
    from spellchecker import SpellChecker

    return SpellChecker(distance=1)


@functools.lru_cache(maxsize=4096)
def _spelling(word: str) -> str | None:
    """An everyday English word one edit from a word English does not know ("diffrent")."""
    fixed = _checker().correction(word)
    if fixed and fixed != word and english_frequency(fixed) >= 1_000:
        return str(fixed)
    return None


def english_frequency(word: str) -> int:
    """How common ``word`` is in English (0: not an English word)."""
    low = word.lower().strip("'")
    return int(_english()[low]) if low else 0


def is_filler(word: str, catalog: Catalog) -> bool:
    """A word so common in English that, when the catalog gives it no meaning, it fills a
    sentence rather than naming anything ("could you pull it together for the board pack")."""
    low = word.lower().strip("'").removesuffix("'s")
    return low not in _catalog_words(catalog) and english_frequency(low) >= COMMON


def is_english(phrase: str) -> bool:
    """Every word of ``phrase`` is an English word (so not a misspelt or foreign name)."""
    words = _WORD.findall(phrase)
    return bool(words) and all(english_frequency(w) >= ENGLISH for w in words)


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


MONTH_WORDS = _month_words()


# Everyday phrasings of a status or a comparison, said the way the catalog says them.
_LEAVE_KINDS = "annual|sick|casual|maternity|paternity|privilege|compassionate|study|unpaid"
PHRASES = (
    (r"\bnot (?:yet )?(?:completed|complete|finished|closed)\b", "open"),
    (r"\b(?:incomplete|uncompleted|unfinished)\b", "open"),
    (r"\b(?:unsubmitted|not (?:yet )?submitted|(?:have|has)n'?t been submitted(?: yet)?|"
     r"(?:have|has) not been submitted(?: yet)?)\b", "draft"),
    (r"\b(?:waiting|awaiting) (?:for |on )?(?:approval|sign[- ]?off)\b", "pending approval"),
    # "Waiting for my sign-off" (a noun, after my/your/the) is an approval; "sign off" a verb.
    (r"\b(my|your|his|her|their|the|a|for) sign[- ]?off\b", r"\1 approval"),
    (r"\bsign(?:ed)?[- ]off\b", "approve"),
    # "Move 60 cartons from Kisumu Stores to Mombasa Stores": goods moved between two places.
    (r"^(\s*(?:please\s+|pls\s+|can you\s+|could you\s+)?)(?:move|shift)\b(?=.*\bfrom\b.*\bto\b)",
     r"\1transfer"),
    (r"\b(more|less|greater|fewer|other) then\b", r"\1 than"),
    (r"\b(what|how|who|where|that|it|there)['’]s\b", r"\1 is"),
    # Contractions, with or without the apostrophe ("haven't", "havent", "you're").
    (r"\b(ca)n['’]?t\b", r"\1n not"),
    (r"\bwon['’]t\b", "will not"),
    (r"\b(have|has|had|do|does|did|is|are|was|were|could|should|would|must|need)n['’]?t\b", r"\1 not"),
    (r"\b(you|they|we)['’]re\b", r"\1 are"),
    (r"\b(i|you|we|they)['’]ve\b", r"\1 have"),
    (r"\b(i|you|we|they|it|he|she)['’]ll\b", r"\1 will"),
    (r"\bi['’]m\b", "i am"),
    # Money not yet received is what is unpaid; not on time, what is overdue.
    (r"\b(?:have|has|had|did|do|does) not (?:we |they |you |us )?(?:yet )?paid (?:us |them )?"
     r"(?:on time|in time|by (?:the|their) due date|before (?:the|their) due date)\b|\bpaid (?:us )?late\b",
     "are overdue"),
    (r"\b(?:have|has|had|did|do|does|is|are|was|were) not (?:we |they |you |us )?(?:yet )?(?:been )?"
     r"(?:paid|settled|cleared)\b", "are unpaid"),
    (r"\b(?:still )?(?:to be|yet to be) paid\b", "unpaid"),
    # "Annual and sick leave", "annual n sick balances": each a leave type of its own (the
    # kinds ERPNext and most HR policies name).
    (rf"\b({_LEAVE_KINDS})\s+(?:and|n|&|or|\+)\s+({_LEAVE_KINDS})(?:\s+leaves?\b)?",
     r"\1 leave and \2 leave"),
    # "Kitchen taps in stock here?": here is the asker's own branch.
    (r"\b(?:(?:over |around |at |in )?here|at this branch|in this branch)(?=\s*[?.!]*\s*$)",
     "at our branch"),
    # "How many annual days do I have left?", "sick days": days of that kind of leave.
    (r"\b(annual|sick|casual|maternity|paternity|privilege|compassionate|study)\s+(days?)\b",
     r"\1 leave \2"),
    # "How many annual leave days does Dennis still have?": the leave left for that person.
    (r"\b(leave days?|days of leave|leave) (?:does|has) ([\w .'-]{2,40}?) (?:still )?(?:have|got)"
     r"(?: left)?(?=\s*[?.!]*\s*$)", r"\1 left for \2"),
    # "Quotation for faraja traders: 5 desks + 10 chairs": a document written out is one to make.
    (r"^(\s*)(?=(?:an?\s+|new\s+)?(?:quotation|quote|sales order|purchase order|po|material "
     r"request)\s+(?:for|to|with)\s+[^:?]{2,60}:\s*\d)", r"\1create "),
    # "The fattest unpaid balances", "our heaviest buyers": the biggest.
    (r"\b(?:fattest|heaviest|hugest|greatest|chunkiest|heftiest|juiciest)\b", "biggest"),
    # "Ex VAT", "b4 vat": amounts before tax.
    (r"\bex[- .]?(vat|tax(?:es)?|gst)\b", r"excluding \1"),
    (r"\bb4\b", "before"),
    # "More than 60 days late", "late by 30 days": an age past the due date, not attendance.
    (r"\b(\d{1,3}\+?\s*days?)\s+late\b", r"\1 overdue"),
    (r"\blate by (\w+\s+days?)\b", r"overdue by \1"),
    # "60 days past the due date", "owe us money past their due date": overdue.
    (r"\b(\d{1,3}\+?\s*days?)\s+(?:past|after|beyond)\s+(?:the |their |its )?due dates?\b",
     r"\1 overdue"),
    (r"\b(?:past|beyond|after)\s+(?:the |their |its )?due dates?\b", "overdue"),
)  # fmt: skip


def rephrase(text: str) -> str:
    for pattern, said in PHRASES:
        text = re.sub(pattern, said, text, flags=re.IGNORECASE)
    return text


def unshout(text: str) -> str:
    """A message typed in capitals read as if typed normally: its words in lower case (ids and
    codes, which hold digits, kept as typed), so capitals stop meaning "a name"."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 8 or sum(c.isupper() for c in letters) < 0.8 * len(letters):
        return text
    return re.sub(r"[A-Za-z][A-Za-z']*(?![\w-]*\d)", lambda m: m.group(0).lower(), text)


def correct(text: str, catalog: Catalog) -> str:
    """The text with misspelt lowercase words replaced by the catalog word they are closest to.

    Capitalised words are left alone (they are names: customers, items, places), and so is any
    word the vocabulary already holds or that is too short to judge."""
    vocab = _catalog_words(catalog)
    phrases = _catalog_phrases(catalog)
    choices = sorted(vocab | GRAMMAR | MONTH_WORDS)

    def known(phrase: str) -> bool:
        # A catalog term of these words, in the singular too ("gl entries": "gl entry").
        one = re.sub(r"ies$", "y", phrase) if phrase.endswith("ies") else phrase.removesuffix("s")
        return phrase in phrases or one in phrases

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low in ABBREVIATIONS and (word == low or word in INITIALISMS):
            return ABBREVIATIONS[low]
        if word != low or low in vocab or low in GRAMMAR or low in MONTH_WORDS:
            return word
        period = shorthand.period_word(low)
        if period is not None:
            return period
        if len(low) == 4 and english_frequency(low) < ENGLISH:
            # A short word no dictionary knows, one edit from a word of ours ("totl", "invc").
            near = process.extractOne(
                low, choices, scorer=DamerauLevenshtein.distance, score_cutoff=1
            )
            return str(near[0]) if near else word
        if len(low) < 5:
            return word
        if low.endswith("'s") and (low[:-2] in vocab or low[:-2] in GRAMMAR):
            return word  # "this year's": a possessive, not a typo
        if any(stem in vocab or stem in GRAMMAR for stem in _stems(low)):
            return word  # "spending", "billings": a known word inflected, not "pending"
        if english_frequency(low) >= 500:
            return word  # a word that already means something is no typo ("paying", "folks")
        if _beside_a_name(m.string, m.start(), m.end(), vocab):
            return word  # "dennis maina": a name's other word, not "main"
        found = process.extractOne(low, choices, scorer=fuzz.ratio, score_cutoff=84)
        if found:
            return str(found[0])
        # Two letters swapped ("ordres", "recieved"): one edit away, however short the word.
        near = process.extractOne(low, choices, scorer=DamerauLevenshtein.distance, score_cutoff=1)
        if near and len(low) >= 5:
            return str(near[0])
        # Not ours: an everyday word misspelt ("diffrent"), fixed when English is sure of it.
        fixed = _spelling(low) if english_frequency(low) < ENGLISH else None
        return fixed or word

    text = rephrase(shorthand.expand(unshout(text), known))
    # "PO's", "SO's": documents' initials with an apostrophe are their plural, as "POs".
    text = re.sub(
        r"\b([A-Z]{2,4})['’]s\b",
        lambda m: m.group(1) + "s" if known(m.group(1).lower()) else m.group(0),
        text,
    )
    # Email addresses and web addresses are said verbatim: never "corrected" ("mutua@…").
    pieces, last = [], 0
    for m in _VERBATIM.finditer(text):
        pieces += [_WORD.sub(fix, text[last : m.start()]), m.group(0)]
        last = m.end()
    return "".join([*pieces, _WORD.sub(fix, text[last:])])


def _beside_a_name(text: str, start: int, end: int, vocab: frozenset[str] | set[str]) -> bool:
    """Whether a word no dictionary knows stands beside a lowercase word English knows but we
    do not ("dennis maina", "wekesa wafula"): the two are someone's name, neither a typo."""
    before = re.findall(r"[A-Za-z']+", text[:start])[-1:]
    after = re.findall(r"[A-Za-z']+", text[end:])[:1]
    for near in (*before, *after):
        low = near.lower()
        if (
            near == low
            and len(low) > 2
            and low not in vocab
            and low not in GRAMMAR
            and low not in MONTH_WORDS
            and ENGLISH <= english_frequency(low) < COMMON
        ):
            return True
    return False


_VERBATIM = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bhttps?://\S+|\bwww\.\S+")


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
    vocab = known_words(catalog) | MONTH_WORDS
    runs: list[list[str]] = [[]]
    leads: list[list[str]] = [[]]  # everyday words just before each run ("red widgets")
    ended: list[str] = []  # the word that ended each run
    previous: list[str] = []
    start = True  # at a sentence's start, where any word is capitalised ("Red widgets shipped")
    trailed: list[str] = []  # runs with the packing after them ("silver cartons")
    for word in re.findall(r"[A-Za-z][A-Za-z'&\-]*|\S", text):
        low = word.lower().strip("'").removesuffix("'s")
        stem = low[:-1] if low.endswith("s") else low
        bare = word.strip("'").removesuffix("'s").removesuffix("’s")  # "hassan's" is Hassan's
        unknown = bare == low and len(low) > 2 and low not in vocab and stem not in vocab
        parts = [p for p in low.split("-") if p]
        if len(parts) > 1 and all(p in vocab or p.rstrip("s") in vocab for p in parts):
            unknown = False  # "take-home", "year-to-date": each part a word of ours
        if unknown and low not in ABBREVIATIONS and english_frequency(low) < COMMON:
            if not runs[-1]:
                leads[-1] = previous
            runs[-1].append(bare)
        elif runs[-1]:
            runs.append([])
            leads.append([])
            ended.append(word)
            if low in PACKAGING:
                # How goods are packed may end an item's name ("silver cartons").
                trailed.append(f"{' '.join(runs[-2])} {word}")
        # A word before a name qualifies it ("grey chairs"); a catalog word only within such a
        # run ("grey office chairs"), never starting one ("debtors account activity").
        adjective = (
            (word == low or (start and word[1:] == low[1:]))
            and low.isalpha()
            and low not in GRAMMAR
            and low not in MONTH_WORDS
            and (low not in vocab or bool(previous))
        )
        previous = [*previous, low][-3:] if adjective and len(low) > 2 else []
        start = word in (".", "!", "?")
    # A run with the words before it comes first: found whole, its own words are not looked up.
    qualified = [
        " ".join([*lead[i:], *run])
        for lead, run in zip(leads, runs, strict=True)
        if run
        for i in range(len(lead))
    ]
    # Two runs joined by "&" are one name first ("the wire & cable guys").
    joined = [
        f"{' '.join(runs[i])} & {' '.join(runs[i + 1])}"
        for i in range(len(ended))
        if ended[i] == "&" and runs[i] and i + 1 < len(runs) and runs[i + 1]
    ]
    return list(dict.fromkeys([*joined, *qualified, *trailed, *(" ".join(r) for r in runs if r)]))


# How goods are packed: a word of grammar in "20 cartons of tape", the end of an item's name in
# "silver cartons".
PACKAGING = frozenset(["carton", "cartons", "box", "boxes", "pack", "packs", "roll", "rolls"])

# Words before a name that say it is one ("for acme", "customer gulf traders").
NAME_BEFORE = frozenset(["for", "from", "to", "of", "at", "by", "with", "in", "about", "against",
                         "customer", "supplier", "branch", "item", "warehouse", "territory",
                         "party", "employee", "company", "vendor", "client"])  # fmt: skip


def said_as_name(text: str, words: str, catalog: Catalog) -> bool:
    """Whether ``words`` stand where a name stands: several unknown words in a row ("gulf
    traders"), after a word that introduces a name ("in mombasa"), or before a catalog noun
    they qualify ("mombasa invoices", "coast territory")."""
    if len(words.split()) > 1:
        # Several unknown words in a row name something ("gulf traders") unless they are all
        # everyday English ("collecting faster").
        return not all(english_frequency(w) >= RARE for w in words.split())
    if words.lower().endswith("ly") and english_frequency(words) >= ENGLISH:
        return False  # an adverb ("separately") is never a name
    low = text.lower()
    m = re.search(rf"(?:^|[^\w'])({re.escape(words.lower())})(?![\w'])", low)
    if m is None:
        return False
    before = re.findall(r"[a-z][a-z']*", low[: m.start(1)])[-1:]
    after = re.findall(r"[a-z][a-z']*", low[m.end(1) :])[:1]
    if before and before[0] in NAME_BEFORE:
        return True
    # Before a noun of the catalog it qualifies ("mombasa invoices"): a name, unless it is an
    # everyday word ("insufficient stock").
    nouns = _nouns(catalog)
    return (
        bool(after)
        and english_frequency(words) < RARE
        and (after[0] in nouns or after[0].rstrip("s") in nouns)
    )


_NOUNS: dict[int, tuple[Catalog, frozenset[str]]] = {}


def _nouns(catalog: Catalog) -> frozenset[str]:
    """The words that name records or dimensions (not every word of every label)."""
    hit = _NOUNS.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    out: set[str] = set()
    for e in catalog.entities.values():
        for term in (e.label, e.plural, *e.keywords, *e.synonyms):
            out |= {w.lower() for w in _WORD.findall(term)}
    for d in (getattr(catalog, "dimensions", None) or {}).values():
        out |= {w.lower() for w in _WORD.findall(str(getattr(d, "label", "")))}
    _NOUNS[id(catalog)] = (catalog, frozenset(out))
    return _NOUNS[id(catalog)][1]


def filler_words(text: str, catalog: Catalog) -> list[str]:
    """Lowercase words that carry no slot: common English the catalog gives no meaning."""
    vocab = known_words(catalog) | MONTH_WORDS
    out = []
    for word in _WORD.findall(text):
        low = word.lower().strip("'").removesuffix("'s")
        stem = low[:-1] if low.endswith("s") else low
        if word != low or len(low) <= 2 or low in vocab or stem in vocab:
            continue
        if english_frequency(low) >= COMMON:
            out.append(low)
    return list(dict.fromkeys(out))


def described_names(text: str, catalog: Catalog) -> list[str]:
    """Everyday words that may describe a record by its name ("tape measures", "packing
    tape"): each filler word with the word after it (singular), then alone, longest first. The
    caller looks them up and keeps only what some record's name holds."""
    tokens = [t.lower() for t in _WORD.findall(text)]
    fillers = [w for w in filler_words(text, catalog) if len(w) > 3 and w.isalpha()]
    out: list[str] = []
    for word in fillers:
        at = tokens.index(word) if word in tokens else -1
        nxt = tokens[at + 1] if 0 <= at < len(tokens) - 1 else ""
        if nxt and nxt.isalpha() and nxt not in GRAMMAR and len(nxt) > 2:
            out.append(f"{word} {nxt[:-1] if nxt.endswith('s') and len(nxt) > 3 else nxt}")
    out += [w[:-1] if w.endswith("s") and len(w) > 4 else w for w in fillers]
    return list(dict.fromkeys(out))


def unknown_words(text: str, catalog: Catalog) -> list[str]:
    """Lowercase words of the text the vocabulary does not hold (what was not understood)."""
    vocab = known_words(catalog) | MONTH_WORDS
    out = []
    for word in _WORD.findall(text):
        low = word.lower().strip("'")
        stem = low[:-1] if low.endswith("s") else low
        if word == low and len(low) > 2 and low not in vocab and stem not in vocab:
            out.append(word)
    return list(dict.fromkeys(out))
