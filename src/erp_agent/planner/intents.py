"""A request's meaning, read with the catalog: entity, report, fields, values, dates, amounts.

Everything is matched against catalog data (entity keywords, synonyms, labels, field labels,
enum values, report keywords, document-id patterns), never against example sentences, so
paraphrases and values the code has never seen are understood the same way.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum

from erp_agent.catalog import Catalog, Entity, FieldType, Report
from erp_agent.planner.direction import direction_field, direction_filter, money_direction
from erp_agent.planner.parse_amounts import Amount, parse_amount, parse_top
from erp_agent.planner.parse_dates import Period, parse_age_days, parse_as_of, parse_period


class Kind(StrEnum):
    LIST = "list"
    COUNT = "count"
    TOTAL = "total"
    TREND = "trend"
    FORECAST = "forecast"
    CONCENTRATION = "concentration"
    ANOMALIES = "anomalies"
    REPORT = "report"
    DOCUMENT = "document"
    WORKFLOW = "workflow"
    KNOWLEDGE = "knowledge"
    FIND = "find"
    WRITE = "write"
    UNKNOWN = "unknown"


WRITE_VERBS = ("create", "raise", "draft", "prepare", "make", "add", "new", "quote", "approve", "reject",
               "submit", "cancel", "delete", "remove", "mark", "set", "update", "change")  # fmt: skip
# What people say before the verb of a change: "please approve", "ok to approve", "go ahead and".
_POLITE = (
    r"(?:please\s+|can you\s+|could you\s+|ok(?:ay)?,?\s+(?:to\s+|please\s+)?|go ahead and\s+|"
    r"i(?:'d| would) like to\s+|i want to\s+|let'?s\s+)+"
)
_COUNT = re.compile(r"\b(how many|number of|count of|count\b|headcount|how much of)")
_TOTAL = re.compile(
    r"\b(total|sum|how much|worth|value|amount|revenue|sales|turnover|spend|spent|billed|bill(?:ed)?|"
    r"billings?|invoiced|purchases|earned|received|paid|collected|by\s+\w+|per\s+\w+|breakdown|"
    r"top|largest|biggest)\b"
)
# "What have we invoiced / did we sell / have they spent": the amount of what was done, a figure
# (not the documents that did it), whatever the verb.
_WHAT_DONE = re.compile(
    r"^\s*(?:so\s+|and\s+)?what\s+(?:have|has|had|did|do|does)\s+(?:we|i|you|they|our \w+)\s+"
    r"(?!(?:have|got|need|want|get|know|mean|say|see|think)\b)(?:\w+ly\s+)?\w+"
)
# "What did Gulf Traders pay us?", "what has Acme spent": a party's money verb, a figure too.
_WHAT_PAID = re.compile(
    r"^\s*(?:so\s+|and\s+)?what\s+(?:have|has|had|did|do|does)\s+(?:[\w&.'-]+\s+){1,6}?"
    r"(?:pay|paid|spen[dt]|owe|bought|buy|invoiced?|billed?|earn(?:ed)?|collect(?:ed)?|receive[d]?)\b"
)
# Comparing a figure with an earlier period: "vs last year", "more than last year".
COMPARE = re.compile(
    r"\b(compared?|comparison|comparing|vs\.?|versus|year on year|yoy|(?:than|against|with) "
    r"(?:the )?(?:last|previous|prior) (?:year|quarter|month)(?:'s)?)\b"
)
_TREND = re.compile(
    r"\b(trends?|trending|over time|growth|growing|month on month|month over month|going up|"
    r"going down|up or down|rising|falling|increasing|decreasing|declining|improving)\b"
    r"|" + COMPARE.pattern
)
_FORECAST = re.compile(
    r"\b(forecast|projected|projection|predict|expected|next month's|outlook)\b|\bwill\b.*\bbe\b"
    r"|\bwill (?:we|they|it)\b.*\bnext (?:week|month|quarter|year)\b"
)
_CONCENTRATION = re.compile(
    r"\b(dependent|dependence|depend|concentration|concentrated|reliant|reliance|share of)\b"
    # A part of a whole that comes from the biggest few: "how much of our sales is from the
    # top three clients?", "what portion of purchases goes to our five largest suppliers".
    r"|\b(?:how much|what part|what portion|what proportion|what percentage|what fraction|"
    r"which part|what %) of\b.*\b(?:top|biggest|largest|main|leading|few)\b"
    r"|\b(?:percentage|proportion|portion|fraction) of\b"
)
_ANOMALY = re.compile(
    r"\b(unusual|anomal\w*|outliers?|odd|odd-looking|suspicious|strange|irregular|weird|abnormal|"
    r"out of the ordinary)\b"
)
_KNOWLEDGE = re.compile(
    r"^\s*(how (?:do|does|can|should|to)|what happens|what is the (?:process|procedure|policy)|"
    r"explain|why do we|what are the steps|steps to|walk me through)\b"
    # Process questions phrased later in the sentence: "if I cancel …, what happens?"
    r"|\bwhat happens\b|\bhow does (?:it|this|that|the \w+|\w+) work\b|\beffects? of\b"
    r"|\bwhat does (?:cancel+ing|submitting|amending|approving) (?:an? |the )?\w+ do\b"
)
# What an action on a kind of document does, or whether it may be done: "can I cancel a
# submitted invoice and what does it do to the ledger?". With no document named this asks how
# the process works (the knowledge base), not for a list of records.
_ACTION_QUESTION = re.compile(
    r"\bwhat (?:does|will|would) (?:it|this|that|doing (?:it|so)) do\b"
    r"|\bwhat (?:does|will|would) (?:it|this|that) (?:do|mean) (?:to|for)\b"
    r"|^\s*(?:can|may|could|should) (?:i|we|you|one) (?:still )?(?:cancel|amend|submit|delete|"
    r"reverse|undo|edit|change|return|void)\b.*\b(?:what|how|and|then|affect|effect|impact)\b"
    r"|\b(?:how|what) (?:does|will|would) (?:cancel+ing|amending|submitting|reversing|deleting) "
    r"(?:an? |the )?[\w ]{1,30}? (?:affect|change|impact)\b"
)
_WORKFLOW = re.compile(
    r"\b(why can'?t|why cannot|why can not|why is .* (?:blocked|stuck)|waiting for my approval|awaiting my approval|pending my approval|my approvals?|what can i do with|who (?:can|must|should) approve|next step)\b"
    r"|\b(?:i|we) (?:need|have|must|should|got) to approve\b|\bfor me to approve\b"
    r"|\b(?:my )?approval queue\b|\bpending approval\b"
)
_FIND = re.compile(
    r"\b(the (?:one|invoice|order|bill|quote|quotation) (?:for|with|where|that|we)|find the|look up the|that we sent|we sent|we bought|we received)\b"
)
# "How much have we received from X": a figure, though "we received" may find one document.
_FIGURE = re.compile(r"\b(how much|total|sum|in all|altogether)\b")
_CHART = re.compile(r"\b(chart|graph|plot|visuali[sz]e|bar|pie|line chart)\b")
_GROUP = re.compile(
    r"\b(?:by|per|for each|each|broken down by|split by|grouped by)\s+([a-z][a-z ]{1,30}?)(?=\s+(?:this|last|next|in|for|since|during|as|from|between|over|and)\b|[?.,!]|$)"
)
_DATE_PARTS = {"month": "month", "monthly": "month", "quarter": "quarter", "quarterly": "quarter",
               "year": "year", "yearly": "year", "annually": "year", "annual": "year"}  # fmt: skip
_AGEING = re.compile(r"\b(ageing|aging|aged|receivables?|payables?|debtors|creditors)\b")
_NAME = re.compile(r"(?:(?<=\s)|^)((?:[A-Z][\w&.'\-]*)(?:\s+(?:&\s+)?[A-Z][\w&.'\-]*)*)")
_STOP = {"I", "What", "Which", "Who", "How", "Show", "List", "Give", "Find", "The", "Our", "We",
         "Please", "Can", "Could", "Is", "Are", "Any", "Do", "Does", "Tell", "Compare", "Why",
         "Create", "Approve", "Reject", "Submit", "Cancel", "Mark", "Q1", "Q2", "Q3", "Q4", "YTD", "MTD", "QTD",
         "Total", "Revenue", "Make", "Raise", "Draft", "Set", "Update", "Delete", "This", "Last",
         "Next", "Top", "And", "Of", "In", "For", "Me", "My", "Us", "A", "An", "SO", "PO",
         "P&L", "AR", "AP", "GL", "Projected", "When", "Where", "Has", "Have", "Was", "Were"}  # fmt: skip


# Sentence-initial words that are capitalised only because they start the request.
_LEADING = {"sum", "number", "count", "total", "tell", "look", "status", "list", "show", "which",
            "revenue", "sales", "purchases", "overdue", "outstanding", "unpaid", "open", "pending",
            "standard", "reorder", "credit", "value", "average", "top", "biggest", "largest",
            "monthly", "quarterly", "yearly", "all", "every", "current", "latest", "recent",
            "new", "draft", "customer", "supplier", "item", "invoice", "invoices", "orders"}  # fmt: skip


@dataclass
class Request:
    text: str
    kind: Kind = Kind.UNKNOWN
    entity: Entity | None = None
    report: Report | None = None
    doc_ids: list[tuple[Entity, str]] = field(default_factory=list)
    period: Period | None = None
    as_of: dt.date | None = None
    age_days: int | None = None
    amount: Amount | None = None
    top: int | None = None
    group: str | None = None  # a field name of the entity
    date_part: str | None = None  # month | quarter | year
    chart: bool = False
    statuses: list[str] = field(default_factory=list)  # values of the entity's status field
    enum_filters: dict[str, list[str]] = field(default_factory=dict)  # other enum fields
    fields_asked: list[str] = field(default_factory=list)  # fields the question names
    names: list[tuple[str | None, str]] = field(default_factory=list)  # (field or None, value)
    verb: str | None = None
    target_value: str | None = None  # "mark … as <value>"
    loose_ids: list[str] = field(default_factory=list)  # ids of no known entity
    compared_field: str | None = None  # "below reorder level": a field compared with another
    items: list[str] = field(default_factory=list)  # item codes
    settled: list[str] = field(default_factory=list)  # words a clarification already resolved


_NORM_WORD = re.compile(r"[a-z0-9&][a-z0-9&\-']*")


@functools.lru_cache(maxsize=65536)
def norm(text: str) -> str:
    # Cached: the planner compares every catalog term with the text many times per request.
    return " " + " ".join(_NORM_WORD.findall(text.lower())) + " "


def _has(haystack: str, phrase: str) -> bool:
    p = norm(phrase).strip()
    if not p:
        return False
    if f" {p} " in haystack:
        return True
    # A plural in the text for a singular term ("invoice" → "invoices"); never the other way
    # round, which turns "goods" into "good".
    return any(f" {p}{end} " in haystack for end in ("s", "es"))


def _has_verb_form(haystack: str, phrase: str) -> bool:
    """'invoiced', 'billed': weaker evidence than the noun ("projected" is not a project)."""
    p = norm(phrase).strip()
    return bool(p) and any(f" {p}{end} " in haystack for end in ("d", "ed"))


def _score_terms(haystack: str, terms: list[tuple[str, int]]) -> int:
    strong = max((w * len(norm(t).split()) for t, w in terms if _has(haystack, t)), default=0)
    return strong or int(any(_has_verb_form(haystack, t) for t, _ in terms))


def entity_scores(catalog: Catalog, haystack: str) -> dict[str, int]:
    scores: dict[str, int] = {}
    for entity in catalog.entities.values():
        terms = [(entity.label, 3), (entity.plural, 3), (entity.name.replace("_", " "), 3)]
        terms += [(k, 2) for k in entity.keywords] + [(s, 2) for s in entity.synonyms]
        score = _score_terms(haystack, terms)
        if score and entity.status_field:
            # A status of this entity named too ("orders still to bill") breaks ties its way.
            own = norm(" ".join((entity.label, entity.plural)))
            values = entity.fields[entity.status_field].values
            score += any(_has(haystack, v) and norm(v) not in own for v in values if " " in v)
        if score:
            scores[entity.name] = score
    return scores


def report_scores(catalog: Catalog, haystack: str) -> dict[str, int]:
    scores: dict[str, int] = {}
    for report in catalog.reports.values():
        score = _score_terms(haystack, [(report.label, 3), *((k, 2) for k in report.keywords)])
        if score:
            scores[report.name] = score
    return scores


def _pick_entity(catalog: Catalog, haystack: str) -> Entity | None:
    scores = entity_scores(catalog, haystack)
    if not scores:
        return None
    order = list(catalog.entities)
    best = catalog.entities[max(scores, key=lambda n: (scores[n], -order.index(n)))]
    # A master named next to a transaction is usually its filter or grouping ("bill the Nakuru
    # branch", "top customers by revenue"): the transaction that links to it is the subject.
    if best.date_field is None:
        linked = [
            catalog.entities[n]
            for n in scores
            if catalog.entities[n].date_field is not None
            and _links_to(catalog.entities[n], best.name)
        ]
        if linked:
            return max(linked, key=lambda e: (scores[e.name], -order.index(e.name)))
    return best


_QUANTITY = re.compile(r"\b(units?|qty|quantity|quantities|stock|pieces|pcs|items?|goods)\b")


def _money_moved(catalog: Catalog, low: str, named: Entity | None) -> Entity | None:
    """'How much did we receive from Acme?' names no records, but money that came in or went
    out: the records that carry the direction (payments), unless it is goods that moved. So
    is a sum of money moved from or to a master ("how much cash did we get from customers"):
    as with a master beside a transaction, the payments that link to it are the subject."""
    if _QUANTITY.search(low) or money_direction(low) is None:
        return named
    money = next((e for e in catalog.entities.values() if direction_field(e)), None)
    if named is None or money is None:
        return named or money
    moved_with = named.date_field is None and _links_to(money, named.name)
    return money if moved_with and _FIGURE.search(low) else named


def _links_to(entity: Entity, master: str) -> bool:
    """A link field to the master, or a party field that can name one ("supplier payments":
    a Payment Entry's party is a supplier when its party type says so)."""
    party_type = entity.fields.get("party_type")
    return any(f.target == master for f in entity.fields.values()) or (
        party_type is not None and master in party_type.values
    )


_MAKE = re.compile(r"\b(?:create|raise|draft|prepare|make|add|new)\s+(?:an?\s+|the\s+|new\s+)*(.+)")


def _made(catalog: Catalog, low: str) -> Entity | None:
    """'create a quotation for customer X': the thing made is the subject, not the customer."""
    m = _MAKE.search(low)
    if m is None:
        return None
    rest = m.group(1)
    found = [
        (len(term), e)
        for e in catalog.entities.values()
        for term in (e.label, e.plural, *e.synonyms)
        if rest.startswith(term.lower())
        and (len(rest) == len(term) or not rest[len(term)].isalnum())
    ]
    return max(found, key=lambda t: t[0])[1] if found else None


def explicit(entity: Entity, haystack: str) -> bool:
    """Whether the request names the entity by its label or plural (not just a loose keyword)."""
    return any(_has(haystack, t) for t in (entity.label, entity.plural, *entity.synonyms))


_GENERIC_ID = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]*(?:[-/][A-Z0-9]+)*[-/]\d+)(?![\w-])")


def generic_ids(text: str, known: list[str]) -> list[str]:
    """Identifier-looking tokens (letters, dashes, trailing digits) no catalog pattern claimed."""
    return [m.group(1) for m in _GENERIC_ID.finditer(text) if m.group(1) not in known]


def item_codes(text: str, known: list[str]) -> list[str]:
    """Codes such as SKU-4410-BLK: capitals and digits joined by dashes, not a document id."""
    found = re.findall(r"(?<![\w-])([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)(?![\w-])", text)
    return [c for c in found if c not in known and re.search(r"\d", c)]


def _enum_matches(entity: Entity, haystack: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    own = norm(" ".join((entity.label, entity.plural)))
    for name, f in entity.fields.items():
        if f.type is not FieldType.ENUM or not f.filterable:
            continue
        hits = [v for v in f.values if _has(haystack, v) and norm(v) not in own]
        if hits:
            found[name] = hits
    return found


def _status_words(entity: Entity, haystack: str) -> list[str]:
    """Status values named directly, or by the usual words for them."""
    if not entity.status_field:
        return []
    values = entity.fields[entity.status_field].values
    own = norm(" ".join((entity.label, entity.plural)))
    hits = [v for v in values if _has(haystack, v) and norm(v) not in own]
    aliases = {
        "open": ("Open", "To Deliver and Bill", "To Bill", "To Deliver", "Unpaid", "Overdue",
                 "Partly Paid", "Submitted", "Pending", "To Receive and Bill", "To Receive"),
        "unpaid": ("Unpaid", "Overdue", "Partly Paid"),
        "outstanding": ("Unpaid", "Overdue", "Partly Paid"),
        "pending": ("Open", "Pending", "Draft", "Pending Approval", "To Approve"),
        "waiting": ("Open", "Pending", "Pending Approval", "To Approve"),
        "approved": ("Approved",),
        "draft": ("Draft",),
        "settled": ("Paid",),
        # What is still to happen to an order, in its status's words.
        "to be delivered": ("To Deliver and Bill", "To Deliver"),
        "not delivered": ("To Deliver and Bill", "To Deliver"),
        "undelivered": ("To Deliver and Bill", "To Deliver"),
        "not yet delivered": ("To Deliver and Bill", "To Deliver"),
        "to be billed": ("To Deliver and Bill", "To Bill", "To Receive and Bill"),
        "not billed": ("To Deliver and Bill", "To Bill", "To Receive and Bill"),
        "unbilled": ("To Deliver and Bill", "To Bill", "To Receive and Bill"),
        "to be invoiced": ("To Deliver and Bill", "To Bill", "To Receive and Bill"),
        "to be received": ("To Receive and Bill", "To Receive"),
        "not received": ("To Receive and Bill", "To Receive"),
        "not yet received": ("To Receive and Bill", "To Receive"),
    }  # fmt: skip
    # "unpaid" is also ERPNext's name for one status, but people mean every invoice not yet
    # paid (overdue and partly paid ones too, as outstanding > 0 counts them): the everyday
    # meaning wins over the literal status of the same name.
    broad = [w for w in ("unpaid",) if _has(haystack, w)]
    if not hits or broad:
        for word, candidates in aliases.items():
            if _has(haystack, word) and (not hits or word in broad):
                hits += [v for v in candidates if v in values and v not in hits]
    return hits


def _fields_asked(entity: Entity, haystack: str) -> list[str]:
    out = []
    for name, f in entity.fields.items():
        if f.identifier or f.type is FieldType.TABLE:
            continue
        label = f.label or name.replace("_", " ")
        if len(label) > 3 and (_has(haystack, label) or _has(haystack, name.replace("_", " "))):
            out.append(name)
    return out


def _group(entity: Entity | None, haystack: str, catalog: Catalog) -> tuple[str | None, str | None]:
    m = _GROUP.search(haystack.strip())
    if not m or entity is None:
        return None, None
    words = m.group(1).strip().split()
    for size in (3, 2, 1):
        phrase = " ".join(words[:size])
        if phrase in _DATE_PARTS and entity.date_field:
            return entity.date_field, _DATE_PARTS[phrase]
        for name, f in entity.fields.items():
            if not (f.groupable or f.type in (FieldType.DATE, FieldType.DATETIME)):
                continue
            labels = {name.replace("_", " "), (f.label or "").lower()}
            if f.target and f.target in catalog.entities:
                target = catalog.entities[f.target]
                labels |= {target.label.lower(), target.plural.lower(), *target.synonyms}
            dim = (getattr(catalog, "dimensions", None) or {}).get(name)
            if dim is not None:  # "by payment method": the dimension's own words for the field
                labels |= {dim.label.lower(), *(s.lower() for s in dim.synonyms)}
            if any(_has(f" {phrase} ", lab) for lab in labels if lab):
                return name, None
    return None, None


def _names(
    text: str, entity: Entity | None, catalog: Catalog, ids: list[str]
) -> list[tuple[str | None, str]]:
    """Proper names the request mentions, with the field they belong to when the text says so."""
    stripped = text
    for doc_id in ids:
        stripped = stripped.replace(doc_id, " ")
    out: list[tuple[str | None, str]] = []
    known = norm(
        " ".join(
            [
                *(e.label for e in catalog.entities.values()),
                *(k for e in catalog.entities.values() for k in e.keywords),
            ]
        )
    )
    for m in _NAME.finditer(stripped):
        raw = m.group(1).strip(" .,'").removesuffix("'s").removesuffix("’s")
        tokens = [w for w in raw.split() if w not in _STOP]
        if m.start() == 0 and tokens and tokens[0].lower() in _LEADING:
            tokens = tokens[1:]
        if not tokens:
            continue
        value = " ".join(tokens)
        low = value.lower()
        if low in _DATE_PARTS or re.fullmatch(
            r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*", low
        ):
            continue
        plural_of_known = low.endswith("s") and f" {low[:-1]} " in known  # "SOs", "POs"
        if f" {low} " in known or plural_of_known or re.search(r"\d", value) or len(value) < 3:
            continue
        after = norm(stripped[m.end() :]).split()[:1]
        before = norm(stripped[: m.start()]).split()[-1:]
        hint = None
        if entity is not None:
            for name, f in entity.fields.items():
                if f.type is not FieldType.LINK and name not in ("party",):
                    continue
                label = (f.label or name).lower()
                if label in after or label in before or name in after or name in before:
                    hint = name
                    break
        out.append((hint, value))
    return out


# A period named as "this fiscal year" is a date, not a mention of the fiscal_year entity.
_PERIOD_WORDS = re.compile(
    r"\b(this|last|next|current|previous|past)\s+(fiscal|financial)\s+year\b", re.IGNORECASE
)


# Adverbs said inside a catalog phrase ("what we still owe", "who currently owes us") that
# change nothing the phrase means.
_FILLERS = re.compile(r"\b(still|currently|actually|really|presently)\b", re.IGNORECASE)


def understand(catalog: Catalog, connector: str, text: str, today: dt.date) -> Request:
    haystack = norm(_FILLERS.sub(" ", _PERIOD_WORDS.sub(" ", text)))
    low = text.lower()
    req = Request(text=text)
    req.doc_ids = catalog.find_document_ids(connector, text)
    named = _made(catalog, low) or _money_moved(catalog, low, _pick_entity(catalog, haystack))
    if named is not None:
        req.doc_ids += [(named, d) for d in generic_ids(text, [d for _, d in req.doc_ids])]
    else:
        req.loose_ids = generic_ids(text, [d for _, d in req.doc_ids])
    req.period = parse_period(text, today)
    req.as_of = parse_as_of(text, today)
    req.age_days = parse_age_days(text)
    req.amount = parse_amount(text)
    req.top = parse_top(text)
    req.chart = bool(_CHART.search(low))
    req.items = item_codes(text, [d for _, d in req.doc_ids])
    if named is not None and named.name == "item" and req.items and not req.doc_ids:
        # A master named by its code ("item SKU-1266-BLU"): look that record up directly.
        req.doc_ids = [(named, code) for code in req.items]
    req.entity = req.doc_ids[0][0] if req.doc_ids else named
    reports = report_scores(catalog, haystack)
    if req.entity is not None:
        req.statuses = _status_words(req.entity, haystack)
        req.enum_filters = direction_filter(
            req.entity,
            text,
            {
                k: v
                for k, v in _enum_matches(req.entity, haystack).items()
                if k != req.entity.status_field
            },
        )
        req.fields_asked = _fields_asked(req.entity, haystack)
        req.group, req.date_part = _group(req.entity, haystack, catalog)
        if (
            req.date_part is None
            and req.entity.date_field
            and re.search(r"\b(monthly|quarterly|yearly|annually)\b", low)
        ):
            word = re.search(r"\b(monthly|quarterly|yearly|annually)\b", low)
            req.group, req.date_part = (
                req.entity.date_field,
                _DATE_PARTS[word.group(1) if word else "monthly"],
            )
    if req.entity is not None:
        req.compared_field = _compared_field(req.entity, low)
    if req.date_part is None:
        # "broken down monthly" also sets a report's periodicity when no entity is named.
        word = re.search(
            r"\b(monthly|quarterly|yearly|annually|by month|by quarter|by year|per month|per quarter)\b",
            low,
        )
        if word:
            req.date_part = _DATE_PARTS[word.group(1).split()[-1]]
    req.names = _names(text, req.entity, catalog, [d for _, d in req.doc_ids])
    verb = next(
        (v for v in WRITE_VERBS if re.match(rf"\s*(?:{_POLITE})?{v}\b", low)),
        None,
    )
    if verb is not None:
        req.verb = verb
        m = re.search(r"\b(?:as|to)\s+(?:be\s+)?['\"]?([a-z][a-z ]{1,30}?)['\"]?\s*[.!?]?$", low)
        req.target_value = m.group(1).strip() if m else None
    req.kind = _kind(req, low, reports, catalog)
    if req.kind is Kind.REPORT:
        req.report = catalog.reports[max(reports, key=lambda n: reports[n])]
    return req


def _compared_field(entity: Entity, low: str) -> str | None:
    """A threshold given as another field ("below reorder level"), which no filter can express."""
    for name, f in entity.fields.items():
        label = (f.label or name).lower()
        pattern = rf"\b(below|under|above|over|exceeding|beyond|less than|more than)\s+(?:the\s+|their\s+|its\s+)?{re.escape(label)}\b"
        if len(label) > 3 and re.search(pattern, low):
            return name
    return None


# Moving a document through its approval workflow, and asking about it (not ordering it).
_WORKFLOW_MOVES = re.compile(
    r"\b(submit\w*|approv\w*|reject\w*|sign(?:ed|ing)?[ -]?off|block\w*|stopp\w*|stuck|"
    r"held up|hold\w* (?:it|this|that) up|through|forward|next)\b"
)
_ASKING = re.compile(r"\?|\b(why|how|who|whom|what|when|which|can'?t|cannot|unable)\b")


def _about_its_workflow(req: Request, low: str) -> bool:
    """A question about one document of a workflow entity and its next move ("what's stopping
    me from submitting PO-1?", "who needs to approve PO-1", "how do I get PO-1 approved?"):
    the ERP's workflow for that document answers it, not the knowledge base or its fields."""
    entities = [e for e, _ in req.doc_ids] or ([req.entity] if req.entity else [])
    with_workflow = any("workflow_state" in e.fields for e in entities if e is not None)
    return bool(
        req.doc_ids and with_workflow and _WORKFLOW_MOVES.search(low) and _ASKING.search(low)
    )


def _kind(req: Request, low: str, reports: dict[str, int], catalog: Catalog) -> Kind:
    process = (
        _KNOWLEDGE.search(low) or (not req.doc_ids and _ACTION_QUESTION.search(low))
    ) and not _COUNT.search(low)
    if req.verb is not None and (req.entity is not None or req.doc_ids) and not process:
        return Kind.WRITE
    if _WORKFLOW.search(low) and not (_COUNT.search(low) and "pending approval" in low):
        return Kind.WORKFLOW
    if _about_its_workflow(req, low):
        return Kind.WORKFLOW
    if process:
        return Kind.KNOWLEDGE
    if req.doc_ids:
        return Kind.DOCUMENT
    if _FORECAST.search(low) and req.entity is not None:
        return Kind.FORECAST
    if _CONCENTRATION.search(low):
        return Kind.CONCENTRATION
    if _ANOMALY.search(low):
        return Kind.ANOMALIES
    haystack = norm(low)
    named_transaction = (
        req.entity is not None
        and req.entity.kind.value == "transaction"
        and explicit(req.entity, haystack)
    )
    by_label = any(_has(haystack, catalog.reports[n].label) for n in reports)
    grouped_transaction = (
        req.entity is not None and req.entity.kind.value == "transaction" and bool(req.group)
    )
    if (
        reports
        and (by_label or not (named_transaction or grouped_transaction))
        and not _COUNT.search(low)
    ):
        return Kind.REPORT
    if req.entity is None:
        return Kind.UNKNOWN
    if _FIND.search(low) and req.names and not _FIGURE.search(low):
        return Kind.FIND
    if _COUNT.search(low):
        return Kind.COUNT
    if _TREND.search(low):
        return Kind.TREND
    if (
        req.group
        or req.top
        or (req.entity.amount_field and (_WHAT_DONE.search(low) or _WHAT_PAID.search(low)))
        or (
            _TOTAL.search(low)
            and req.entity.amount_field
            and not re.search(r"^\s*(which|list|show me the|who)\b", low)
        )
    ):
        return Kind.TOTAL
    return Kind.LIST


def forecasting(text: str) -> bool:
    """Words that ask for a figure of the future ("what will we sell next month?")."""
    return bool(_FORECAST.search(text.lower()))


def trending(text: str) -> bool:
    """Words that ask how a figure moves over time or against an earlier period."""
    return bool(_TREND.search(text.lower()))


# Used by follow-ups, which read a short message against an earlier request's entity.
group_of = _group
status_words = _status_words
CHART = _CHART
