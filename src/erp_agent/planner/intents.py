"""A request's meaning, read with the catalog: entity, report, fields, values, dates, amounts.

Everything is matched against catalog data (entity keywords, synonyms, labels, field labels,
enum values, report keywords, document-id patterns), never against example sentences, so
paraphrases and values the code has never seen are understood the same way.
"""

from __future__ import annotations

import datetime as dt
import functools
import re

from erp_agent.catalog import Catalog, Entity, FieldType
from erp_agent.catalog.questions import load_questions
from erp_agent.planner import questions, vocabulary
from erp_agent.planner.direction import direction_field, direction_filter, money_direction
from erp_agent.planner.parse_amounts import exact_amount, parse_amount, parse_top
from erp_agent.planner.parse_dates import (
    WEEKDAYS,
    months_listed,
    parse_age,
    parse_as_of,
    parse_period,
)
from erp_agent.planner.reading import Kind, Request
from erp_agent.planner.terms import FILLERS, CatalogKey, has_term, has_verb_form, norm

# The cues of the question kinds (catalog/data/questions.yaml): one vocabulary for the planner
# and for routing.
_COUNT = questions.cue("count")
_TOTAL = questions.cue("total")
_WHAT_DONE = questions.cue("what_done")
_WHAT_PAID = questions.cue("what_paid")
COMPARE = questions.cue("compare")
_TREND = questions.cue("trend")
_FORECAST = questions.cue("forecast")
_FIND = questions.cue("find")
_FIGURE = questions.cue("figure")
_CHART = questions.cue("chart")
_GROUP = re.compile(
    r"\b(?:by|per|for each|each|broken down by|split by|grouped by)\s+([a-z][a-z ]{1,30}?)(?=\s+(?:this|last|next|in|for|since|during|as|from|between|over|and|with|where|that|which|q[1-4]|h[12]|ytd|mtd|qtd|\d{4}|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*|today|yesterday|to date|so far)\b|[?.,!]|$)"
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


def _score_terms(haystack: str, terms: list[tuple[str, int]]) -> int:
    strong = max((w * len(norm(t).split()) for t, w in terms if has_term(haystack, t)), default=0)
    return strong or int(any(has_verb_form(haystack, t) for t, _ in terms))


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
            score += any(has_term(haystack, v) and norm(v) not in own for v in values if " " in v)
        if score:
            scores[entity.name] = score
    return scores


def _said_as_typed(entity: Entity, haystack: str) -> bool:
    """Whether a word naming the records is said as the catalog has it (a status the records
    may be in, "overdue", says whose records no more than any other side's)."""
    field = entity.fields.get(entity.status_field or "")
    statuses = {norm(v).strip() for v in (field.values if field is not None else ())}
    terms = {
        norm(t).strip() for t in (entity.label, entity.plural, *entity.keywords, *entity.synonyms)
    }
    return any(f" {t} " in haystack for t in terms - statuses if t)


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
    tied = [n for n in scores if scores[n] == max(scores.values())]
    if len(tied) > 1:
        # "Bills": one entity's own word as typed beats another's singular read as a plural;
        # "overdue payables": a status the records may be in says no side, their name does.
        exact = [n for n in tied if _said_as_typed(catalog.entities[n], haystack)]
        tied = exact or tied
    best = catalog.entities[min(tied, key=order.index)]
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


_CODE = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d[a-z0-9-]*(?![\w-])")
_QUANTITY = re.compile(r"\b(units?|qty|quantity|quantities|stock|pieces|pcs|items?|goods)\b")


def _money_moved(catalog: Catalog, low: str, named: Entity | None) -> Entity | None:
    """'How much did we receive from Acme?' names no records, but money that came in or went
    out: the records that carry the direction (payments), unless it is goods that moved. So
    is a sum of money moved from or to a master ("how much cash did we get from customers"):
    as with a master beside a transaction, the payments that link to it are the subject."""
    if _QUANTITY.search(low) or money_direction(low) is None or _CODE.search(low):
        return named  # goods moved, no direction, or a price paid for an item by its code
    money = next((e for e in catalog.entities.values() if direction_field(e)), None)
    if named is None or money is None:
        return named or money
    moved_with = named.date_field is None and _links_to(money, named.name)
    return money if moved_with and _FIGURE.search(low) else named


def _aged_records(catalog: Catalog, named: Entity) -> Entity:
    """'What customers owe that is more than 90 days old': an age is of documents with a due
    date, so a party named with one means its open documents (its invoices)."""
    if "due_date" in named.fields:
        return named
    owed = [
        e
        for e in catalog.entities.values()
        if "due_date" in e.fields and "outstanding" in e.fields and _links_to(e, named.name)
    ]
    return owed[0] if len(owed) == 1 else named


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


_GENERIC_ID = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]*(?:[-/][A-Z0-9]+)*[-/]\d+)(?![\w-])")


def generic_ids(text: str, known: list[str]) -> list[str]:
    """Identifier-looking tokens (letters, dashes, trailing digits) no catalog pattern claimed."""
    return [m.group(1) for m in _GENERIC_ID.finditer(text) if m.group(1) not in known]


def item_codes(text: str, known: list[str]) -> list[str]:
    """Codes such as SKU-4410-BLK: capitals and digits joined by dashes, not a document id."""
    found = re.findall(r"(?<![\w-])([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)(?![\w-])", text)
    return [c for c in found if c not in known and re.search(r"\d", c)]


def _entity_words(catalog: Catalog) -> frozenset[str]:
    """ "Company" said is the Company the books are kept for, not a value named the same ("our
    kenyan company" is no customer type Company). (A party's label is a value people mean:
    "supplier payments" are of party type Supplier.)"""
    company = catalog.entities.get("company")
    return frozenset([norm(company.label).strip()]) if company is not None else frozenset()


def _taken(catalog: Catalog, haystack: str) -> frozenset[str]:
    # "Customers of type company", "company-type customers": the value, said as a type.
    return frozenset() if has_term(haystack, "type") else _entity_words(catalog)


def _enum_matches(
    entity: Entity, haystack: str, taken: frozenset[str] = frozenset()
) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    own = norm(" ".join((entity.label, entity.plural)))
    for name, f in entity.fields.items():
        if f.type is not FieldType.ENUM or not f.filterable:
            continue
        hits = [
            v
            for v in f.values
            if (has_term(haystack, v) and norm(v) not in own and norm(v).strip() not in taken)
            or any(has_term(haystack, phrase) for phrase in f.value_names.get(v, ()))
        ]
        if hits:
            found[name] = hits
    return found


# "net of credit notes", "excluding returns": the records named are left out, not asked for.
_LEFT_OUT = r"(?:net of|excluding|excl\.?|exclusive of|without|less|minus|not counting|except(?: for)?|other than|apart from|but not|no|non)"


def _flags_named(entity: Entity, low: str) -> dict[str, bool]:
    """The entity's yes/no fields the request names its records by ("credit notes": true),
    or leaves them out by ("excluding credit notes": false)."""
    found: dict[str, bool] = {}
    text = norm(low)
    for name, f in entity.fields.items():
        for phrase in f.named_by if f.filterable else ():
            if has_term(text, phrase):
                said = re.escape(norm(phrase).strip())
                found[name] = not re.search(
                    rf"\b{_LEFT_OUT}\s+(?:any\s+|the\s+|all\s+)?{said}", text
                )
                break
    return found


def _at_nil(catalog: Catalog, entity: Entity | None, low: str) -> tuple[Entity | None, list[str]]:
    """A quantity named at nil ("which items are out of stock"): the records that hold it
    (stock balances) are the subject when the words named none, those same records, or what
    they link to (the items), with that quantity <= 0."""
    text = norm(low)
    for holder in catalog.entities.values():
        nil = [
            name
            for name, f in holder.fields.items()
            if f.filterable and any(has_term(text, p) for p in f.none_named_by)
        ]
        if nil and (entity is None or entity is holder or _links_to(holder, entity.name)):
            return holder, nil
    return entity, []


def _negated(haystack: str, value: str) -> bool:
    """'have not paid', "haven't been paid", 'not yet delivered': the status denied, not named."""
    return bool(
        re.search(
            rf"\b(?:not|never|{_LEFT_OUT})\s+(?:yet\s+|been\s+|being\s+|fully\s+|any\s+|the\s+)*"
            rf"{re.escape(norm(value).strip())}(?:s|es)?\b",
            haystack,
        )
    )


def _status_words(entity: Entity, haystack: str) -> list[str]:
    """Status values named directly, or by the usual words for them."""
    if not entity.status_field:
        return []
    haystack = haystack.replace("n't ", " not ")  # "haven't paid" denies as "have not paid"
    values = entity.fields[entity.status_field].values
    own = norm(" ".join((entity.label, entity.plural)))
    hits = [
        v
        for v in values
        if has_term(haystack, v) and norm(v) not in own and not _negated(haystack, v)
    ]
    aliases = load_questions().statuses
    # "unpaid" is also ERPNext's name for one status, but people mean every invoice not yet
    # paid (overdue and partly paid ones too, as outstanding > 0 counts them): the everyday
    # meaning wins over the literal status of the same name.
    broad = [w for w in ("unpaid",) if has_term(haystack, w)]
    narrower = [v for v in hits if norm(v).strip() not in broad]
    if broad and narrower and all(v in aliases.get(broad[0], ()) for v in narrower):
        # "Unpaid bills that are overdue": the narrower status of those not yet paid.
        hits, broad = narrower, []
    if not hits or broad:
        said = [w for w in aliases if has_term(haystack, w)]
        for word in said:
            # "not paid on time" (overdue) is said, not also "not paid" (every unpaid one).
            if any(word != longer and f" {word} " in f" {longer} " for longer in said):
                continue
            if not hits or word in broad:
                hits += [v for v in aliases[word] if v in values and v not in hits]
    if entity.lifecycle is not None:
        # "Submitted" is the booked state every read counts by default, not one of the
        # statuses a booked document then moves through (Unpaid, Paid…).
        hits = [v for v in hits if v.lower() != "submitted"]
    return hits


# Where an approval workflow leaves a document, in the words people use for it.
_WORKFLOW_WORDS = {"pending approval": "Pending Approval", "rejected": "Rejected",
                   "turned down": "Rejected", "declined": "Rejected", "knocked back": "Rejected",
                   "sent back": "Rejected", "bounced": "Rejected", "shot down": "Rejected"}  # fmt: skip


def _waiting_for_approval(req: Request, haystack: str) -> None:
    """'POs waiting on approval', 'which POs got rejected': the approval workflow's state, not a
    status (no status of the document says it). A document pending approval or rejected is
    still a draft (status Draft) whose workflow_state says where it is."""
    e = req.entity
    if e is None or "workflow_state" not in e.fields:
        return
    values = e.fields[e.status_field].values if e.status_field else []
    said = [s for w, s in _WORKFLOW_WORDS.items() if has_term(haystack, w) and s not in values]
    if not said:
        return
    req.enum_filters["workflow_state"] = said[:1]
    req.statuses = ["Draft"] if "Draft" in values else []


def _fields_asked(entity: Entity, haystack: str) -> list[str]:
    found: dict[str, str] = {}
    for name, f in entity.fields.items():
        if f.identifier or f.type is FieldType.TABLE:
            continue
        label = f.label or name.replace("_", " ")
        said = [t for t in (label, name.replace("_", " "), _QTY.sub("quantity", label.lower()))
                if len(t) > 3 and has_term(haystack, t)]  # fmt: skip
        numbered = [f"{w} number" for w in re.findall(r"[a-z]{4,}", f.description.lower())
                    if has_term(haystack, f"{w} number") or has_term(haystack, f"{w} no")]  # fmt: skip
        if f.type is FieldType.STRING and numbered and not said:
            said = numbered  # "the cheque number": the field that holds a cheque's reference
        if said:
            found[name] = max(said, key=len).lower()
    if "total_qty" in entity.fields and _HOW_MANY_UNITS.search(haystack):
        found.setdefault("total_qty", "total qty")  # "how many units went out on DN-1?"
    # "Total qty" is the total quantity, not also the total: the longer phrase said wins.
    return [n for n, t in found.items()
            if not any(t != o and f" {t} " in f" {o} " for o in found.values())]  # fmt: skip


_QTY = re.compile(r"\bqty\b")
_HOW_MANY_UNITS = re.compile(r"\bhow many (?:units|pieces|pcs|items|boxes|cartons)\b")


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
            # The words right after "by" ("by spend, kenya books" is by spend, not by company).
            if any(has_term(f" {phrase} ", lab) and _opens(phrase, lab) for lab in labels if lab):
                return name, None
    return None, None


def _opens(phrase: str, label: str) -> bool:
    """Whether the phrase begins with the label (or its plural)."""
    first = norm(label).split()[:1]
    words = phrase.split()
    while len(words) > 1 and words[0] in ("the", "each", "our", "their", "every"):
        words = words[1:]
    return bool(first) and bool(words) and words[0] in (first[0], first[0] + "s", first[0] + "es")


# Words before a name that say it is one ("for Acme", "customer Gulf Traders").
_NAME_BEFORE = frozenset(["for", "from", "to", "of", "at", "by", "with", "in", "about", "against",
                          "on", "customer", "supplier", "branch", "item", "warehouse", "territory",
                          "party", "employee", "company", "vendor", "client"])  # fmt: skip
# A single capitalised word this common in English, not where a name is said, fills the
# sentence ("Grace here — quick one", "Honestly, …") rather than naming a record.
_COMMON_CAPITALISED = 5_000
# Currencies as people write them: the figure is in that currency.
CURRENCIES = {"ksh": "KES", "kshs": "KES", "kes": "KES", "shilling": "KES", "shillings": "KES",
              "bob": "KES", "usd": "USD", "dollar": "USD", "dollars": "USD", "us$": "USD",
              "$": "USD", "eur": "EUR", "euro": "EUR", "euros": "EUR"}  # fmt: skip
_CURRENCY = re.compile(
    r"(?<![\w$])(ksh?s?|kes|shillings?|usd|us\$|dollars?|eur|euros?)(?![\w])|\$(?=\s*\d)",
    re.IGNORECASE,
)


def currencies_of(text: str) -> list[str]:
    """Every currency the text names, in order ("the shilling and dollar lists": KES, USD)."""
    found = [currency_of(m.group(0)) for m in _CURRENCY.finditer(text)]
    return list(dict.fromkeys(c for c in found if c))


def currency_of(text: str) -> str | None:
    m = _CURRENCY.search(text)
    if m is None:
        return None
    return CURRENCIES.get(m.group(0).lower().strip(), CURRENCIES.get(m.group(0)[:1]))


def _known_terms(catalog: Catalog) -> str:
    """Every term the catalog gives a meaning (entities, their keywords, the figures and their
    synonyms): a capitalised word among them ("VAT", "Revenue") is not a name."""
    return _known(CatalogKey(catalog))


@functools.lru_cache(maxsize=8)
def _known(key: CatalogKey) -> str:
    catalog = key.catalog
    terms = [
        *(e.label for e in catalog.entities.values()),
        *(k for e in catalog.entities.values() for k in e.keywords),
        *(t for m in catalog.metrics.values() for t in (m.label, *m.synonyms)),
    ]
    return norm(" ".join(terms))


def _names(
    text: str, entity: Entity | None, catalog: Catalog, ids: list[str], ignored: list[str]
) -> list[tuple[str | None, str]]:
    """Proper names the request mentions, with the field they belong to when the text says so;
    a capitalised word that only fills the sentence goes to ``ignored``."""
    stripped = text
    for doc_id in ids:
        stripped = stripped.replace(doc_id, " ")
    out: list[tuple[str | None, str]] = []
    known = _known_terms(catalog)
    for m in _CODED.finditer(stripped):
        # "Sales - ST": a record's whole name with its company's code, though its first word is
        # one of ours ("sales"), which would not be read as a name; the code says whose it is.
        if _known_word(m.group(0).split()[0].lower(), known):
            out.append((None, m.group(0).strip()))
            stripped = stripped.replace(m.group(0), " ")
    for m in _NAME.finditer(stripped):
        raw = m.group(1).strip(" .,'").removesuffix("'s").removesuffix("’s")
        tokens = [w for w in raw.split() if w not in _STOP]
        if m.start() == 0 and tokens and tokens[0].lower() in _LEADING:
            tokens = tokens[1:]
        while (
            len(tokens) > 1
            and _ABBREVIATED.fullmatch(tokens[0])
            and _known_word(tokens[0].lower(), known)
        ):
            tokens = tokens[1:]  # "POs Harbor Goods": the documents, then the name
        if not tokens:
            continue
        value = " ".join(tokens)
        low = value.lower()
        if (
            low in _DATE_PARTS
            or low in WEEKDAYS
            or re.fullmatch(r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*", low)
        ):
            continue
        plural_of_known = low.endswith("s") and f" {low[:-1]} " in known  # "SOs", "POs"
        if f" {low} " in known or plural_of_known or re.search(r"\d", value) or len(value) < 3:
            continue
        if low in CURRENCIES:
            continue
        after = norm(stripped[m.end() :]).split()[:1]
        before = norm(stripped[: m.start()]).split()[-1:]
        said_as_name = len(tokens) > 1 or bool(set(before) & _NAME_BEFORE)
        # Only a sentence's first word is capitalised for no reason: elsewhere a capital says
        # "a name" ("what did Lake buy"), however common the word.
        first = not stripped[: m.start()].strip() or bool(
            re.search(r"[.!?:;,\-–—]\s*$", stripped[: m.start()])
        )
        if first and not said_as_name and vocabulary.english_frequency(low) >= _COMMON_CAPITALISED:
            ignored.append(value)
            continue
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


_ABBREVIATED = re.compile(r"[A-Z]{2,5}s?")
# A capitalised name of up to five words, " - " and a company's code ("Cost of Goods Sold - ST").
_CODED = re.compile(
    r"(?<![\w-])[A-Z][\w&.']*(?:\s+(?:of|and|&|[A-Z][\w&.']*)){0,4}\s+-\s+[A-Z]{2,4}\b"
)  # "POs", "SO", "GRNs": documents by their initials


def said_for_a_term(catalog: Catalog, token: str) -> bool:
    """Whether a capitalised token stands for one of our own terms, not a name: "PO", "AR",
    "YTD", "VAT"."""
    return token in _STOP or _known_word(token.lower(), _known_terms(catalog))


def _known_word(low: str, known: str) -> bool:
    """A catalog word, or its plural ("POs", "SOs")."""
    return f" {low} " in known or (low.endswith("s") and f" {low[:-1]} " in known)


_ETC = re.compile(r"\betc\b|\band so on\b|\band the like\b|\band such\b")
# "So far", "so much", a sentence's "so": the word, never a sales order ("SO").
_SO = re.compile(
    r"\bso\s+(?:far|much|many|that|what|long|as|yet)\b|(?:^|[,.;!?]\s*|\band\s+)so\b", re.I
)


# A period named as "this fiscal year" is a date, not a mention of the fiscal_year entity.
_PERIOD_WORDS = re.compile(
    r"\b(this|last|next|current|previous|past)\s+(fiscal|financial)\s+year\b", re.IGNORECASE
)


_AS_OF = re.compile(
    r"\b(?:as (?:of|at)|at the end of)\s+(?:the\s+)?(?:end of\s+)?(?:today|now|(?:last|this|previous)\s+(?:month|quarter|year)(?:\s*end)?|[\w ,-]{1,20}?\d{4}|\d{1,2}\s+\w+|\w+\s+\d{1,2})",
    re.IGNORECASE,
)


def understand(catalog: Catalog, connector: str, text: str, today: dt.date) -> Request:
    haystack = norm(FILLERS.sub(" ", _PERIOD_WORDS.sub(" ", _SO.sub(" ", text))))
    low = text.lower()
    req = Request(text=text)
    req.doc_ids = catalog.find_document_ids(connector, text)
    named = _made(catalog, low) or _money_moved(catalog, low, _pick_entity(catalog, haystack))
    if named is not None:
        req.doc_ids += [(named, d) for d in generic_ids(text, [d for _, d in req.doc_ids])]
    else:
        req.loose_ids = generic_ids(text, [d for _, d in req.doc_ids])
    req.as_of = parse_as_of(text, today)
    # "As of today", "as at 30 June": a moment a balance is read at, never a period of dates.
    req.period = parse_period(_AS_OF.sub(" ", text) if req.as_of else text, today)
    req.age_days, req.age_until = parse_age(text)
    req.amount = parse_amount(text)
    req.top = parse_top(text)
    req.chart = bool(_CHART.search(low))
    req.items = item_codes(text, [d for _, d in req.doc_ids])
    if named is not None and named.name == "item" and req.items and not req.doc_ids:
        # A master named by its code ("item SKU-1266-BLU"): look that record up directly.
        req.doc_ids = [(named, code) for code in req.items]
    req.entity = req.doc_ids[0][0] if req.doc_ids else named
    if not req.doc_ids:
        req.entity, req.nil_fields = _at_nil(catalog, req.entity, low)
    if req.entity is not None and req.age_days is not None and not req.doc_ids:
        req.entity = _aged_records(catalog, req.entity)
    reports = report_scores(catalog, haystack)
    if req.entity is not None:
        req.statuses = _status_words(req.entity, haystack)
        req.enum_filters = direction_filter(
            req.entity,
            text,
            {
                k: v
                for k, v in _enum_matches(req.entity, haystack, _taken(catalog, haystack)).items()
                if k != req.entity.status_field
            },
        )
        req.flags = _flags_named(req.entity, low)
        _waiting_for_approval(req, haystack)
        req.fields_asked = _fields_asked(req.entity, haystack)
        req.group, req.date_part = _group(req.entity, haystack, catalog)
        if req.statuses and req.entity.status_field and _ETC.search(low):
            # "How many absents, half days etc": every status, each counted, not those two.
            req.statuses, req.group = [], req.entity.status_field
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
        elif months_listed(text):
            req.date_part = "month"  # "September, October and November": each of them
    req.currency = currency_of(text)
    req.names = _names(text, req.entity, catalog, [d for _, d in req.doc_ids], req.ignored)
    _raised_against(req)
    opening = questions.opening_verb(low)
    if opening is not None and opening[1] == "create" and _made_already(req, named):
        opening = None  # "quote SAL-QTN-1 — how much was it?": a question about that quotation
    if opening is not None:
        req.verb, req.change = opening
        m = re.search(r"\b(?:as|to)\s+(?:be\s+)?['\"]?([a-z][a-z ]{1,30}?)['\"]?\s*[.!?]?$", low)
        req.target_value = m.group(1).strip() if m else None
    # Cues read the words without their fillers ("what actually happens" is "what happens").
    plain = re.sub(r"\s{2,}", " ", FILLERS.sub(" ", low))
    req.kind = questions.classify(questions.Facts(req, plain, reports, catalog))
    if req.kind == Kind.REPORT:
        # Reports the words name equally: the one of the records the request is about.
        own = req.entity.name if req.entity is not None else None
        req.report = catalog.reports[
            max(reports, key=lambda n: (reports[n], catalog.reports[n].entity == own))
        ]
    if req.amount is None and req.kind in (Kind.FIND, Kind.LIST) and req.entity is not None:
        # "The invoice for 5407.42 dollars": a document looked for by its amount.
        req.amount = exact_amount(text)
    return req


def _made_already(req: Request, named: Entity | None) -> bool:
    """Whether the only document a 'create' names is one of the kind it would make: it exists,
    so the words ask about it ("quote SAL-QTN-2026-00053 - did they take it?"). Making one from
    another kind ("raise an invoice for SO-1") is still a change."""
    kinds = {e.name for e, _ in req.doc_ids}
    if _COPIED.search(req.text.lower()):
        return False  # "a quotation like SAL-QTN-1": a new one, made after it
    return len(kinds) == 1 and (named is None or named.name in kinds)


_COPIED = re.compile(r"\b(like|same as|copy|copying|based on|duplicate|similar to|another|again)\b")


def _raised_against(req: Request) -> None:
    """'Was a credit note raised against ACC-SINV-1?': records of a kind the request names by
    its own name (a flag of the document's entity) that link back to the document named are
    the ones asked for, not the document itself."""
    if len(req.doc_ids) != 1 or not any(req.flags.values()):
        return
    entity, doc_id = req.doc_ids[0]
    back = [n for n, f in entity.fields.items() if f.target == entity.name and f.filterable]
    if len(back) == 1:
        req.doc_ids = []
        req.names.append((back[0], doc_id))


def _compared_field(entity: Entity, low: str) -> str | None:
    """A threshold given as another field ("below reorder level"), which no filter can express."""
    for name, f in entity.fields.items():
        label = (f.label or name).lower()
        pattern = rf"\b(below|under|above|over|exceeding|beyond|less than|more than)\s+(?:the\s+|their\s+|its\s+)?{re.escape(label)}\b"
        if len(label) > 3 and re.search(pattern, low):
            return name
    return None


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
