"""Figure questions → ``metrics.query``: the metric the words name (label, name, synonyms in the
catalog), its dimensions from "by …" and from names resolved against the ERP's master data,
the period, top N and a threshold; then the answer from the result's rows and definition.

A request with a condition no metric argument can express (an age in days, a comparison
between two fields) is left to the record plane, so no condition is ever dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.catalog.metrics import Returns
from erp_agent.planner import master_data, name_phrases, questions, vocabulary
from erp_agent.planner.answer import fmt, is_number, join
from erp_agent.planner.direction import IN, OUT, direction_field
from erp_agent.planner.filters import OWED_STATUSES
from erp_agent.planner.intents import CHART, COMPARE
from erp_agent.planner.metric_terms import (
    VALUE_WORDS,
    figures_message,
    metric_scores,
    metric_terms,
    says,
)
from erp_agent.planner.parse_dates import (
    Period,
    compared_in,
    comparing_message,
    parse_age_buckets,
    sets_against,
    shift_months,
)
from erp_agent.planner.reading import Kind, Request
from erp_agent.planner.steps import Call, Ctx, Step, call, enable, failed, rows_of, say
from erp_agent.planner.terms import TERM_FILLERS, explicit, has_term, message_saying, norm

_GRAINS = {"month": "month", "quarter": "quarter", "year": "year", "week": "week", "day": "day"}
_BY = re.compile(
    r"\b(?:by|per|for each|each|across|broken down by|split by|grouped by|break(?:\s+\w+)? down by)"
    r"\s+([a-z][a-z ]{1,40}?)(?=\s+(?:this|last|next|in|for|since|during|as|from|between|over|and|with|where|that|which|q[1-4]|h[12]|ytd|mtd|qtd|\d{4}|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*|today|yesterday|to date|so far)\b|[?.,!;]|$)"
)
# "By number of invoices", "by invoice count", "by sales value": what a ranking is measured by,
# never a dimension to break the figure down by.
_MEASURE_PHRASE = re.compile(
    r"^(?:the\s+)?(?:(?:number|count|no|amount|value|total|sum|quantity|qty|volume)\s+of\b|"
    r"[a-z]+\s+(?:count|number|value|amount|total|volume)s?\b)"
)


def _by_phrases(low: str) -> list[str]:
    return [
        m.group(1).strip()
        for m in _BY.finditer(low)
        if not _MEASURE_PHRASE.match(m.group(1).strip())
    ]


# Words that stand for several statuses (intents' aliases): "open", "unpaid", "pending"…
_STATUS_WORDS = ("open", "unpaid", "outstanding", "pending", "approved", "draft", "settled")
# Dimensions that say whose figure it is: they decide between selling and buying metrics.
_PARTY_DIMENSIONS = frozenset(
    ["customer", "supplier", "employee", "customer_group", "supplier_group"]
)
# Where a figure happened: a follow-up naming one place replaces the place asked before.
_PLACES = frozenset(["warehouse", "branch", "territory", "company"])
_STOCK_WORDS = re.compile(
    r"\b(how many|how much|stock|on hand|in stock|do we have|have we got|quantity|quantities|"
    r"units|level)\b"
)
_STOCK_ONLY = re.compile(r"\b(stock|on hand|quantity|quantities|units|level)\b")


# "How much/many … at", "grey angle grinder qty at kisumu stores", "total blue wall switches
# across all savanna stores": what is held there.
_STOCK_ASKED = re.compile(
    r"\bhow (?:much|many)\b|\b(?:qty|quantity|quantities|stock level|on hand|in stock)\b"
    r"|^\W*(?:the\s+)?total\b"
    # "Grey hammers in kisumu stores?": goods named at a store, and nothing else asked.
    r"|^\W*(?:any\s+|do (?:we|you) have\s+|have we got\s+|got\s+)?"
    r"(?!(?:list|show|which|what|all|the|our|stores?|warehouses?)\b)[a-z][\w -]{1,40}?\s+(?:in|at)\s+"
    r"(?:the\s+)?[a-z][\w ]{1,30}?\s+(?:stores?|warehouses?)\s*[?.!]*\s*$"
)


_HOW_TO = re.compile(r"\bhow (?:do|can|should|would|to) (?:i |we |you )?\b")


def asks_stock_at(req: Request) -> bool:
    """Whether "how much/how many …" asks what is held at a place the request names as its
    records ("… is in the nairobi store"), rather than counting the places."""
    e = req.entity
    return (
        e is not None
        and e.name == "warehouse"
        and _STOCK_ASKED.search(req.text.lower()) is not None
        and not _HOW_TO.search(req.text.lower())
        and not _records_counted(req)
    )


def _records_counted(req: Request) -> bool:
    """ "How many items are in the Power Tools group": the records named are counted, not the
    stock of them, unless stock is said."""
    e = req.entity
    if e is None or _STOCK_ONLY.search(req.text.lower()):
        return False
    after = norm(req.text.lower().split("how many", 1)[-1])
    return " how many " in norm(req.text) and any(
        after.startswith((f" {norm(t).strip()} ", f" {norm(t).strip()}s "))
        for t in (e.plural, e.label, *e.synonyms)
    )


# Places and groups a figure is often asked per, named before it ("branch sales").
_PER_PLACE = frozenset(["branch", "territory", "warehouse", "item", "item_group"])


# A price list's price ("the standard buying price", "what's it on the USD buying price list"):
# the Item Price, not what was last paid.
LIST_PRICE = re.compile(
    r"\b(price ?lists?|list (?:price|rate)s?|standard (?:buying|selling)|catalog(?:ue)? price)\b"
)


def ranked(catalog: Catalog, req: Request) -> list[Any]:
    """The metrics the request names, best first (empty: the record plane answers)."""
    metrics = getattr(catalog, "metrics", None) or {}
    if not metrics or req.nil_fields:
        return []  # "which items are out of stock": records at nil, not a figure
    if LIST_PRICE.search(req.text.lower()):
        return []  # "the standard buying price": a price list's own record, no computed figure
    scores = _directed(metrics, req, _said_last(catalog, req.text))
    if req.flags.get("is_return") is False:  # "net of credit notes": not a figure of them
        scores = {n: v for n, v in scores.items() if metrics[n].returns is not Returns.ONLY}
    if not scores:
        scores = {m: 1 for m in questions.meant_metrics(req.text) if m in metrics}
    if not scores:
        return []
    entity = req.entity.name if req.entity is not None else None
    transaction = req.entity is not None and req.entity.kind.value == "transaction"
    bare = _without_figures([metrics[n] for n in scores], req.text)
    if transaction and req.entity is not None and explicit(req.entity, bare):
        # "Sum of purchase orders in the last 90 days": the records named decide the metric.
        scores = {n: v for n, v in scores.items() if metrics[n].entity == entity}
    if not scores:
        return []
    order = list(metrics)
    words = set(norm(req.text).split()) - vocabulary.GRAMMAR
    first = min(scores, key=lambda n: (-scores[n], order.index(n)))
    # Figures of other subjects named by the very words that name the first ("got left": stock
    # on hand, or leave): their own names' words decide between them.
    shared = {norm(t).strip() for t, _ in metric_terms(metrics[first])}
    twins = {
        n for n in scores
        if metrics[n].group != metrics[first].group or n == first
        if any(norm(t).strip() in shared and says(norm(req.text), t)
               for t, _ in metric_terms(metrics[n]))
    }  # fmt: skip

    def rank(n: str) -> tuple[int, int, int, int, int]:
        # Then the figure of the records named, then one cut by them ("suppliers": payables),
        # then one of another subject whose own name's words are said ("leave days … got
        # left": leave, not stock); within a subject the catalog's order says which is meant.
        cut = int(entity is not None and entity in metrics[n].dimensions)
        own = len(words & set(norm(str(metrics[n].label)).split())) if n in twins else 0
        return (scores[n], int(metrics[n].entity == entity), cut, own, -order.index(n))

    best = [metrics[n] for n in sorted(scores, key=rank, reverse=True)]
    best = _summed(req, _with_tax(catalog, req.text, best))
    if req.kind == Kind.COUNT:
        best = list({m.name: m for m in (counted(catalog, m) for m in best)}.values())
        # "Number of invoices that are past due": the count that keeps the condition named too.
        narrower = [m for m in best[1:] if m.entity == best[0].entity
                    and set(best[0].filters) < set(m.filters)]  # fmt: skip
        if narrower:
            best.remove(narrower[0])
            best.insert(0, narrower[0])
    return best


def _without_figures(metrics: list[Any], text: str) -> str:
    """The words with the figures' own names of several words taken out: the records named
    outright, not as a word of a figure's name ("behind on payments" is overdue receivables,
    not payments)."""
    bare = norm(TERM_FILLERS.sub(" ", text))
    terms = {norm(t) for m in metrics for t, _ in metric_terms(m) if " " in t.strip()}
    for term in sorted(terms, key=len, reverse=True):
        bare = bare.replace(term, " ")
    return bare


def _said_last(catalog: Catalog, text: str) -> dict[str, int]:
    """The scores of the metrics the words name; after a follow-up that names another figure of
    the same records ("and the credits?" after the debits), that figure's alone."""
    scores = metric_scores(catalog, text)
    parts = text.split(" ; ")  # the follow-ups read into the request, in order
    if len(parts) < 2 or not scores:
        return scores
    metrics = catalog.metrics
    for part in reversed(parts[1:]):
        said = metric_scores(catalog, part)
        best = metrics[max(scores, key=lambda n: scores[n])]
        if said:
            return {n: v for n, v in said.items() if metrics[n].entity == best.entity} or scores
        sibling = _sibling_said(catalog, best, part)
        if sibling is not None:
            return {sibling: max(scores.values()) + 1}
    return scores


def _sibling_said(catalog: Catalog, best: Any, part: str) -> str | None:
    """'And net?' after the gross payroll: a word of a follow-up that is in the terms of one
    other figure of the same records and in none of the figure asked — that figure."""
    # Words typed in lowercase: a capitalised one names a record ("and for Harbor Goods?").
    typed = " ".join(w for w in part.split() if w == w.lower())
    words = {w for w in norm(typed).split() if len(w) > 2 and w not in vocabulary.GRAMMAR}
    words -= vocabulary.MONTH_WORDS
    own = {w for t, _ in metric_terms(best) for w in norm(t).split()}
    words -= own
    # Every word said is the other figure's ("and net?"); a word that names records or a
    # grouping ("and per customer?") is an edit of the figure asked, not another figure.
    dims = getattr(catalog, "dimensions", {}) or {}
    records = {w for d in dims.values() for t in (d.label, *d.synonyms) for w in norm(t).split()}
    records |= {w for e in catalog.entities.values() for t in (e.label, e.plural)
                for w in norm(t).split()}  # fmt: skip
    if not words or words & records:
        return None
    hits = [
        m.name
        for m in catalog.metrics.values()
        if m is not best and m.entity == best.entity
        and words <= {w for t, _ in metric_terms(m) for w in norm(t).split()}
    ]  # fmt: skip
    return hits[0] if len(hits) == 1 else None


def _means(metric: Any, field: str, value: Any) -> bool:
    """Whether the metric's own definition filters ``field`` to ``value``."""
    return any(f.field == field and f.op == "=" and f.value == value for f in metric.filters)


def _flagged(metric: Any, field: str, on: bool) -> bool:
    """Whether the metric's records agree with a yes/no field the request names them by:
    credit notes (``is_return``) are what the metric's returns rule says; any other field must
    be in the metric's own filters."""
    if field == "is_return":
        return (metric.returns is Returns.ONLY) == on
    return _means(metric, field, int(on)) or _means(metric, field, on)


def _dimension_filter(dimension: str, values: list[Any]) -> dict[str, Any]:
    one: Any = values[0] if len(values) == 1 else list(values)
    return {"dimension": dimension, "op": "=" if len(values) == 1 else "in", "value": one}


def _directed(metrics: Mapping[str, Any], req: Request, scores: dict[str, int]) -> dict[str, int]:
    """The scores with the money's direction applied ("what did Gulf Traders pay us" is money
    in): metrics of the other direction are dropped, and when no figure is named, the metric
    that is just these records in that direction is the one meant (cash received)."""
    field = direction_field(req.entity) if req.entity is not None else None
    way = req.enum_filters.get(field or "", [])
    if req.entity is None or field is None or len(way) != 1:
        return scores
    other = [v for v in (IN, OUT) if v != way[0]]
    kept = {n: v for n, v in scores.items() if not any(_means(metrics[n], field, o) for o in other)}
    if kept:
        return kept
    plain = [
        m.name
        for m in metrics.values()
        if m.entity == req.entity.name
        and len(m.filters) == 1
        and _means(m, field, way[0])
        and m.measure.func == "sum"
    ]
    return {plain[0]: 1} if plain else {}


def pick(catalog: Catalog, req: Request) -> Any | None:
    """The metric the request names, or None (then the record plane answers)."""
    found = named_metrics(catalog, req)
    return found[0] if found else None


def named_metrics(catalog: Catalog, req: Request) -> list[Any]:
    """The metrics the request names, best first; else those its ranking is by."""
    return ranked(catalog, req) or _summed(req, ranking(catalog, req))


# "Incl. VAT", "including taxes", "with tax": amounts with the taxes on them.
_WITH_TAX = re.compile(
    r"\b(?:incl(?:uding|usive of|\.)?|inc\.?|with|plus|after)\s+(?:the\s+)?(?:vat|tax(?:es)?|gst)\b"
    r"|\b(?:vat|tax(?:es)?|gst)[- ](?:inclusive|included|incl\.?)(?!\w)",
    re.I,
)
_WITHOUT_TAX = re.compile(
    r"\b(?:before|excl(?:uding|usive of|\.)?|ex|net of|without|less)\s+(?:the\s+)?"
    r"(?:vat|tax(?:es)?|gst)\b|\b(?:vat|tax(?:es)?|gst)[- ](?:exclusive|excluded|excl\.?)(?!\w)",
    re.I,
)
_NET_FIELDS = ("net_total", "base_net_total")
_GROSS_FIELDS = ("total", "base_total")


def _with_tax(catalog: Catalog, text: str, best: list[Any]) -> list[Any]:
    """A figure before tax asked with its taxes ("credit notes in 2025, incl. VAT"): the same
    documents' grand total first, when the catalog has that figure; and a total with taxes
    asked before them ("total invoiced in Q3, before VAT"): their net total."""
    if not best:
        return best
    if best[0].measure.field in _NET_FIELDS and _WITH_TAX.search(text):
        fields = _GROSS_FIELDS
    elif best[0].measure.field in _GROSS_FIELDS and _WITHOUT_TAX.search(text):
        fields = _NET_FIELDS
    else:
        return best
    m = best[0]
    twins = [
        o
        for o in catalog.metrics.values()
        if o.entity == m.entity and o.filters == m.filters and o.returns == m.returns
        and o.measure.func == m.measure.func and o.measure.field in fields
    ]  # fmt: skip
    return [twins[0], *[b for b in best if b is not twins[0]]] if twins else best


def _summed(req: Request, best: list[Any]) -> list[Any]:
    """The metrics that can be the sum a TOTAL asks: never a count of the records ("total per
    currency?" of a list of bills) unless a count is asked ("staff numbers per branch"), and
    what is still owed when that is asked, not another figure of the same records."""
    if req.kind != Kind.TOTAL or _COUNTED.search(req.text.lower()):
        return best
    best = [m for m in best if m.measure.func != "count"]
    entity = req.entity.name if req.entity is not None else None
    if "outstanding" in req.fields_asked and entity is not None:
        best = [m for m in best if m.entity == entity and m.measure.field == "outstanding"]
    return best


def counted(catalog: Catalog, metric: Any) -> Any:
    """'How many invoices are overdue?' asks for the count of what the amount metric sums:
    the count metric over the same records (same entity, same defining filters), if any."""
    if metric.measure.func == "count" or getattr(metric, "unit", None) not in (None, "", "%"):
        return metric  # "how many leave days", "how many units": that quantity is the count
    same = [
        m
        for m in (getattr(catalog, "metrics", None) or {}).values()
        if m.measure.func == "count" and m.entity == metric.entity and m.filters == metric.filters
    ]
    return same[0] if same else metric


_COUNTED = re.compile(
    r"\b(count|number of|no\. of|how many|head ?count|(?:staff|employee|headcount) numbers)\b"
)
# A ranking by how many times ("invoiced the most times"), not by how much.
_TIMES = re.compile(r"\b(?:most|fewest|least) times\b|\bhow often\b")
_RANKING_PARTIES = re.compile(r"\b(top|biggest|largest|most|highest|least|lowest)\b", re.I)
_RANKING = re.compile(r"\b(top|biggest|largest|best|most|highest|each|per|by)\b")
_RANK_ALL = re.compile(r"\b(?:rank|ranked|ranking|league table)\b")
# "Customers more than 60 days overdue - who and how much": the figure per party named.
_WHO_AND = re.compile(r"\b(?:who|which ones?)\s*(?:and|&)\s*(?:by\s+)?how much\b")


def asks_each(text: str) -> bool:
    """Whether each party's own sum is asked ("who and how much", "and by how much")."""
    return bool(_EACH.search(text) or _WHO_AND.search(text.lower()))


def ranking(catalog: Catalog, req: Request) -> list[Any]:
    """'Our 5 biggest customers', 'each supplier': parties ranked or cut by the metric their
    dimension is ranked by in the catalog (customers by revenue, suppliers by purchases)."""
    if req.top is None and not _RANKING.search(req.text.lower()):
        return []
    dims = getattr(catalog, "dimensions", None) or {}
    metrics = getattr(catalog, "metrics", None) or {}
    named = dimensions_named(catalog, req.text)
    by = [dims[d].ranked_by for d in dims if d in named and getattr(dims[d], "ranked_by", None)]
    return [metrics[m] for m in dict.fromkeys(by) if m in metrics]


def names_a_figure(ctx: Ctx) -> bool:
    """A list or report request that asks for a figure instead: a balance's metric ("stock
    value", "on hand"), a metric said of master records ("stock in the Mombasa warehouse"), or
    a quantity of an item given by its code ("Nairobi Stores: quantity of SKU-8498-GRY?")."""
    req = ctx.req
    if req.kind not in (Kind.LIST, Kind.REPORT) or req.doc_ids:
        return False
    # A report named by its words is not overruled by a ranking's default figure ("by age").
    found = ranked(ctx.catalog, req) if req.kind == Kind.REPORT else [pick(ctx.catalog, req)]
    metric = found[0] if found else None
    if metric is None:
        return bool(req.items) and bool(_STOCK_WORDS.search(req.text.lower()))
    entity = ctx.catalog.entities.get(metric.entity)
    balance = entity is not None and not entity.date_field
    on_master = req.entity is not None and req.entity.kind.value == "master"
    # "What are our total receivables?": one figure of the report's own records, not its rows.
    report = req.report if req.kind == Kind.REPORT else None
    in_total = (
        report is not None
        and report.entity == metric.entity
        and (bool(_TOTAL.search(req.text)) or _what_is(req.text))
    )
    # "Overdue payables": a figure of the report's records named by its own label, the report
    # only by its keywords: that figure (with the records behind it), not the report's rows.
    labelled = (
        report is not None
        and report.entity == metric.entity
        and says(norm(req.text), metric_terms(metric)[0][0])
        and not has_term(norm(req.text), report.label)
        and not _AGEING_WORDS.search(req.text.lower())
    )
    # "Which customers owe us money past the due date": a status the report does not filter
    # by (its rows are all that is outstanding): the figure of the records in that status.
    narrowed = (
        report is not None
        and report.entity == metric.entity
        and bool(req.statuses)
        and not set(OWED_STATUSES) <= set(req.statuses)
        and not _AGEING_WORDS.search(req.text.lower())
    )
    # "Payroll cost for last month": a figure named in so many words, not asked as a list.
    scores = metric_scores(ctx.catalog, req.text)
    records_named = req.entity is not None and explicit(
        req.entity, _without_figures([metric], req.text)
    )
    # (or another figure of the same records was, and a follow-up moved to this one); a figure
    # said bare, without the records' own name ("mpesa collections last month?"), is asked too.
    said = max((v for n, v in scores.items() if ctx.catalog.metrics[n].entity == metric.entity),
               default=0)  # fmt: skip
    named = (
        req.kind == Kind.LIST
        and said > 0
        and not records_named  # "overdue invoices" lists the invoices
        and not _LISTING.search(req.text)
        and not _WHICH_ONES.search(req.text)  # "any absences …? who was the latest": records
    )
    # "Faith Njeri's leave balance": one party's figure of the report it is computed from, not
    # the report's rows (unless the report is asked for as such).
    source = getattr(getattr(metric, "report", None), "name", None)
    of_one = (
        report is not None and source == report.name
        and (bool(req.names) or _name_typed_lower(ctx))
        and not re.search(r"\breport\b", req.text.lower())
    )  # fmt: skip
    # "Which customers are 60 days overdue, and by how much each?": a figure per party.
    which = _WHICH_OF.search(req.text.lower())
    each = (
        bool(_EACH.search(req.text))
        and which is not None
        and (_dimension_named(ctx.catalog, metric, which.group(1)) is not None)
    )
    each = each or bool(_WHO_AND.search(req.text.lower()) or _WHO_IN.match(req.text.lower()))
    return (balance or on_master or in_total or labelled or narrowed or named or of_one or each
            or aged(ctx.catalog, req) is not None)  # fmt: skip


def _name_typed_lower(ctx: Ctx) -> bool:
    """ "Leave balance for faith njeri": words that stand where a name stands, typed in lower
    case (looked up with the figure; a name found nowhere is then said so)."""
    text = ctx.req.text
    return any(
        vocabulary.said_as_name(text, n, ctx.catalog)
        for n in vocabulary.loose_names(text, ctx.catalog)
    )


# "Which customers are late, and how much is late?": the "which" is answered with the figure.
_EACH = re.compile(
    r"\b(?:by )?how much (?:each|apiece|per \w+)\b|\bby how much\b|\band how much\b", re.IGNORECASE
)
_WHICH_ONES = re.compile(r"^\s*any\b|\b(?:who|which)\b", re.I)
_LISTING = re.compile(r"^\s*(which|list|show|give me (?:a|the) list|what are the|who)\b", re.I)
_TOTAL = re.compile(r"\b(total|in all|altogether|overall|combined)\b", re.IGNORECASE)
# "What's overdue?", "anything overdue?": how much is, not the report's rows — unless the
# report is asked for.
_WHAT_IS = re.compile(
    r"^\s*(?:so\s+)?(?:what(?:'s|s|\s+is)|how much|"
    r"(?:is there\s+|(?:do|have)\s+(?:we|i)\s+(?:have|got)\s+|have\s+(?:we|i)\s+got\s+)?anything)\b",
    re.IGNORECASE,
)
_THE_REPORT = re.compile(r"\b(report|ageing|aging|buckets?|breakdown|statement)\b", re.IGNORECASE)


def _what_is(text: str) -> bool:
    last = text.split(" ; ")[-1]
    return bool(_WHAT_IS.search(last)) and not _THE_REPORT.search(last)


def dimensions_named(catalog: Catalog, text: str) -> set[str]:
    """Dimensions the words name ("customers", "vendor"): who a figure is about."""
    hay = norm(text)
    dims = getattr(catalog, "dimensions", None) or {}
    return {
        name
        for name, dim in dims.items()
        if any(has_term(hay, t) for t in (dim.label, name.replace("_", " "), *dim.synonyms) if t)
    }


def fitting(candidates: list[Any], needed: set[str]) -> Any | None:
    """Of metrics the words name, the best that can be cut by every dimension the request is
    about: 'what did we buy from <supplier>' is purchases, '<customer> bought' is revenue."""
    if not candidates:
        return None
    best = candidates[0]
    if not needed or needed <= set(best.dimensions):
        return best
    fits = [m for m in candidates if needed <= set(m.dimensions)]
    return fits[0] if fits else best


def stock_metric(catalog: Catalog, req: Request, kinds: set[str]) -> Any | None:
    """'how many Grey Hammer do we have in Nairobi Stores': the names are an item and a place."""
    metrics = getattr(catalog, "metrics", None) or {}
    if "item" not in kinds or not _STOCK_WORDS.search(req.text.lower()):
        return None
    # "what is the Grey Hammer in Nairobi Stores worth": its value, not its quantity.
    worth = any(w in VALUE_WORDS or w == "value" for w in norm(req.text).split())
    name = "stock_value" if worth else "stock_on_hand"
    return metrics.get(name)


def aged(catalog: Catalog, req: Request) -> Any | None:
    """'How much of the receivables is more than 90 days past due': the metric the words name
    whose own definition is that age (due date before today-90), if any."""
    if req.age_days is None or req.kind in (Kind.LIST, Kind.FIND, Kind.COUNT):
        return None  # "which of those are more than 90 days late": the records, not their sum
    cutoff = f"today-{req.age_days}"
    bucket = [f"today-{req.age_until}", f"today-{req.age_days + 1}"]
    named = ranked(catalog, req)
    # The age said in other words than the figure's own ("31 to 60 days late"): the figure of
    # the same records' same amount with that age.
    # (A figure no words name, only its definition, is for buckets said one by one.)
    family = [m for m in catalog.metrics.values() if named and m not in named and m.synonyms
              and m.entity == named[0].entity and m.measure == named[0].measure]  # fmt: skip
    # The first figure's own records before any other's ("payables 1-30 days past due" is
    # the payables' bucket, never the receivables' one the words also fit).
    same = [m for m in named if m.entity == named[0].entity] if named else []
    for m in [*same, *family, *[m for m in named if m not in same]]:
        for f in m.filters:
            if f.field != "due_date":
                continue
            if req.age_until is None and f.op == "<" and f.value == cutoff:
                return m
            if req.age_until is not None and f.op == "between" and f.value == bucket:
                return m  # "1-30 days overdue": the bucket's own figure
    return None


# What is owed split "by how late it is", "by age bucket": 1-30, 31-60, 61-90, over 90 days.
_BY_AGE = re.compile(
    r"\b(?:by|per|into|in) (?:(how (?:late|overdue)|lateness|days (?:late|overdue))|"
    r"age(?: buckets?| bands?)?)\b"
)


def _overdue(metric: Any) -> bool:
    return any(f.field == "due_date" and f.op == "<" and f.value == "today" for f in metric.filters)


_STANDARD_BUCKETS: tuple[tuple[int, int | None], ...] = ((0, 30), (30, 60), (60, 90), (90, None))


def aged_buckets(catalog: Catalog, req: Request) -> list[Any]:
    """'How much is 1-30, 31-60, 61-90 and more than 90 days overdue?': the figure of each
    bucket said, in order; none unless every bucket has its own figure."""
    said = figures_message(catalog, req.text)
    buckets = parse_age_buckets(said)
    by_age = None if buckets else _BY_AGE.search(said.lower())
    named = ranked(catalog, req) if buckets or by_age else []
    fallback = req.report.fallback if req.report is not None else None
    if buckets and not named and fallback is not None and fallback.metric in catalog.metrics:
        # "How late is what our customers owe us? up to 30 days vs more than 30": the
        # figure of the report the words name (the Accounts Receivable report's receivables).
        named = [catalog.metrics[fallback.metric]]
    if by_age and named and (by_age.group(1) or _overdue(named[0])):
        # "What we owe by how late it is", "overdue receivables by age bucket": the amounts
        # past due in the report's own ranges ("receivables by age" is the whole report).
        buckets = list(_STANDARD_BUCKETS)
    if not named:
        return []
    # The buckets of the figure named: the same records' same amount, each of its own age.
    family = [m for m in catalog.metrics.values()
              if m.entity == named[0].entity and m.measure == named[0].measure]  # fmt: skip
    out = []
    for days, until in buckets:
        cutoff, bucket = f"today-{days}", [f"today-{until}", f"today-{days + 1}"]
        hit = next(
            (m for m in family for f in m.filters if f.field == "due_date"
             and ((until is None and f.op == "<" and f.value == cutoff)
                  or (until is not None and f.op == "between" and f.value == bucket))),
            None,
        )  # fmt: skip
        if hit is None:
            return []
        out.append(hit)
    return out


# "How many … and what do they add up to?": the count and the sum of the same records.
_AND_SUM = re.compile(
    r"\band\b.*\b(?:add up to|come to|total(?:led)?|sum(?:med)? to|worth|how much)\b",
    re.IGNORECASE,
)


def count_and_sum(catalog: Catalog, req: Request) -> list[Any]:
    """The count asked and the sum of the same records asked with it; none otherwise."""
    # "How many times have we invoiced Gulf Traders ; and what did that come to?" too.
    newest = req.text.split(" ; ")[-1]
    said = figures_message(catalog, req.text)
    if req.kind != Kind.COUNT or not (_AND_SUM.search(said) or questions.says("sum_of_it", newest)):
        return []
    found = ranked(catalog, req)
    if not found or found[0].measure.func != "count":
        return []
    counted = found[0]
    twins = [m for m in catalog.metrics.values()
             if m.entity == counted.entity and m.filters == counted.filters
             and m.measure.func == "sum"]  # fmt: skip
    # The same records' sum: before tax unless taxes are said, returns counted alike first.
    twins.sort(key=lambda m: (m.measure.field not in _NET_FIELDS, m.returns != counted.returns))
    twins = _with_tax(catalog, req.text, twins)
    return [counted, twins[0]] if twins else []


def expressible(req: Request) -> bool:
    """Whether every condition of the request maps onto metrics.query arguments."""
    return req.age_days is None and req.compared_field is None and not req.doc_ids


def group_by(catalog: Catalog, metric: Any, req: Request) -> list[str]:
    out: list[str] = []
    # A follow-up's "break that down by branch" replaces the grouping asked before it: the
    # newest message (follow-ups are joined with " ; ") that names one decides.
    segments = [seg for seg in req.text.lower().split(" ; ") if _BY.search(seg)]
    low = segments[-1] if segments else req.text.lower()
    for phrase in _by_phrases(low):
        words = phrase.split()
        for size in (3, 2, 1):
            head = " ".join(words[:size])
            grain = _GRAINS.get(head.rstrip("s")) or _GRAINS.get(head.removesuffix("ly"))
            if grain:
                out.append(grain)
                break
            dim = _dimension_named(catalog, metric, head)
            if dim:
                out.append(dim)
                break
    if (not out and (_WHERE.match(low) or _PLACES_ASKED.search(low))
            and "warehouse" in metric.dimensions and metric.unit_field):  # fmt: skip
        # "Where do we have orange chairs in stock?", "below reorder level anywhere?": per
        # warehouse.
        out.append("warehouse")
    which = _WHICH_OF.search(low)
    if not out and which:
        # "Which of my customers are late paying, and by how much?": per customer.
        dim = _dimension_named(catalog, metric, which.group(1))
        if dim:
            out.append(dim)
    if not out and req.group and req.group in metric.dimensions:
        # "which customers are they for?": a follow-up that groups by a link it names by the
        # linked records' name, not with "by".
        out.append(req.group)
    if req.date_part and req.date_part not in out and len(segments) < 2:
        out.append(req.date_part)
    if not any(g in _GRAINS for g in out):
        word = re.search(r"\b(monthly|quarterly|weekly|daily|yearly|annually)\b", low)
        if word:
            grain = {"monthly": "month", "quarterly": "quarter", "weekly": "week",
                     "daily": "day", "yearly": "year", "annually": "year"}[word.group(1)]  # fmt: skip
            out.append(grain)
    if (req.top or _RANK_ALL.search(low) or _WHO_AND.search(low)) and not any(
        g not in _GRAINS for g in out
    ):
        # "top 5 customers", "rank the branches by revenue": by the dimension the words name;
        # "who's taken the most leave?": by the people the figure is of.
        # The one said first after the ranking word: "top 3 customers in my branch" ranks
        # customers; the branch is where.
        hay = norm(req.text)
        start = _RANKING_WORD.search(hay)
        after = hay[start.start() :] if start else hay
        said: list[tuple[int, str]] = []
        for name in metric.dimensions:
            named = catalog.dimensions[name]
            terms = (named.label, name.replace("_", " "), *named.synonyms)
            at = [_term_at(after, t) for t in terms]
            found = [a for a in at if a >= 0] or (
                [len(after)] if any(has_term(hay, t) for t in terms) else []
            )
            if found:
                said.append((min(found), name))
        if said:
            out.insert(0, min(said)[1])
        else:
            people = [d for d in _WHO_DIMENSIONS if d in metric.dimensions]
            if people and _WHO.match(low):
                out.insert(0, people[0])
    if not out and _WHO_IN.match(low):
        out += [d for d in _WHO_DIMENSIONS if d in metric.dimensions][:1]
    return list(dict.fromkeys(out))[:4]


# Where a ranking starts: its word or its count ("top 3 customers", "which 5 items … the most").
_RANKING_WORD = re.compile(
    r" (?:top|biggest|largest|best|worst|most|least|highest|lowest|rank\w*|\d+|one|two|three|"
    r"four|five|six|seven|eight|nine|ten|twenty) "
)


def _term_at(hay: str, term: str) -> int:
    """Where a term is said in normalised words (singular or plural), or -1."""
    t = norm(term).strip()
    if not t:
        return -1
    m = re.search(rf" {re.escape(t)}(?:s|es)? ", hay)
    return m.start() if m else -1


def party_modifiers(catalog: Catalog, metric: Any, text: str) -> list[str]:
    """'supplier spend', 'customer revenue', 'branch sales': a party or place named before the
    figure, as a modifier, asks for the figure per party or place (the records' own names,
    'customer invoices', do not; a company's revenue is its total)."""
    hay = norm(text)
    entity_names = [norm(t).strip() for e in catalog.entities.values() for t in (e.label, e.plural)]
    every_name = "\n".join(entity_names)  # one substring test over them all
    said_names = [g for g in entity_names if f" {g} " in hay]
    out = []
    for name in metric.dimensions:
        if name not in _PARTY_DIMENSIONS and name not in _PER_PLACE:
            continue
        dim = catalog.dimensions[name]
        for party in (dim.label, name.replace("_", " "), *dim.synonyms):
            for term, _ in metric_terms(metric):
                said = f"{party} {term}".lower()
                low = norm(term).strip()
                inside = said in every_name or any(low in g for g in said_names)
                if party and not inside and says(hay, said):
                    out.append(name)
    return list(dict.fromkeys(out))


def _dimension_named(catalog: Catalog, metric: Any, phrase: str) -> str | None:
    """The dimension the phrase names by its longest term: "customer group" is the group,
    not the customer its words begin with."""
    hay = f" {phrase} "
    best: tuple[int, str] | None = None
    for name in metric.dimensions:
        dim = catalog.dimensions[name]
        terms = (dim.label, name.replace("_", " "), *dim.synonyms)
        size = max((len(norm(t).split()) for t in terms if t and has_term(hay, t)), default=0)
        if size and (best is None or size > best[0]):
            best = (size, str(name))
    return best[1] if best else None


def _dimension_terms(catalog: Catalog, name: str) -> list[str]:
    dim = catalog.dimensions[name]
    terms = (dim.label, name.replace("_", " "), *dim.synonyms)
    return [norm(t).strip() for t in terms if t and norm(t).strip()]


def _hinted(
    catalog: Catalog, text: str, names: list[tuple[str | None, str]], dims: list[str]
) -> list[tuple[str | None, str]]:
    """A name said right before or after a dimension's word ("the Mombasa warehouse",
    "nairobi stores", "branch Nakuru") is looked for in that dimension only: "Mombasa" alone
    is also a branch, "the Mombasa warehouse" is not."""
    hay = norm(text)
    out: list[tuple[str | None, str]] = []
    for hint, value in names:
        v = norm(value).strip()
        if hint is None and v:
            for d in dims:
                if d not in catalog.dimensions:
                    continue
                for t in _dimension_terms(catalog, d):
                    after = rf" {re.escape(v)} {re.escape(t)}(?:s|es)? "
                    before = rf" {re.escape(t)} {re.escape(v)} "
                    # "Office chairs" is no branch's name: a lowercase word after a dimension's
                    # word is what it qualifies, unless typed as a name ("branch Nakuru").
                    typed = value[:1].isupper() or any(ch.isdigit() for ch in value)
                    if f" {t} " not in f" {v} " and (
                        re.search(after, hay) or (typed and re.search(before, hay))
                    ):
                        hint = d
                        break
                if hint is not None:
                    break
        out.append((hint, value))
    return out


def _same_kind(text: str, resolved: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """'what about Kisumu?' after a warehouse: a bare place in a follow-up replaces the earlier
    place of the same kind, so it is looked for there first (name → the dimension to prefer)."""
    segments = [seg.lower() for seg in text.split(" ; ")]
    if len(segments) < 2:
        return {}

    prefer: dict[str, str] = {}
    places = {n: d for n, (d, _) in resolved.items() if d in _PLACES}
    for name, dim in places.items():
        at = message_saying(segments, name)
        earlier = {d for n, d in places.items() if message_saying(segments, n) < at}
        if at > 0 and len(earlier) == 1 and dim not in earlier:
            prefer[name] = next(iter(earlier))
    return prefer


_RANK_TARGET = re.compile(
    r"\b(?:top|biggest|largest|best|most|highest|lowest|worst|least|leading|smallest)\b"
    r"((?:\s+[a-z0-9'-]+){1,3})"
)


_WHICH = re.compile(r"^\s*(?:which|what)\s+((?:[a-z0-9'-]+\s*){1,2})")


_WHERE = re.compile(r"^\s*(?:and\s+)?where\b")
_WHO = re.compile(r"\s*(?:and\s+|so\s+)?(?:who|whom|whose|whos)\b")
# "Who's in the 90+ days bucket?", "who is over 60 days late?": the parties a figure is of.
_WHO_IN = re.compile(r"^\s*(?:who(?:'s|s| is| are)?) (?:in|over|past|behind|late|overdue|owing)\b")
_WHO_DIMENSIONS = ("employee", "customer", "supplier", "party")
_PLACES_ASKED = re.compile(r"\b(?:anywhere|which (?:warehouses?|stores?|locations?|sites?))\b")
_WHICH_OF = re.compile(r"\b(?:which|what) (?:of (?:my|our|the) )?([a-z]+s)\b")
_FROM_PARTIES = re.compile(
    r"\b(?:from|to|by|with)\s+(?:our\s+|the\s+|all\s+)?(?:suppliers|vendors|customers|clients)\b"
)


def _rank_targets(low: str) -> list[str]:
    """The words a ranking picks out ("top five items", "which items sold the most")."""
    phrases = [m.group(1).strip() for m in _RANK_TARGET.finditer(low)
               if not _MEASURE_PHRASE.match(m.group(1).strip())]  # fmt: skip
    subject = _WHICH.match(low)
    if subject and _RANK_TARGET.search(f"{low} x"):
        phrases.append(subject.group(1).strip())  # "which items sold the most?"
    return phrases


def _ranks_other(catalog: Catalog, req: Request, parties: set[str]) -> bool:
    """Whether the ranking picks out something other than the parties said ("top five items
    we received from suppliers" ranks items: the suppliers are where they came from)."""
    dims = getattr(catalog, "dimensions", None) or {}
    for phrase in _rank_targets(req.text.lower()):
        head = " ".join(phrase.split()[:3])
        named = {
            d for d in dims if any(has_term(f" {head} ", t) for t in _dimension_terms(catalog, d))
        }
        if named and not named & parties:
            return True
    return False


def unsupported_dimension(catalog: Catalog, metric: Any, req: Request) -> str | None:
    """A dimension the words rank or break the figure down by ("our biggest selling item",
    "sales by warehouse") that the metric cannot be cut by: it is said, never dropped."""
    dims = getattr(catalog, "dimensions", None) or {}
    segments = [seg for seg in req.text.lower().split(" ; ") if seg.strip()]
    low = segments[-1] if segments else req.text.lower()
    for phrase in [*_by_phrases(low), *_rank_targets(low)]:
        words = phrase.split()
        for size in (3, 2, 1):
            head = " ".join(words[:size])
            if _GRAINS.get(head.rstrip("s")) or _GRAINS.get(head.removesuffix("ly")):
                break
            hay = f" {head} "
            named = [d for d in dims if any(has_term(hay, t) for t in _dimension_terms(catalog, d))]
            if "currency" in named or any(d in metric.dimensions for d in named):
                break  # every figure is one sum per currency already
            if "ageing" in named and any(f.field == "due_date" for f in metric.filters):
                break  # "by age bucket": the buckets are the figures asked, each of its age
            if named:
                return str(named[0])
    return None


def _cannot_break_down(catalog: Catalog, metric: Any, missing: str) -> str:
    label = str(metric.label)
    wanted = catalog.dimensions[missing].label.lower()
    usable = [catalog.dimensions[d].label.lower() for d in metric.dimensions
              if d in catalog.dimensions and d not in ("currency", "status")]  # fmt: skip
    grains = ", or by month, quarter or year" if metric.date_field else ""
    example = usable[2] if len(usable) > 2 else (usable[0] if usable else "")
    hint = f" — for example “{label.split('(')[0].strip().lower()} by {example}”" if example else ""
    return (
        f"I can't break {label} down by {wanted} yet, so I won't answer with a figure that "
        f"ignores the {wanted}. It can be broken down by {join(usable)}{grains}. "
        f"Ask for one of those{hint}."
    )


def newest_per_dimension(
    text: str, resolved: Mapping[str, tuple[str, str]]
) -> dict[str, tuple[str, str]]:
    """'and in Mombasa Stores?' after '… in Nairobi Stores': a follow-up's name replaces the
    earlier name of the same dimension (follow-ups are joined with " ; ")."""
    segments = [seg.lower() for seg in text.split(" ; ")]

    def family(dim: str) -> str:
        return "place" if dim in _PLACES else dim

    newest: dict[str, int] = {}
    for name, (dim, _) in resolved.items():
        newest[family(dim)] = max(newest.get(family(dim), 0), message_saying(segments, name))
    return {
        n: v for n, v in resolved.items() if message_saying(segments, n) == newest[family(v[0])]
    }


def trend_step(ctx: Ctx) -> Step | None:
    """'How are sales trending?', 'this year vs last year': the metric by month over the last
    twelve months (as a chart), or to date against the same period a year earlier."""
    req = ctx.req
    metric = pick(ctx.catalog, req)
    if metric is None or not metric.date_field:
        return None
    if not ctx.has("metrics.query"):
        return enable(ctx, "metrics.query")
    req.kind = Kind.TREND
    req.chart = req.chart or not COMPARE.search(req.text.lower())
    return metric_step(ctx)


def _compared_words(text: str, today: dt.date) -> str:
    """The words that decide what a figure is compared with: the newest message that names a
    period or a comparison, unless the newest asks for a chart (then the figure over time)."""
    last = text.split(" ; ")[-1]
    return last if CHART.search(last) else comparing_message(text, today)


def _trend(ctx: Ctx, req: Request, args: dict[str, Any]) -> None:
    today = ctx.view.today
    # A follow-up's own words decide what it compares; one that only moves the scope ("and
    # houston?") keeps the comparison before it.
    low = _compared_words(req.text, today).lower()
    if COMPARE.search(low) or sets_against(low):
        args["group_by"] = [g for g in args.get("group_by") or [] if g not in _GRAINS]
        if not args["group_by"]:
            args.pop("group_by")
        if _compares_places(args):
            # "Kisumu against Mombasa": the places side by side, not two periods.
            args.pop("compare_to", None)
            return
        compared = compared_in(req.text, today)
        if compared is not None:
            # Periods defined once (parse_dates.Comparison): a running month, quarter or year
            # against the same days of the one before, named in the answer.
            args["period"] = _dates(compared.current)
            args.pop("compare_to", None)
            args["compare_period"] = _dates(compared.earlier)
            return
        # "How do we compare with last year?": to date against the same days a year earlier.
        start = today.replace(month=1, day=1)
        args["period"] = {"from": start.isoformat(), "to": today.isoformat()}
        args["compare_to"] = "same_period_last_year"
        return
    groups = list(args.get("group_by") or [])
    if not any(g in _GRAINS for g in groups):
        args["group_by"] = [*groups, "month"][:4]
    if "period" not in args:
        start = shift_months(today.replace(day=1), -11)
        args["period"] = {"from": start.isoformat(), "to": today.isoformat()}


def _dates(period: Period) -> dict[str, str]:
    return {"from": period.start.isoformat(), "to": period.end.isoformat()}


def _compares_places(args: dict[str, Any]) -> bool:
    """Two or more values of one dimension set against each other: that dimension becomes
    the grouping (filtered to them), so each is its own figure."""
    for flt in args.get("filters") or []:
        values = flt.get("value")
        if flt.get("op") == "in" and isinstance(values, list) and len(values) > 1:
            dim = str(flt.get("dimension"))
            args["group_by"] = [dim, *(g for g in args.get("group_by") or [] if g != dim)][:4]
            return True
    return False


def report_metric(catalog: Catalog, req: Request) -> Any | None:
    """'Which customer owes us the most?', 'the top 5 as a chart' after overdue receivables:
    a report named (or asked before) with a ranking is its top parties, so the metric of that
    report's records the words name (overdue receivables), else the one that is the report's
    total (named by the report's label among its terms), cut by the party named or, when none
    is, by the report's own party."""
    report = req.report
    if report is None or not report.entity:
        return None
    named = [m for m in ranked(catalog, req) if m.entity == report.entity]
    if req.top is None:
        # "How much is overdue for Gulf Traders?": one figure the report does not state (its
        # buckets hold what is not yet due too), named outright: that metric, cut by the names.
        low = req.text.lower()
        whole = getattr(report.fallback, "metric", None)
        if _ONE_FIGURE.search(low) and not _AGEING_WORDS.search(low):
            old = aged(catalog, req)  # "how much … is 31 to 60 days late": that bucket's figure
            if old is not None and old.entity == report.entity:
                return old
            said = [m for m in named if m.name != whole
                    and any(says(norm(req.text), t) for t, _ in metric_terms(m))]  # fmt: skip
            return said[0] if said else None
        return None
    metrics = list((getattr(catalog, "metrics", None) or {}).values())
    total = [m for m in metrics if m.entity == report.entity
             and norm(report.label).strip() in {norm(t).strip() for t, _ in metric_terms(m)}]  # fmt: skip
    parties = dimensions_named(catalog, req.text) & _PARTY_DIMENSIONS
    for m in [*named, *total]:
        own = [d for d in m.dimensions if d in _PARTY_DIMENSIONS]
        if parties & set(m.dimensions) or (not parties and own):
            return m
    return None


_ONE_FIGURE = re.compile(r"\b(how much|hw much|total|sum|amount|in all|altogether)\b")
_AGEING_WORDS = re.compile(r"\b(ageing|aging|aged|buckets?|brackets?|bands?|report)\b")


def report_party(catalog: Catalog, req: Request, metric: Any) -> str | None:
    """The party a report's ranking is by when the words name none: the metric's first."""
    if dimensions_named(catalog, req.text) & set(metric.dimensions):
        return None
    return next((d for d in metric.dimensions if d in _PARTY_DIMENSIONS), None)


def comparison_metric(catalog: Catalog, req: Request) -> Any | None:
    """'Which items are below reorder level?' compares two fields, which no filter can say, but
    a metric may mean exactly that comparison (its terms name the field compared with)."""
    if req.compared_field is None or req.entity is None:
        return None
    field = req.entity.fields.get(req.compared_field)
    label = norm((field.label if field else None) or req.compared_field.replace("_", " "))
    every = list((getattr(catalog, "metrics", None) or {}).values())
    for metric in [*ranked(catalog, req)[:3], *every]:
        if any(label.strip() in norm(term) for term, _ in metric_terms(metric)):
            return metric
    return None


def metric_step(
    ctx: Ctx, forced: Any | None = None, *, means_comparison: bool = False
) -> Step | None:
    """The metrics.query plan for this request (for the ``forced`` metric, if given, which
    ``means_comparison`` the request makes); None when the record plane should answer."""
    req = ctx.req
    if forced is None and not expressible(req):
        forced = aged(ctx.catalog, req)  # an age its definition holds is no condition left
        if forced is not None:
            req.age_days = None
    if not expressible(req) and not (forced is not None and means_comparison):
        return None
    if not ctx.has("metrics.query"):
        # Routing reads the words as typed; a figure named with a typo still gets its tool.
        # So does an item's quantity asked by its code ("quantity of SKU-8498-GRY").
        wanted = pick(ctx.catalog, req) is not None or (
            bool(req.items) and bool(_STOCK_WORDS.search(req.text.lower()))
        )
        return enable(ctx, "metrics.query") if wanted else None
    candidates = [forced] if forced else named_metrics(ctx.catalog, req)
    named = dimensions_named(ctx.catalog, req.text)
    parties = {d for d in named if d in _PARTY_DIMENSIONS}
    own = candidates and req.entity is not None and candidates[0].entity == req.entity.name
    if own and "party" in candidates[0].dimensions and not _RANKING_PARTIES.search(req.text):
        # Payments' party is any kind of party ("supplier payments"): their own records decide.
        # Parties ranked ("which vendors did we pay the most") by what we buy from them.
        parties = set()
    if (
        parties
        and candidates
        and (
            _ranks_other(ctx.catalog, req, parties)
            or (
                getattr(candidates[0], "unit_field", None)
                and _FROM_PARTIES.search(req.text.lower())
            )
        )
    ):
        # "Top items received from suppliers", "units Houston received from suppliers": the
        # parties are where goods came from, not what is ranked or measured.
        parties = set()
    if parties and candidates and not any(parties <= set(m.dimensions) for m in candidates[:4]):
        # "Which customers bought the most": no figure named is cut by customer, the figure
        # customers are ranked by in the catalog (revenue) is; the verb alone said "bought".
        known, metrics = ctx.catalog.dimensions, ctx.catalog.metrics
        by = [getattr(known[d], "ranked_by", None) for d in sorted(parties) if d in known]
        candidates += [metrics[m] for m in by if m in metrics and metrics[m] not in candidates]
        candidates = candidates if forced else _summed(req, candidates)
    metric = fitting(candidates, parties)
    low = req.text.lower()
    if metric is not None and (
        (metric is not candidates[0] and _COUNTED.search(low)) or _TIMES.search(low)
    ):
        # "Suppliers with the highest invoice count": the count named did not fit the party,
        # the figure that did is counted instead ("invoice count" of suppliers is their bills).
        metric = counted(ctx.catalog, metric)
    names = list(req.names) + [(None, code) for code in req.items]
    resolved: dict[str, tuple[str, str]] = {}
    found_loose: list[str] = []
    if metric is None and (not _STOCK_WORDS.search(low) or _records_counted(req)):
        return None
    said = " ".join(v.lower() for _, v in names) + " " + " ".join(req.settled).lower()
    loose = [n for n in vocabulary.loose_names(req.text, ctx.catalog) if n.lower() not in said]
    names += [(None, n) for n in loose]
    if names:
        dims = (
            list(metric.dimensions)
            if metric
            else ["item", "warehouse", "customer", "branch", "company"]
        )
        if metric is not None:
            # A name may be the party of a sibling metric ("Gulf Traders bought" is a customer),
            # or of the other side of the trade the verb names ("how much did Acme Ltd buy":
            # a customer buying is what we sold them).
            dims += [d for m in candidates[1:4] for d in m.dimensions
                     if d not in dims and d in _PARTY_DIMENSIONS]  # fmt: skip
            dims += [d for d in _traded(ctx.catalog, metric) if d not in dims]
        for dim in ("account", "item"):
            if metric is not None and dim not in dims and dim in ctx.catalog.dimensions:
                # "What did we spend on rent?": a name may be an account of the ledger; "what
                # do we pay for a Red Widget": an item, whose own figures answer.
                dims.append(dim)
        names = _hinted(ctx.catalog, req.text, names, dims)
        entity = metric.entity if metric is not None else None
        found, step = master_data.resolve(ctx, names, dims, loose, values_of=entity)
        if step is not None:
            return step
        if (
            metric is not None
            and "item" in metric.dimensions
            and not req.items
            and not any(d == "item" for d, _ in found.values())
        ):
            # "How many tape measures in Nairobi Stores": no item named, so one described by
            # the everyday words of its name.
            described = [d for d in vocabulary.described_names(req.text, ctx.catalog)
                         if d not in said and d not in found]  # fmt: skip
            if described:
                names += [("item", d) for d in described]
                loose += described
                found, step = master_data.resolve(ctx, names, dims, loose, values_of=entity)
                if step is not None:
                    return step
        prefer = _same_kind(req.text, found)
        if prefer:
            # The probes are already answered: this only re-reads them with the preference.
            found, step = master_data.resolve(ctx, names, dims, loose, entity, prefer)
            if step is not None:
                return step
        # "Red widgets" found whole is the Red Widget item, not also the Widgets group.
        resolved = {n: v for n, v in found.items() if n not in name_phrases.whole_first(found)}
        found_loose = [n for n in loose if n in resolved and n not in req.settled]
        if metric is None:
            metric = stock_metric(ctx.catalog, req, {d for d, _ in resolved.values()})
        else:
            traded = [ctx.catalog.metrics[m] for d in _traded(ctx.catalog, metric)
                      if (m := getattr(ctx.catalog.dimensions[d], "ranked_by", None))
                      and m in ctx.catalog.metrics]  # fmt: skip
            metric = fitting(
                [metric, *candidates, *_ledger_figures(ctx, req), *_item_figures(ctx, req),
                 *traded],
                {d for d, _ in resolved.values()},
            )  # fmt: skip
        resolved = newest_per_dimension(req.text, resolved)
    if metric is None:
        return None
    whole, step = master_data.named_whole(ctx, metric.dimensions, resolved)
    if step is not None:
        return step
    step = figure_step(ctx, metric, newest_per_dimension(req.text, {**resolved, **whole}))
    if step is not None:
        # Lowercase words found as names are part of the reading only once they filter the
        # figure: a figure that cannot take them leaves them to the records' own filters.
        req.settled += found_loose
    return step


def figure_step(ctx: Ctx, metric: Any, resolved: Mapping[str, tuple[str, str]]) -> Step | None:
    """The metrics.query call for ``metric`` cut by the ``resolved`` names (words → dimension,
    value), then its answer; None when the request says something the metric cannot express."""
    req = ctx.req
    missing = unsupported_dimension(ctx.catalog, metric, req)
    split = ctx.catalog.metrics.get(metric.split_by.get(missing)) if missing else None
    if split is not None:
        # "Which items sold the most": the same figure of the same records, cut by item.
        metric, missing = split, unsupported_dimension(ctx.catalog, split, req)
    if missing is not None:
        return say(_cannot_break_down(ctx.catalog, metric, missing))
    args = _arguments(ctx, metric, req, resolved)
    if args is None:
        return None
    r = ctx.result("metrics.query", args)
    if r is None:
        return call("metrics.query", args)
    if not r.ok:
        if "cannot read" in r.message:
            # The policy or the ERP refuses the metric's records: say so, it is not a failure.
            return say(f"You can't see that in the ERP: {r.message}.")
        return failed(r)
    whole = _whole_earlier(ctx, args)
    if whole is not None:
        # "This month vs last month" compares the same days; the whole of last month is
        # offered beside it, so neither reading is hidden.
        done = ctx.result("metrics.query", whole)
        if done is None:
            return call("metrics.query", whole)
        text = answer_text(r.data, args, resolved)
        if done.ok:
            text += f"\nThe whole of the earlier period: {answer_text(done.data, whole, resolved)}"
        return _shown(ctx, r, args) or say(text)
    text = answer_text(r.data, args, resolved)
    behind = _documents_behind(ctx, metric, r, args)
    if isinstance(behind, Step):
        return behind
    return _shown(ctx, r, args) or say(text + behind)


_DRILL = "results.drill"
_FEW = 12  # documents few enough to name beside the figure they make up
_OWED_GROUPS = frozenset(["receivables", "payables"])  # figures of what is owed (metrics.yaml)


def _documents_behind(ctx: Ctx, metric: Any, r: Any, args: Mapping[str, Any]) -> Step | str:
    """What is owed and overdue is a handful of invoices a person then chases: when one figure
    is made up of a few of them ("what's overdue in my branch?": 10), they are named beside
    it, read through the figure's own drill-down (so they add up to it)."""
    data = r.data if isinstance(r.data, dict) else {}
    entity = ctx.catalog.entities.get(metric.entity)
    totals = data.get("totals") or []
    if (entity is None or metric.group not in _OWED_GROUPS or args.get("group_by")
            or len(totals) != 1 or not 0 < int(totals[0].get("records") or 0) <= _FEW
            or r.result_id is None or not ctx.has(_DRILL)):  # fmt: skip
        return ""
    ref = {"ref": f"{r.result_id}.t0"}
    opened = ctx.result(_DRILL, ref)
    if opened is None:
        return call(_DRILL, ref)
    rows = rows_of(opened) if opened.ok else []
    ident = opened.data.get("id_field") if isinstance(opened.data, dict) else None
    if not rows or not ident:
        return ""

    def line(row: Mapping[str, Any]) -> str:
        said = [str(v) for k, v in row.items()
                if k not in (ident, metric.name, "currency") and v not in (None, "")]  # fmt: skip
        cur = f"{row['currency']} " if row.get("currency") else ""
        return f"- {row[ident]} ({', '.join([*said, f'{cur}{fmt(row.get(metric.name))}'])})"

    lines = [line(row) for row in rows]
    return f"\nThe {entity.plural.lower()} behind it:\n" + "\n".join(lines)


# Two figures asked side by side: "billed vs collected", "invoiced … and how much of that is
# still unpaid", "total invoiced to date vs what they still owe".
_SIDE_BY_SIDE = re.compile(
    r"\b(?:vs\.?|versus|against|compared (?:to|with)|and (?:how much|what)|and the)\b|,\s*(?=how much|what)"
)


def two_figures(ctx: Ctx) -> list[Any]:
    """The two metrics a request sets side by side, or none (then it is one figure)."""
    text = figures_message(ctx.catalog, ctx.req.text)
    m = _SIDE_BY_SIDE.search(text.lower())
    # "Total receipts and total payments this quarter": two figures joined by "and" alone.
    # (Not between two names: "Acme Ltd and Gulf Traders" is who, not which figures.)
    cuts = (
        [m]
        if m is not None
        else [a for a in re.finditer(r"\band\b", text) if _joins_words(text, a)]
    )
    for cut in cuts:
        left, right = text[: cut.start()], text[cut.end() :]
        picked = [named_in(ctx.catalog, left), named_in(ctx.catalog, right)]
        modifier = all(w not in vocabulary.GRAMMAR for w in right.lower().split())
        if picked[0] is not None and 0 < len(right.split()) <= 2 and modifier:
            # "Payroll YTD, gross and net": the second is the first figure's words with the
            # word said last swapped for the one after "and" (net payroll), a figure of the
            # same records.
            words = left.replace(",", " ").split()[:-1]
            for said in (" ".join([*words, right]), *(f"{right} {w}" for w in words)):
                swapped = named_in(ctx.catalog, said)
                if swapped not in (None, picked[0]) and swapped.entity == picked[0].entity:
                    picked[1] = swapped
                    break
        if picked[0] is not None and picked[1] is not None and picked[0].name != picked[1].name:
            return picked
    return []


def _joins_words(text: str, m: re.Match[str]) -> bool:
    before, after = text[: m.start()].split()[-1:], text[m.end() :].split()[:1]
    return not any(w[:1].isupper() for w in [*before, *after])


def _traded(catalog: Catalog, metric: Any) -> list[str]:
    """The party dimensions on the other side of a trade from the metric's own party: what
    we buy is sold to us by suppliers, what customers buy is what we sell (each ranked by its
    own figure, ``ranked_by``)."""
    dims = getattr(catalog, "dimensions", {}) or {}
    own = {d for d in metric.dimensions if d in _PARTY_DIMENSIONS}
    if not own:
        return []
    return [d for d in sorted(_PARTY_DIMENSIONS)
            if d not in own and d in dims and getattr(dims[d], "ranked_by", None)]  # fmt: skip


def named_in(catalog: Catalog, words: str) -> Any | None:
    """The metric these words name best (the catalog's own vocabulary, not a metric's id)."""
    scores = metric_scores(catalog, words)
    return catalog.metrics[max(scores, key=lambda n: scores[n])] if scores else None


def side_by_side(ctx: Ctx, metrics: list[Any]) -> Step | None:
    """Each figure queried on its own (same names, period and scope), answered one after the
    other; None when either cannot be asked of the metrics."""
    ctx.req.figures_side_by_side = True
    # Status words ("still unpaid") define one of the figures, not a filter on both.
    ctx.req.statuses = []
    # Each figure reads the same names: what one settles ("the kenyan company") is not taken
    # from the next.
    settled = list(ctx.req.settled)
    steps: list[Step | None] = []
    for m in metrics:
        ctx.req.settled = list(settled)
        steps.append(metric_step(ctx, m))
    return together(steps)


def together(steps: Sequence[Step | None], heading: str = "") -> Step | None:
    """Several figures answered one after the other: every look-up they still need first, then
    their answers (under ``heading``); None when any of them cannot be asked or answered."""
    if any(s is None for s in steps):
        return None
    calls: list[Call] = []
    for s in steps:
        calls += [c for c in (s.calls if s is not None else []) if c not in calls]
    if calls:
        return Step(calls=calls)
    texts = [s.text for s in steps if s is not None and s.text]
    if len(texts) != len(steps):
        return None
    return say("\n\n".join([heading, *texts] if heading else texts))


_BALANCE_WORDS = re.compile(r"\b(balance|as of|as at|stands? at|closing)\b")


def _ledger_figures(ctx: Ctx, req: Request) -> list[Any]:
    """The ledger's own figures, for a name that is an account: its balance at a date when the
    words ask for a balance, else what moved through it in the period."""
    metrics = ctx.catalog.metrics
    names = ["account_balance", "ledger_net_movement"]
    if not _BALANCE_WORDS.search(req.text.lower()):
        names.reverse()
    return [metrics[n] for n in names if n in metrics]


_BUYING_WORDS = re.compile(
    r"\b(buy\w*|bought|purchas\w*|cost\w*|pay|paid|paying|supplier\w*|vendor\w*)\b"
)


def _item_figures(ctx: Ctx, req: Request) -> list[Any]:
    """An item's own figures: what we last paid for it when the words are of buying."""
    metrics = ctx.catalog.metrics
    low = req.text.lower()
    # "How many grey chairs were received from suppliers": a quantity received, though it
    # names whom from; "what did we pay suppliers for them": the rate.
    counted = bool(_COUNTED.search(low) or _HOW_MANY_GOODS.search(low))
    if (
        _BUYING_WORDS.search(low)
        and not LIST_PRICE.search(low)
        and "last_purchase_rate" in metrics
        and not (counted and _RECEIVING.search(low))
    ):
        return [metrics["last_purchase_rate"]]
    if _SELLING.search(low) and not (_BUYING_WORDS.search(low) or _PRICE_WORDS.search(low)):
        # "How many grey office chairs did we sell": the invoice lines of that item, which the
        # invoices' own totals cannot be cut by; "how much of it did we sell", their amount.
        names = ["item_quantity_sold", "gross_profit_selling_amount"][:: 1 if counted else -1]
        return [metrics[n] for n in names if n in metrics]
    if _RECEIVING.search(low):
        # "How many grey hammers were received": goods into stock, not money received.
        valued = bool(re.search(r"\b(value|worth|cost)\b", low))
        names = ["goods_received_stock_value", "goods_received_qty"][:: 1 if valued else -1]
        return [metrics[n] for n in names if n in metrics]
    return []


_SELLING = re.compile(r"\b(?:sell|sells|selling|sold)\b")
_PRICE_WORDS = re.compile(r"\b(?:price|prices|rate|rates|priced)\b")  # "selling price": a price
_RECEIVING = re.compile(r"\b(?:receiv(?:e|ed|ing)|came in|arrived|goods came in|goods coming in)\b")
_HOW_MANY_GOODS = re.compile(r"\b(?:units?|qty|quantity|quantities|altogether|in all)\b")


def _whole_earlier(ctx: Ctx, args: Mapping[str, Any]) -> dict[str, Any] | None:
    if "compare_period" not in args:
        return None
    compared = compared_in(ctx.req.text, ctx.view.today)
    if compared is None or compared.full_earlier is None:
        return None
    whole = {k: v for k, v in args.items() if k != "compare_period"}
    whole["period"] = _dates(compared.full_earlier)
    return whole


def query_args(
    ctx: Ctx, metric: Any, resolved: Mapping[str, tuple[str, str]]
) -> dict[str, Any] | None:
    """The metrics.query arguments for ``metric`` cut by ``resolved`` (None: not expressible)."""
    return _arguments(ctx, metric, ctx.req, resolved)


def _arguments(
    ctx: Ctx, metric: Any, req: Request, resolved: Mapping[str, tuple[str, str]]
) -> dict[str, Any] | None:
    args: dict[str, Any] = {"metric": metric.name}
    groups = group_by(ctx.catalog, metric, req)
    filters: list[dict[str, Any]] = []
    by_dim: dict[str, list[str]] = {}
    for dim, value in resolved.values():
        if dim not in metric.dimensions:
            return None  # a name this metric cannot be filtered by: never drop it
        by_dim.setdefault(dim, []).append(value)
    groups += [d for d in party_modifiers(ctx.catalog, metric, req.text)
               if d not in groups and d not in by_dim]  # fmt: skip
    listed = req.entity if req.kind == Kind.LIST and req.compared_field is not None else None
    if listed is not None and listed.name in metric.dimensions:
        # "Which items are below reorder level": the figure per item, so the items are named.
        groups = [listed.name, *(g for g in groups if g != listed.name)]
    # A cut by what is fixed to one value says nothing ("by item" of one item); two or more
    # values named are each one's own figure ("annual and sick leave balances").
    groups = [g for g in groups if len(by_dim.get(g, ())) != 1]
    groups += [d for d, values in by_dim.items() if len(values) > 1 and d not in groups]
    if groups:
        args["group_by"] = groups[:4]
    filters += [_dimension_filter(dim, values) for dim, values in by_dim.items()]
    if req.statuses:
        terms = norm(" ".join(t for t, _ in metric_terms(metric)))
        text = norm(req.text)
        said = [v for v in req.statuses if has_term(text, v)] or [
            w for w in _STATUS_WORDS if has_term(text, w)
        ]
        # A metric that means the status already ("open sales orders") needs no filter.
        means_it = bool(said) and all(has_term(terms, w) for w in said)
        if not means_it and "status" in metric.dimensions:
            filters.append(_dimension_filter("status", req.statuses))
        elif not means_it and not all(has_term(terms, v) for v in req.statuses):
            return None  # a status this metric neither filters by nor means: never drop it
    said_of_its_records = req.entity is not None and req.entity.name == metric.entity
    for name, values in req.enum_filters.items() if said_of_its_records else ():
        # A value the user named ("payments to suppliers", "internal transfers") is either what
        # the metric means already, a dimension it is cut by, or a reason it cannot answer.
        if all(_means(metric, name, v) for v in values):
            continue
        if name not in metric.dimensions or name in by_dim:
            return None
        filters.append(_dimension_filter(name, values))
    for name, on in req.flags.items() if said_of_its_records else ():
        if not _flagged(metric, name, on):
            return None  # "credit notes" of a figure that is not of credit notes: never dropped
    if ctx.view.company and "company" in metric.dimensions and "company" not in by_dim:
        filters.append({"dimension": "company", "op": "=", "value": ctx.view.company})
    if filters:
        args["filters"] = filters
    if req.period is not None and metric.date_field:
        args["period"] = {"from": req.period.start.isoformat(), "to": req.period.end.isoformat()}
    if req.as_of is not None and (not metric.date_field or metric.cumulative):
        # A balance at a date: everything dated on or before it.
        args["as_of"] = req.as_of.isoformat()
    if req.top:
        args["top"] = req.top
    if req.amount is not None:
        if not any(g not in _GRAINS for g in groups):
            return None  # "owe more than 10k" is per party: the record plane lists them
        args["having"] = {"op": req.amount.op, "value": float(req.amount.value)}
    compares = req.kind == Kind.TREND or sets_against(_compared_words(req.text, ctx.view.today))
    if metric.date_field and compares and not req.figures_side_by_side:
        _trend(ctx, req, args)
    return args


def _shown(ctx: Ctx, r: Any, args: Mapping[str, Any]) -> Step | None:
    if r.result_id is None:
        return None
    rows = r.data.get("rows") if isinstance(r.data, dict) else None
    if not isinstance(rows, list) or len(rows) < 2:
        return None
    if ctx.result("display.chart") is not None or ctx.result("display.table") is not None:
        return None
    groups = list(args.get("group_by") or [])
    metric = str(args["metric"])
    wants_chart = ctx.req.chart or bool(ctx.req.top)
    if wants_chart and ctx.has("display.chart") and groups:
        kind = "line" if groups[-1] in _GRAINS and len(groups) == 1 else "bar"
        label = groups[-1] if groups[-1] not in _GRAINS or len(groups) == 1 else groups[0]
        return call("display.chart", {"result_id": r.result_id, "type": kind, "label": label,
                                       "values": [metric], "title": _title(r.data)})  # fmt: skip
    if ctx.has("display.table"):
        return call("display.table", {"result_id": r.result_id, "title": _title(r.data)})
    return None


def _title(data: Any) -> str:
    return (
        str(data.get("label") or data.get("metric") or "")[:120] if isinstance(data, dict) else ""
    )


MAX_LINES = 12
# Figures of a state at a moment (stock, an account), where nothing recorded means zero.
_BALANCES = frozenset(["stock_on_hand", "projected_stock", "stock_value", "account_balance"])


def _companions(row: Mapping[str, Any], columns: Mapping[Any, Any], metric: str) -> str:
    """The figures a metric carries beside its own ("on hand 26, reorder level 30")."""
    shown = [f"{str(c.get('label') or k).split(' (')[0].lower()} {fmt(row[k])}"
             for k, c in columns.items() if isinstance(c, dict) and c.get("kind") == "measure"
             and k not in (metric, "previous") and is_number(row.get(k))]  # fmt: skip
    return f" ({', '.join(shown)})" if shown else ""


def _before(row: Mapping[str, Any], cur: str, key: str = "") -> str:
    """A compared figure: the earlier period's value beside the current one."""
    if "previous" not in row:
        return ""
    before = row.get("previous")
    if not is_number(before):
        return ", nothing in the earlier period"
    return f", against {cur}{fmt(before)} in the earlier period"


def _latest(row: Mapping[str, Any], details: list[str]) -> str:
    """Where a latest(...) figure was read: its document and date, then the rest of its line
    ("per Nos, on MAT-PRE-2026-00123 of 2026-09-18; supplier Nairobi Steel Works Ltd, qty 1,220")."""
    if not details or not row.get("document"):
        return ""
    text = f" per {row['uom']}" if row.get("uom") and "uom" in details else ""
    text += f", on {row['document']}" + (f" of {row['date']}" if row.get("date") else "")
    rest = [f"{k.replace('_', ' ')} {fmt(row[k]) if is_number(row[k]) else row[k]}"
            for k in details if k not in ("date", "document", "uom") and row.get(k) not in (None, "")]  # fmt: skip
    return text + ("; " + ", ".join(rest) if rest else "")


def answer_text(data: Any, args: Mapping[str, Any], resolved: Mapping[str, tuple[str, str]]) -> str:
    """The figures as returned (per currency), then what was counted, in the result's words."""
    if not isinstance(data, dict):
        return "The ERP returned no figures for that."
    label = str(data.get("label") or data.get("metric"))
    columns = {c.get("key"): c for c in data.get("columns") or [] if isinstance(c, dict)}
    metric = str(data.get("metric"))
    rows = [r for r in data.get("rows") or [] if isinstance(r, dict)]
    totals = [t for t in data.get("totals") or [] if isinstance(t, dict)]
    found = data.get("definition")
    definition: dict[str, Any] = found if isinstance(found, dict) else {}
    lines: list[str] = []
    keys = [
        k
        for k, c in columns.items()
        if c.get("kind") in ("dimension", "period") and k != "currency"
    ]
    details = [str(k) for k, c in columns.items() if c.get("kind") == "detail"]
    if keys and rows:
        # One currency after the other: figures in different currencies are never interleaved;
        # up to twelve rows of each (a year of months) in words, the rest in the table.
        rows = sorted(rows, key=lambda r: str(r.get("currency") or ""))
        per_currency: dict[str, int] = {}
        hidden = 0
        for row in rows:
            cur_key = str(row.get("currency") or "")
            per_currency[cur_key] = per_currency.get(cur_key, 0) + 1
            if per_currency[cur_key] > MAX_LINES:
                hidden += 1
                continue
            who = ", ".join(str(row.get(k)) for k in keys)
            cur = f"{row['currency']} " if row.get("currency") else ""
            lines.append(
                f"- {who}: {cur}{fmt(row.get(metric))}"
                + _latest(row, details)
                + _before(row, cur)
                + _companions(row, columns, metric)
            )
        if hidden:
            # No count of the rest: a number made here would be no tool's figure.
            lines.append("(the rest are in the table)")
    head = label
    if len(totals) > 1 and all(t.get("uom") and t.get("records") == t.get("value") for t in totals):
        # A count kept per unit of measure (for the quantities beside it) is still one count.
        whole = sum(int(t.get("value") or 0) for t in totals)
        totals = [{"value": whole, "records": whole}]
    if totals:
        parts = [f"{t['currency'] + ' ' if t.get('currency') else ''}{fmt(t.get('value'))}"
                 + (f" {t['uom']}" if t.get("uom") else "")
                 + (f" over {fmt(t['records'])} record{'' if t['records'] == 1 else 's'}"
                    if is_number(t.get("records")) and t.get("records") != t.get("value")
                    and not details else "")
                 + _before(t, f"{t['currency']} " if t.get("currency") else "", "value")
                 for t in totals]  # fmt: skip
        head += (" in total: " if keys else ": ") + "; ".join(parts)
        every = data.get("all_units")
        if isinstance(every, dict) and every.get("units"):
            # The units added up as the ERP's stock reports add them ("how many units in all").
            head += (
                f"; all units together: {fmt(every.get('value'))} "
                f"({', '.join(str(u) for u in every['units'])} counted alike)"
            )
    elif not rows and metric in _BALANCES:
        # A balance with nothing in it is zero ("on hand at Houston Stores: 0"), not missing.
        named = [f"{dim.replace('_', ' ')} {value}" for dim, value in resolved.values()]
        return f"{label}: 0" + (f" for {join(named)}" if named else "") + "."
    elif not rows:
        return f"No records found: nothing counts towards {label} for that, among what you can see."
    named = [f"{dim.replace('_', ' ')} {value}" for dim, value in resolved.values()]
    period = definition.get("period")
    where = (" for " + join(named)) if named else ""
    when = f" ({period})" if period else ""
    text = f"{head}{where}{when}."
    if details and not keys:
        # The line each latest figure was read from (its receipt, date, supplier, quantity).
        lines = [f"- {r['currency'] + ' ' if r.get('currency') else ''}{fmt(r.get(metric))}"
                 + _latest(r, details) for r in rows[:MAX_LINES] if r.get("document")]  # fmt: skip
    if lines:
        text += "\n" + "\n".join(lines)
    filters = definition.get("filters") or []
    if filters:
        text += "\nCounted: " + "; ".join(str(f) for f in filters[:6]) + "."
    return text
