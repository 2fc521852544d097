"""Follow-ups and replies to a clarification, read against the conversation state.

The state (kept by the engine in the store) lists the conversation's recent messages. The
reading of the current message is rebuilt by replaying them: the last message that stands on
its own is read in full, and each later one edits that reading ("and last year?" changes the
period, "only Kisumu" adds a name, "break that down by branch" a grouping, "top 10 instead" the
N, "as a chart" the display); a reply to a question with choices fills the slot it asked
about. Replaying instead of storing the reading keeps the planner stateless between calls.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process, utils

from erp_agent.catalog import Catalog, Entity
from erp_agent.planner import intents, questions, vocabulary
from erp_agent.planner.filters import OWED_STATUSES
from erp_agent.planner.intents import understand
from erp_agent.planner.metric_terms import metric_scores
from erp_agent.planner.parse_amounts import parse_amount, parse_top, rank_all
from erp_agent.planner.parse_dates import (
    Period,
    month_end,
    oldest_bucket,
    parse_age,
    parse_as_of,
    parse_period,
    shift_months,
)
from erp_agent.planner.reading import Kind, Request
from erp_agent.planner.terms import explicit, norm

_LEAD = re.compile(
    r"^\s*(?:and|also|but|ok(?:ay)?|now|then|what about|how about|same for|same but|and for|"
    # "just wondering, …", "just to confirm …": an opener, not "just Nairobi".
    r"and in|only|just(?!,?\s+(?:wondering|checking|curious|asking|quickly|a quick|to (?:check|confirm|ask)))|instead|break (?:that|it|this) down|split (?:that|it|this)|"
    r"show (?:that|it|this)|make (?:that|it|this)|as an?|in an?|the same|"
    r"(?:rank|order|sort) (?:them|those|these|all|every)|"
    # "by branch", "per month": a new grouping of the last figure.
    # ("Per unit cost of …" is a price, not a grouping.)
    r"(?:(?:grouped|split|broken down|sorted) )?(?:by|per))\b(?!\s+(?:unit|piece|each|item)\b)",
    re.IGNORECASE,
)
_ANAPHORA = re.compile(r"\b(that|it|those|them|same|instead)\b", re.IGNORECASE)
# "How much of that is overdue?": a part of what was just answered, whatever it names.
_PART_OF = re.compile(r"\b(?:of|in|from) (?:that|it|those|them|these)\b", re.IGNORECASE)
# "which customers are they for?", "who are the suppliers on them?": the records in play, read
# through one of their links.
_BACK = re.compile(r"\b(they|them|those|these|their)\b", re.IGNORECASE)
# Words that choose records by what is still owed on them.
_OWED = re.compile(
    r"\b(unpaid|overdue|outstanding|owe[sd]?|owing|open|late|past due|not (?:yet |fully )?paid)\b",
    re.I,
)
_EXPORT = re.compile(r"\b(export|download|excel|xlsx|spreadsheet|csv|pdf)\b", re.IGNORECASE)
_WHY = re.compile(
    r"^\s*(why\??|how (?:did you|do you|was (?:that|this|it)|is (?:that|this|it)) (?:get|got|work|"
    r"calculat|comput|arriv|figur)\w*.*|where (?:does|did) (?:that|this) (?:number |figure )?come from.*|"
    r"explain (?:that|this|the) (?:figure|number|result)s?.*|what (?:does|did) (?:that|this) include.*)\s*$",
    re.IGNORECASE,
)
_SUBMIT = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|great|thanks|cool|good|perfect|lovely|now|then|and|so|right)[,!.]?\s+)*"
    r"(?:please\s+|can you\s+|could you\s+|go ahead and\s+)?"
    r"(submit|cancel|approve|reject)\s+(it|that|this|the (?:draft|document|one|quotation|quote|order|invoice)"
    r"(?: (?:you|we) (?:just )?(?:created|made|raised))?)\s*[.!?]*\s*$",
    re.IGNORECASE,
)
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
            "4th": 4, "fifth": 5, "5th": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
            "tenth": 10, "last": -1, "top": 1}  # fmt: skip
_ROW = re.compile(
    r"^\s*(?:and\s+|what about\s+|show me\s+|open\s+|tell me about\s+)?(?:the\s+)?"
    r"(first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|sixth|seventh|eighth|ninth|tenth|last)"
    r"(?:\s+(?:one|row|line|result|item|record|invoice|order|customer|supplier|entry))?\s*[.?!]*\s*$"
    r"|^\s*(?:row|number|no\.?|#)\s*(\d{1,3})\s*[.?!]*\s*$",
    re.IGNORECASE,
)
# "What is their credit limit?", "and its phone number": a field of the record the last
# answer was about (its top row).
_ATTRIBUTE = re.compile(
    r"^\s*(?:and\s+)?(?:(?:what|which|who)(?:'s|\s+is|\s+are|\s+was)?|show(?:\s+me)?|give me|"
    r"tell me)?\s*(?:their|its|his|her)\s+([a-z][a-z /-]{1,40}?)\s*[.?!]*\s*$",
    re.IGNORECASE,
)
# A name a follow-up adds: "only Kisumu", "and in Mombasa Stores?", "what about Kisumu?".
_ONLY = re.compile(
    r"(?:\b(?:only|just|for|in|at|about)|^\s*and)\s+(?:the\s+)?([A-Z][\w&.'\-]*(?:\s+[A-Z][\w&.'\-]*)*)"
)
_AND_NAME = re.compile(r"(?:\band|,|&|\bor)\s+([A-Z][\w&.'\-]*(?:\s+[A-Z][\w&.'\-]*)*)")
_EXPORT_FORMATS = {
    "excel": "xlsx",
    "xlsx": "xlsx",
    "spreadsheet": "xlsx",
    "csv": "csv",
    "pdf": "pdf",
}


@dataclass
class Reading:
    """The current message's meaning once the conversation is taken into account."""

    req: Request
    follow_up: bool = False  # the message edits an earlier request
    company: str | None = None  # a company the user picked in reply to a question
    unmatched_reply: str | None = None  # a reply to choices that matches none of them
    pending: Mapping[str, Any] | None = None
    edits: list[str] = field(default_factory=list)
    orphan: bool = False  # a follow-up ("and last year?") with nothing earlier to follow


# "list them", "show me those payments", "which invoices are those?": the records behind the
# last figure.
_LIST_THEM = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|great|thanks|cool|and|now|so|then)[,!.]?\s+)*(?:please\s+|can you\s+|could you\s+)?"
    r"(?:(?:list|show|give|display)(?: me| us)?(?: all)?\s+(?:of\s+)?(?:them|those|these|the ones"
    r"|the (?:records|documents|invoices|orders|payments|entries|bills|lines|details)|those \w+|these \w+)"
    # ("What are they worth?" asks what they add up to, not which they are.)
    r"|(?:which|what) (?:\w+ )?(?:are|were) (?:they|those|these)(?!\s+(?:worth|in total|total)))\b",
    re.IGNORECASE,
)


def lists_them(text: str) -> bool:
    """Whether the message asks for the records behind the last answer."""
    return bool(_LIST_THEM.match(text))


def export_format(text: str) -> str | None:
    m = _EXPORT.search(text)
    if not m:
        return None
    low = text.lower()
    return next((f for w, f in _EXPORT_FORMATS.items() if w in low), "xlsx")


def asks_why(text: str) -> bool:
    return bool(_WHY.match(text))


def attribute_of(text: str) -> str | None:
    """The field words of "what is their credit limit?" (a field of the last answer's record);
    "what's it worth?" asks its total."""
    if _WORTH.match(text):
        return "total"
    m = _ATTRIBUTE.match(text)
    return m.group(1).strip().lower() if m else None


_WORTH = re.compile(
    r"^\s*(?:and\s+|ok(?:ay)?,?\s+|so\s+)?(?:what\s+is|what's|whats|how much\s+is)\s+"
    r"(?:it|that|this)(?:\s+one)?\s+(?:worth|for|valued at)\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def row_ordinal(text: str) -> int | None:
    m = _ROW.match(text)
    if not m:
        return None
    if m.group(2):
        return int(m.group(2))
    return ORDINALS[m.group(1).lower()]


def submit_verb(text: str) -> str | None:
    m = _SUBMIT.match(text)
    return m.group(1).lower() if m else None


# A reply that is only a name ("Harbor Goods", "and Kisumu?"): the last question, for it.
# A follow-up of one to three lowercase words that English rarely uses ("houston?", "and
# kisumu"): a name typed in lower case.
_BARE_LOWER = re.compile(
    r"^\s*(?:and\s+|what about\s+|how about\s+)?([a-z][a-z&'\-]*(?:\s+[a-z][a-z&'\-]*){0,2})"
    r"\s*[?.!]?\s*$"
)
_RARE = 5000
_BARE_NAME = re.compile(
    r"^\s*(?:and\s+|what about\s+|how about\s+)?((?:[A-Z][\w&.'\-]*\s*){1,4})[?.!]?\s*$"
)


# "How many invoices is that?", "which of those are more than 90 days late?": the records of
# the last answer, counted or listed, whatever records they are named as.
_OF_THOSE = re.compile(
    r"\b(?:is|are|was|were) (?:that|those|these|they|it)\s*[?.!]*\s*$"
    r"|\b(?:which|how many|what) of (?:those|them|these|that)\b",
    re.I,
)


def _edits_last(text: str) -> bool:
    """A message that opens like an edit of the last one, sums or picks from its records, or
    names a bucket of the ageing just shown ("which invoice is in the oldest bucket?")."""
    return bool(
        _LEAD.match(text)
        or questions.says("sum_only", text)
        or oldest_bucket(text) is not None
        or _OF_THOSE.search(text)
    )


def stands_alone(req: Request, text: str, catalog: Catalog) -> bool:
    """A message that names its own subject and does not open like an edit of the last one."""
    if _edits_last(text) and not req.doc_ids:
        return False
    if _BARE_NAME.match(text) and not req.doc_ids and req.report is None:
        return False
    if req.doc_ids or (req.report is not None and not _PART_OF.search(text)):
        return True
    if req.entity is not None and explicit(req.entity, norm(text)):
        return True
    named = metric_scores(catalog, text) or questions.meant_metrics(text)
    if named and not _ANAPHORA.search(text):
        return True
    return req.kind not in (Kind.UNKNOWN,) and not _ANAPHORA.search(text)


def match_choice(text: str, options: Sequence[Mapping[str, Any]]) -> str | None:
    """The option a short reply picks: its number, an ordinal, its value or label (typos too)."""
    reply = text.strip().strip(".!?").strip()
    if not reply or not options:
        return None
    values = [str(o.get("value") or o.get("label") or "") for o in options]
    labels = [str(o.get("label") or "") for o in options]
    low = reply.lower()
    if low.isdigit() and 1 <= int(low) <= len(options):
        return values[int(low) - 1]
    words = low.removeprefix("the ").split()
    if words and words[0] in ORDINALS and len(words) <= 3:
        n = ORDINALS[words[0]]
        return values[n - 1 if n > 0 else -1] if abs(n) <= len(options) else None
    for value, label in zip(values, labels, strict=True):
        if low in (value.lower(), label.lower()):
            return value
    told = _told_apart(words, labels)
    if told is not None:
        # -1: only words every option has ("athi river" of two Athi River suppliers).
        return values[told] if told >= 0 else None
    found = process.extractOne(
        reply, labels, scorer=fuzz.WRatio, processor=utils.default_process, score_cutoff=80
    )
    return values[found[2]] if found else None


# "And the plastics one?", "what about the other one": another option of a choice made before.
_OTHER_OPTION = re.compile(
    r"^\s*(?:and|what about|how about|same for|now|ok(?:ay)?,?\s+(?:and|now)?)?\s*"
    r"(the\s+[\w&'-]+(?:\s+[\w&'-]+)?\s+one)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# Words of a reply that point at an option without naming it: "the electricals one, please".
_POINTING = frozenset(["the", "one", "ones", "please", "pls", "i", "mean", "meant", "it's", "its",
    "that", "this", "is", "it", "yes", "yeah", "ok", "okay", "oh", "sorry", "thanks", "guy",
    "company", "supplier", "customer", "item", "account", "employee", "a", "an", "of", "from",
    "with", "in", "at", "we", "our", "use", "want", "need", "one's", "obviously", "sure"])  # fmt: skip
_STEM = 6  # letters two words must share to be one word said two ways ("electrical(s)")


def _told_apart(words: Sequence[str], labels: Sequence[str]) -> int | None:
    """The one option whose own words (those no other option has) hold every word the reply
    says beyond pointing at one: "the electricals one" of Athi River Plastics Limited and Athi
    River Electricals Ltd. -1 when every option has them all."""
    said = [w.strip(",.!?'\"") for w in words if w.strip(",.!?'\"") not in _POINTING]
    if not said or len(said) > 3:
        return None
    owned = [set(re.findall(r"[a-z0-9]+", label.lower())) for label in labels]

    def has(word: str, of: set[str]) -> bool:
        # The same word, or one said two ways: a long shared start or a near spelling.
        long = [w for w in of if min(len(w), len(word)) >= _STEM]
        return word in of or any(
            w[:_STEM] == word[:_STEM] or fuzz.ratio(w, word) >= 90 for w in long
        )

    hits = [i for i, own in enumerate(owned) if all(has(w, own) for w in said)]
    if len(hits) == len(labels) > 1:
        return -1
    if len(hits) != 1:
        return None
    others = set().union(*(o for i, o in enumerate(owned) if i != hits[0]))
    # At least one word said is this option's alone, not a word every option has.
    return hits[0] if any(not has(w, others) for w in said) else None


# "And last year?", "same month last year", "a year earlier": the period asked before, a year
# back. "The previous quarter", "the month before": the unit before the one asked.
_YEAR_BACK = re.compile(
    r"^\s*(?:and\s+|what about\s+|how about\s+|same for\s+)?(?:(?:over|for|in|during)\s+)?(?:the\s+)?"
    r"(?:(?:same|corresponding)\s+"
    r"(?:month|quarter|period|time|days?|week|stretch|span|window|dates?)\s+(?:of\s+)?)?"
    r"(?:last year|a year (?:ago|earlier|before)|"
    r"the year before|(?:the\s+)?prior year|(?:the\s+)?previous year)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_SAME = re.compile(r"\b(?:same|corresponding)\b", re.IGNORECASE)
_UNIT_BACK = re.compile(
    r"^\s*(?:and\s+|what about\s+|how about\s+)?(?:the\s+)?(?:previous|prior|last|preceding)\s+"
    r"(month|quarter|year)(?:\s+before)?\s*[?.!]*\s*$|"
    r"^\s*(?:and\s+|what about\s+|how about\s+)?the\s+(month|quarter|year)\s+before"
    r"(?:\s+that)?\s*[?.!]*\s*$|"
    # "And net for the month before?": a figure's word or two, then the shift.
    r"^\s*(?:and\s+|what about\s+|how about\s+)?(?:[a-z]+\s+){1,3}(?:for|in|over)\s+the\s+"
    r"(month|quarter|year)\s+before(?:\s+that)?\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def shifted(period: Period | None, text: str, today: dt.date | None = None) -> Period | None:
    """The earlier period a shift follow-up means, relative to the period asked before ("the
    same stretch last year" of this year so far: the same days a year back)."""
    if period is None:
        return None
    if _YEAR_BACK.match(text):
        months = 12
        if today is not None and period.start <= today < period.end and _SAME.search(text):
            period = Period(period.start, today, period.label)
    else:
        m = _UNIT_BACK.match(text)
        if m is None:
            return None
        unit = m.group(1) or m.group(2) or m.group(3)
        span = (
            (period.end.year - period.start.year) * 12 + period.end.month - period.start.month + 1
        )
        if {"month": 1, "quarter": 3, "year": 12}[unit.lower()] != span or period.start.day != 1:
            return None  # "the previous quarter" of a year: read the words on their own
        months = span
    start = shift_months(period.start, -months)
    end = shift_months(period.end, -months)
    if period.end == month_end(period.end.year, period.end.month):
        end = month_end(end.year, end.month)
    return Period(start, end, f"{start} to {end}")


def _sum_of_them(base: Request, text: str) -> bool:
    """'How much is that in total?' after a list: the records in play summed, as what they
    still owe when they were chosen as owed. Whether the message asked that."""
    e = base.entity
    if e is None or not e.amount_field or base.kind not in (Kind.LIST, Kind.COUNT):
        return False
    if not questions.says("sum_of_them", text):
        return False
    base.kind = Kind.TOTAL
    owed = bool(base.statuses) and set(base.statuses) <= set(OWED_STATUSES)
    if "outstanding" in e.fields and (_OWED.search(base.text) or owed):
        base.fields_asked = ["outstanding"]
    return True


def _new_top(base: Request, text: str) -> bool:
    """'Top 10 instead', 'rank all four': how many groups of the figure to show, set on
    ``base``; whether the message said so."""
    ranked_all, count = rank_all(text)
    if ranked_all and (base.group is not None or base.top is not None):
        base.top = count  # every group when no number is said
        return True
    if re.search(r"\b(top|largest|biggest|best|highest)\b", text, re.I):
        top = parse_top(text)
        if top is not None:
            base.top = top
            return True
    return False


_BARE_AGE = re.compile(
    r"^\s*(?:(?:and|what about|how about|ok|now)\s+)*(?:the\s+)?"
    r"(?:\d{1,3}\s*(?:-|–|to)\s*\d{1,3}|(?:over|more than|above|beyond)\s+\d{1,3}|\d{1,3}\s*\+)"
    r"(?:\s+(?:bucket|band|range))?\s*[?.!]*\s*$",
    re.IGNORECASE,
)


def _amount_and_age(base: Request, text: str) -> list[str]:
    """An amount or an age a follow-up sets ("over 500k", "and 61 to 90?"); the slots set."""
    changed: list[str] = []
    aged_again = base.age_days is not None and _BARE_AGE.match(text) is not None
    amount = None if aged_again else parse_amount(text)  # "and over 90?": days, not money
    if amount is not None:
        base.amount = amount
        changed.append("amount")
    age, until = parse_age(text)
    if age is None and aged_again:
        # "and 61 to 90?", "and over 90?" after an age: the same words of days past due.
        age, until = parse_age(f"{text.rstrip('?. ')} days overdue")
    if age is not None:
        base.age_days, base.age_until = age, until
        changed.append("age")
    return changed


def refine(base: Request, text: str, catalog: Catalog, today: dt.date) -> list[str]:
    """Apply one follow-up message to ``base`` in place; the names of the slots it changed."""
    changed: list[str] = []
    haystack = norm(text)
    period = shifted(base.period, text, today) or parse_period(text, today)
    if period is not None:
        base.period, base.as_of = period, None
        changed.append("period")
    as_of = parse_as_of(text, today)
    if as_of is not None:
        base.as_of = as_of
        changed.append("as_of")
    if _new_top(base, text):
        changed.append("top")
    e = base.entity
    if e is not None:
        group, part = intents.group_of(e, haystack, catalog)
        if group is None:
            group = linked_group(e, text, catalog)
        if group is not None and group != "currency":  # every sum is per currency already
            base.group, base.date_part = group, part
            changed.append("group")
        statuses = intents.status_words(e, haystack)
        if statuses:
            base.statuses = statuses
            changed.append("status")
    if _sum_of_them(base, text):
        changed.append("total")
    elif _OF_THOSE.search(text):
        # The records behind the last answer: counted, or listed ("which of those …").
        base.kind = Kind.COUNT if questions.says("count", text) else Kind.LIST
        changed.append("kind")
    changed += _amount_and_age(base, text)
    if intents.CHART.search(text):
        base.chart = True
        changed.append("chart")
    if re.search(r"\b(as a )?table\b", text, re.I):
        base.chart = False
        changed.append("table")
    names = [m.group(1) for m in _ONLY.finditer(text)]
    # "just Nairobi and Kisumu", "only Acme, Gulf Traders": every name of the list.
    for m in _AND_NAME.finditer(text):
        if names and m.group(1) not in names:
            names.append(m.group(1))
    bare = _BARE_NAME.match(text)
    if bare and not names:
        names = [bare.group(1).strip()]
    names = [n for n in names if not re.fullmatch(r"(Q[1-4]|[A-Z][a-z]+ \d{4})", n)]
    names = [
        n for n in names
        if parse_period(f"in {n}", today) is None and n.lower() not in ("excel", "pdf")
    ]  # fmt: skip
    if names and re.search(r"\b(only|just)\b", text, re.I):
        base.names = [(h, v) for h, v in base.names if h is not None]
    for value in names:
        base.names.append((None, value))
        changed.append("name")
    base.text = f"{base.text} ; {text}"
    # A list regrouped asks for totals; a count regrouped ("how many …?", "per branch") is
    # still a count.
    if base.kind == Kind.LIST and (base.group or base.top) and e and e.amount_field:
        base.kind = Kind.TOTAL
    return changed


def linked_group(entity: Entity, text: str, catalog: Catalog) -> str | None:
    """The link of ``entity`` a message about its records names the target of ("which customers
    are they for?" of sales orders: their customer), when it asks nothing of the target's own
    fields ("what credit limit do those customers have?" is about the customers themselves)."""
    if not _BACK.search(text):
        return None
    haystack = norm(text)
    for name, f in entity.fields.items():
        target = catalog.entities.get(f.target or "")
        if not f.groupable or target is None or target.name == entity.name:
            continue
        if not explicit(target, haystack):
            continue
        own = (g for n, g in target.fields.items() if n not in entity.fields and not g.title)
        if any(_says(haystack, t) for g in own for t in (g.label, g.name.replace("_", " "))):
            return None
        return name
    return None


def _says(haystack: str, phrase: str) -> bool:
    """The phrase in the words, or its plural ("credit limit", "credit limits")."""
    p = norm(phrase).strip()
    return bool(p) and any(f" {p}{end} " in haystack for end in ("", "s", "es"))


def read(
    catalog: Catalog, connector: str, text: str, today: dt.date, state: Mapping[str, Any]
) -> Reading:
    """The current message read with the conversation's earlier messages (see module doc)."""
    entries = [e for e in state.get("requests", []) if isinstance(e, dict) and e.get("text")]
    pending = state.get("pending") if isinstance(state.get("pending"), dict) else None
    entries = [*entries, {"text": text, "pending": pending, "current": True}]
    reading: Reading | None = None
    chosen: dict[str, Any] | None = None  # the last question with choices a reply answered
    for entry in entries:
        message = vocabulary.correct(str(entry["text"])[:600], catalog)
        asked = entry.get("pending")
        current = bool(entry.get("current"))
        req = understand(catalog, connector, message, today)
        if isinstance(asked, dict) and reading is not None:
            value = match_choice(message, asked.get("options") or [])
            if value is not None:
                _fill_slot(reading, str(asked.get("slot") or ""), value)
                reading.follow_up = True
                chosen = asked
                continue
            if not stands_alone(req, message, catalog):
                if current:
                    reading.unmatched_reply, reading.pending = message, asked
                continue
        other = _OTHER_OPTION.match(message) if chosen is not None and reading else None
        value = (
            match_choice(other.group(1), chosen.get("options") or []) if other and chosen else None
        )
        if value is not None and reading is not None and chosen is not None:
            # "And the plastics one?" after picking Athi River Electricals: the same question
            # of another of the options offered then.
            _fill_slot(reading, str(chosen.get("slot") or ""), value)
            reading.follow_up = True
            continue
        grouped = (
            reading is not None
            and reading.req.entity is not None
            and (linked_group(reading.req.entity, message, catalog) is not None)
        )
        unrelated = reading is not None and not grouped and _unrelated(message, catalog)
        if unrelated and not current and req.kind == Kind.UNKNOWN:
            continue  # an aside that was not understood leaves the question in play as it was
        if reading is None or unrelated or (not grouped and stands_alone(req, message, catalog)):
            edit_words = _LEAD.match(message) or re.search(r"\binstead\b", message, re.I)
            alone = stands_alone(req, message, catalog) or not edit_words
            reading = Reading(req, orphan=current and not alone)
            continue
        _swap_entity(reading.req, req, message)
        if not current:
            refine(reading.req, message, catalog, today)
            continue
        reading.edits = refine(reading.req, message, catalog, today)
        reading.follow_up = True
    assert reading is not None
    return reading


def _unrelated(message: str, catalog: Catalog) -> bool:
    """A message that is no edit of the last question: it does not open like one, refers to
    nothing earlier, and says something none of our words mean ("what's the weather in
    Nairobi?" after a sales question is not Nairobi's sales)."""
    if _edits_last(message) or _ANAPHORA.search(message) or _BARE_NAME.match(message):
        return False
    bare = _BARE_LOWER.match(message)
    if bare and all(vocabulary.english_frequency(w) < _RARE for w in bare.group(1).split()):
        return False  # "houston?": a place or party typed in lower case, as a follow-up
    strange = [w for w in vocabulary.unknown_words(message, catalog) if vocabulary.is_english(w)]
    return bool(strange)


def _swap_entity(base: Request, said: Request, text: str) -> None:
    """'and suppliers?' after 'how many customers?': the same question of other records."""
    new = said.entity
    if new is None or base.entity is None or new.name == base.entity.name:
        return
    if new.kind == base.entity.kind and explicit(new, norm(text)):
        base.entity = new
        base.statuses = []


def _fill_slot(reading: Reading, slot: str, value: str) -> None:
    if slot == "company":
        reading.company = value
        return
    dim, _, asked = slot.removeprefix("name:").partition(":")
    hint = dim or None
    names = reading.req.names
    if asked:
        # The words the question was about give way to the record picked for them.
        names = [(h, v) for h, v in names if v.lower() != asked.lower()]
        reading.req.items = [c for c in reading.req.items if c.lower() != asked.lower()]
        reading.req.settled.append(asked)
    reading.req.names = [(h, v) for h, v in names if h != hint or hint is None]
    reading.req.names.append((hint if hint and hint != "name" else None, value))
