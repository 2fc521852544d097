"""Deterministic tool routing: the request's words → the tools that answer it.

Cheap and predictable: no model call. Every request is offered a small spine: the figure tool
(``metrics.query``, the one exact tool for business figures, with ``metrics.catalog``), the
display tools and ``tools.search``, which enables any other permitted tool. The request's
words add what answers it beyond figures: the read tools of the records it names (writes only
when it asks to change something), the reports it names, the analysis its words ask for
(trend, ageing, forecast…: the question kinds' cues, ``catalog/data/questions.yaml``), the
knowledge base for a process question, workflow tools for an approval. Only permitted tools,
under a hard cap.

A conversation keeps one tools array: a follow-up is routed against it, keeps it byte for byte
and only appends what it does not hold, so a server's prefix cache reuses every earlier
request.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.catalog import Catalog
from erp_agent.catalog.fields import FieldType
from erp_agent.catalog.questions import load_questions
from erp_agent.tools.base import Effect, Tool, ToolRegistry

# What every question may need, whatever its words: the figure tool and its catalog, the
# display tools (a table, a chart, a question with choices) and the search for other tools.
SPINE = (
    "tools.search",
    "metrics.query",
    "metrics.catalog",
    "display.table",
    "display.chart",
    "display.choices",
)
# What a follow-up about the last result asks for ("export that", "the next ones"): offered
# on those words (the question kinds' cues) once the conversation has a result.
ON_A_RESULT = ("results.page", "results.export")
# The vocabulary is the question kinds' (catalog/data/questions.yaml), shared with the planner:
# the verbs of a change, the words that ask for an analysis or a figure, words referring back.
_QUESTIONS = load_questions()
WRITE_WORDS = _QUESTIONS.write_words
WRITE_PHRASES = _QUESTIONS.write_phrases
# Words that ask for an analysis rather than records: offer the analysis tool beside the data.
ANALYSIS_WORDS = _QUESTIONS.offered_on_words()
# A cue's patterns offer its tool too ("past due", "going up").
ANALYSIS_PATTERNS = [
    (re.compile(p), cue.offers)
    for name, cue in _QUESTIONS.cues.items()
    if cue.offers
    for p in _QUESTIONS.patterns(name)
]
# Cues whose question another tool answers: a process question the knowledge base, an
# approval question the workflow tools, a record described in words the records' search.
CUE_TOOLS: dict[str, tuple[str, ...]] = {
    "knowledge": ("knowledge.search",),
    "action_question": ("knowledge.search",),
    "workflow": ("workflow.pending", "workflow.describe"),
    "my_queue": ("workflow.pending",),
    "find": ("records.search",),
}
_CUE_PATTERNS = {cue: [re.compile(p) for p in _QUESTIONS.patterns(cue)] for cue in CUE_TOOLS}
# Arithmetic in the request ("what is 15% of 2,300", "120 / 7", "300 - 45"), not an id
# ("PUR-ORD-2026-00087") or a date: the calculator.
_ARITHMETIC = re.compile(
    r"(?<![\w-])\d[\d,.]*\s*(?:[+*/×÷^]|\s-\s)\s*\d|\d\s*%\s*(?:\w+\s+){0,2}(?:of|on)\s+[$€£]?\d"
)
# Words that open a request for records ("which …", "list …", "show me the …").
_LIST_OPENING = [re.compile(p) for p in _QUESTIONS.patterns("list_opening")]
# The changes a write tool makes, as the question kinds' verbs name them.
_WRITE_ACTIONS = {"workflow_action": ("approve", "reject")}
# Words that may ask for a figure, and the question kinds' cues of an amount or a count.
FIGURE_WORDS = _QUESTIONS.words("figure_words")
_FIGURE_PATTERNS = [
    re.compile(p)
    for cue in ("count", "figure", "what_done", "what_paid")
    for p in _QUESTIONS.patterns(cue)
]
# A document id of some naming pattern ("INV-2026-00873", "SI-00456").
_ID_LIKE = re.compile(r"\b[A-Z]{2,}(?:[-/][A-Z0-9]+)*[-/]\d{3,}\b")
CALCULATOR = "calculator.evaluate"
# Words that only ask for an order ("the top 5"): a question of its own is offered the
# concentration analysis too (what the top few make of the whole), but a follow-up ranks the
# result it has with the conversation's aggregate, so they add no analysis there.
RANKING_WORDS = _QUESTIONS.words("ranking")
METRICS_QUERY = "metrics.query"
# A follow-up naming what the conversation's records link to ("which customers are they
# for?") is about those records broken down by it: their own aggregate groups by the link, so
# the linked entity adds no tools when the message refers back to them. A field of its own that
# those records lack ("what credit limit do those customers have?"), or no reference back
# ("show me the customers"), adds the tools that read its records (not its counts and sums).
DIMENSION_ACTIONS = ("list", "get")
LOOKUP = "lookup"
# Naming records offers these (a list says how many in all); their figures: metrics.query.
RECORD_ACTIONS = ("list", "get", LOOKUP)
FIGURE_ACTIONS = ("count", "aggregate")  # an entity's own figures, when no metric covers it
WORKFLOW_ACTIONS = ("workflow",)  # a document's approval state, with its id
BACK_WORDS = _QUESTIONS.words("back")
DEFAULT_CAP = 16  # the spine (6) and up to 10 tools the request picks
_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*")


@functools.lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    # Cached: every request checks the same few thousand catalog terms.
    return " ".join(_WORD.findall(text.lower()))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _contains(haystack: str, words: set[str], phrase: str) -> bool:
    phrase = normalise(phrase)
    if not phrase:
        return False
    if " " in phrase or "-" in phrase:
        return f" {phrase} " in f" {haystack} "
    return _stem(phrase) in words


@dataclass
class Route:
    modules: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    document_ids: list[tuple[str, str]] = field(default_factory=list)  # (entity, id)
    wants_write: bool = False
    offered: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)  # tools the words ask for besides entities
    ranking: list[str] = field(default_factory=list)  # of ``asked``, those only an order asks for
    named_fields: dict[str, set[str]] = field(default_factory=dict)  # entity → its fields named
    refers_back: bool = False  # "they", "those": the records the conversation is about
    named_modules: list[str] = field(default_factory=list)  # matched directly, not by relation
    knowledge: bool = False  # a process question: the knowledge base answers it
    named: set[str] = field(default_factory=set)  # entities named by name or id, not by a keyword
    figure: bool = False  # asks for a figure (metrics.query answers it)
    counts: bool = False  # says a figure in so many words ("how many", "total", "by month")
    metric_named: bool = False  # names a metric ("revenue", "headcount")
    records: bool = False  # asks for records (a list, a document), not only a figure
    changes: set[str] = field(default_factory=set)  # the changes asked for (create, approve…)
    keyword_reports: list[str] = field(default_factory=list)  # of reports, named by a keyword
    on_result: list[str] = field(default_factory=list)  # paging, export: for a follow-up
    analysed: bool = False  # asks for an analysis (trend, ageing…)
    in_play: list[str] = field(default_factory=list)  # a follow-up: the records talked about


class Router:
    def __init__(
        self, catalog: Catalog, registry: ToolRegistry, connector_name: str, cap: int = DEFAULT_CAP
    ) -> None:
        self.catalog = catalog
        self.registry = registry
        self.connector_name = connector_name
        self.cap = cap
        # Entities some metric counts or sums, or groups by: their figures come from
        # metrics.query.
        self.counted = {m.entity for m in catalog.metrics.values()}
        # Field labels of several words that one entity alone has ("credit limit"), not its
        # title: naming one names the entity.
        owners: dict[str, set[str]] = {}
        for entity in catalog.entities.values():
            for f in entity.fields.values():
                label = normalise(f.label)
                if not f.title and not f.identifier and " " in label:
                    owners.setdefault(label, set()).add(entity.name)
        self.field_labels = {label: next(iter(e)) for label, e in owners.items() if len(e) == 1}
        self.measured = self.counted | {d.entity for d in catalog.dimensions.values() if d.entity}

    def everything(self, session: Session) -> list[str]:
        """Every tool this user may call, spine first: for a model that reads them all."""
        allowed = session.allowed_tools
        names = [*SPINE, *(t.name for t in self.registry)]
        return [n for n in dict.fromkeys(names) if n in allowed and n in self.registry]

    def route(self, text: str, session: Session, extra: Iterable[str] = ()) -> Route:
        haystack = normalise(text)
        lowered = text.lower()
        words = {_stem(w) for w in haystack.split()}
        wants_write = bool(words & WRITE_WORDS) or any(
            f" {p} " in f" {haystack} " for p in WRITE_PHRASES
        )
        route = Route(wants_write=wants_write, refers_back=bool(words & BACK_WORDS))
        for entity, doc_id in self.catalog.find_document_ids(self.connector_name, text):
            route.document_ids.append((entity.name, doc_id))
            route.entities.append(entity.name)
            route.named.add(entity.name)
        matched: dict[str, list[str]] = {}
        for entity in self.catalog.entities.values():
            own = (entity.name.replace("_", " "), entity.label, entity.plural)
            said = [
                t
                for t in (*own, *entity.keywords, *entity.synonyms)
                if _contains(haystack, words, t)
            ]
            if entity.name not in route.entities and said:
                route.entities.append(entity.name)
                matched[entity.name] = [normalise(t) for t in said]
                if any(_contains(haystack, words, t) for t in own):
                    route.named.add(entity.name)
        # A word inside a record's name says nothing more ("order", "purchases" in "purchase
        # orders").
        named_words = {_stem(w) for e in route.named for t in matched.get(e, ()) for w in t.split()}
        route.entities = [
            e
            for e in route.entities
            if e in route.named
            or not all({_stem(w) for w in t.split()} <= named_words for t in matched.get(e, ()))
        ]
        for entity_name in self._by_own_fields(haystack, words):
            if entity_name not in route.entities:  # "what credit limit does Acme Ltd have"
                route.entities.append(entity_name)
                route.named.add(entity_name)
        for name in route.entities:
            route.named_fields[name] = {
                f.name
                for f in self.catalog.entity(name).fields.values()
                if not f.title
                and any(_contains(haystack, words, t) for t in (f.label, f.name.replace("_", " ")))
            }
        route.metric_named = metric_named = self._names_a_metric(haystack, words)
        route.counts = bool(words & FIGURE_WORDS) or any(
            p.search(lowered) for p in _FIGURE_PATTERNS
        )
        route.figure = route.counts or metric_named
        for report in self.catalog.reports.values():
            # A report by its name; by a keyword only when no metric is named ("overdue
            # receivables" is a metric, "accounts receivable" the report).
            if _contains(haystack, words, report.label):
                route.reports.append(report.name)
            elif not metric_named and any(_contains(haystack, words, t) for t in report.keywords):
                route.reports.append(report.name)
                route.keyword_reports.append(report.name)
        modules: list[str] = []
        for module in self.catalog.modules.values():
            if any(_contains(haystack, words, t) for t in module.keywords):
                modules.append(module.name)
        for name in route.entities:
            modules.extend(self.catalog.entity(name).modules[:1])
        for name in route.reports:
            modules.append(self.catalog.report(name).module)
        route.named_modules = list(dict.fromkeys(modules))
        route.modules = list(dict.fromkeys(self.catalog.with_related(route.named_modules)))
        analyses = [tool for word, tool in ANALYSIS_WORDS.items() if word in words]
        # The analyses' looser patterns only about business things; a follow-up's about the
        # last result ("the second one") whatever it names.
        analyses += [
            tool
            for pattern, tool in ANALYSIS_PATTERNS
            if (route.named_modules or tool in ON_A_RESULT) and pattern.search(lowered)
        ]
        analyses = list(dict.fromkeys(analyses))
        route.figure = route.figure or any(a.startswith("analytics.") for a in analyses)
        route.ranking = [
            tool
            for tool in analyses
            if all(
                w in RANKING_WORDS for w, t in ANALYSIS_WORDS.items() if t == tool and w in words
            )
            and not any(t == tool and p.search(lowered) for p, t in ANALYSIS_PATTERNS)
        ]
        cued = [
            tool
            for cue, tools in CUE_TOOLS.items()
            if any(p.search(lowered) for p in _CUE_PATTERNS[cue])
            for tool in tools
        ]
        # Passages from the knowledge base go with a process or approval question.
        route.knowledge = bool({"knowledge.search", "workflow.describe"} & set(cued))
        if not route.document_ids and _ID_LIKE.search(text):
            cued.append("records.search")  # an id of no known naming pattern: search for it
        opened = next((m for p in _LIST_OPENING if (m := p.search(lowered))), None)
        # "which customers owe us more than 500k": a question of figures (a metric, an
        # analysis) asked with "which" is answered by the figures' own rows
        asks_which = opened is not None and (
            opened.group(1) == "which" or (opened.group(1) == "who" and bool(analyses))
        )
        metric_named = metric_named or bool(analyses)
        route.records = (
            route.wants_write
            or bool(route.document_ids)
            or not route.figure
            # "list …", "show me the …": records; "which …" too, unless a metric's rows say
            # which ("which items are below reorder level")
            or (opened is not None and not route.ranking and not (asks_which and metric_named))
        )
        # Records named by their own name in a question that says no figure in so many words
        # ("show the delivery notes we sent today"): their list, beside the metric layer.
        route.analysed = bool(analyses)
        route.changes = _changes(words, haystack)
        if _ARITHMETIC.search(lowered):
            cued.append(CALCULATOR)
        asked = list(dict.fromkeys([*analyses, *cued, *extra]))
        # Paging and export act on a result: a follow-up gets them (``follow``), a first
        # question has none.
        route.on_result = [n for n in asked if n in ON_A_RESULT]
        route.asked = [n for n in asked if n not in ON_A_RESULT]
        route.offered = self._offer(route, session, route.asked)
        return route

    def _by_own_fields(self, haystack: str, words: set[str]) -> list[str]:
        """Entities named by a field only they have, of several words ("credit limit")."""
        return [e for label, e in self.field_labels.items() if _contains(haystack, words, label)]

    def _attributes(self, name: str, fields: set[str], strong: Sequence[str]) -> bool:
        """Whether a record named by its own name is asked for a field of its own (its credit
        limit), not one figures are grouped by (an invoice's branch)."""
        own = self.catalog.entity(name).fields
        return name in strong and any(not own[f].groupable for f in fields if f in own)

    def _without_qualifiers(self, entities: list[str], route: Route) -> list[str]:
        """``entities`` without those that only qualify another one named with them ("customer
        invoices": the invoices of customers), unless a field of their own is named."""
        links = {
            f.target
            for name in entities
            for f in self.catalog.entity(name).fields.values()
            if f.type is FieldType.LINK and f.target != name
        }
        return [
            e for e in entities if e not in links or route.named_fields.get(e) or len(entities) == 1
        ]

    def _names_a_metric(self, haystack: str, words: set[str]) -> bool:
        """The name of a metric ("revenue", "overdue receivables", "headcount")."""
        return any(
            _contains(haystack, words, term)
            for metric in self.catalog.metrics.values()
            for term in (metric.name.replace("_", " "), metric.label, *metric.synonyms)
        )

    def follow(
        self,
        route: Route,
        before: Mapping[str, Any],
        session: Session,
        *,
        has_result: bool = False,
    ) -> Route:
        """``route`` for a follow-up turn, routed against the conversation's tools so far: they
        come first, all of them, in their order, and this message only appends what they do
        not already cover. The tools array then stays byte-identical from turn to turn, or
        grows at its end, so a server's prefix cache (vLLM, llama.cpp) and a provider's prompt
        cache reuse it: chat templates render the tools before the messages, and any change
        inside the array would invalidate the whole history after it. ``has_result``: the
        conversation has a result to page through or export."""
        kept = [
            name
            for name in before.get("offered", [])
            if name in session.allowed_tools and name in self.registry
        ]
        if route.wants_write and not route.entities:
            # "approve the first one", "submit it": a change that names nothing acts on what
            # the conversation was about, so its write tools are offered.
            route.entities = [e for e in before.get("entities", []) if e in self.catalog.entities]
        if any(n == METRICS_QUERY or n.endswith(".aggregate") for n in kept):
            # "show the top 5 as a chart": the conversation's aggregate ranks its own result.
            route.asked = [n for n in route.asked if n not in route.ranking]
        if METRICS_QUERY in kept:
            # A report named only by a word its figures share ("owes us") adds nothing to a
            # conversation that has the metric layer; one named by its name does.
            route.reports = [r for r in route.reports if r not in route.keyword_reports]
        if has_result:
            route.asked = [*route.asked, *route.on_result]
        # This message's own modules pick its tools; the conversation's modules keep its prompt.
        # The records in play: those the conversation's tools read, and those it was about
        # (a figure of open sales orders is about sales orders).
        route.in_play = [e for e in before.get("entities", []) if e in self.catalog.entities]
        route.offered = self._offer(route, session, route.asked, kept)
        route.modules = list(dict.fromkeys([*before.get("modules", []), *route.modules]))
        return route

    def _dimensions(self, kept: Sequence[str], in_play: Sequence[str] = ()) -> dict[str, set[str]]:
        """Entities the conversation's records link to by a field they group by (the customer
        of the sales orders already in play), each with the fields of those records."""
        entities = {t.entity for n in kept if (t := self.registry.get(n)) is not None and t.entity}
        entities |= set(in_play)
        dimensions: dict[str, set[str]] = {}
        for name in entities:
            if name not in self.catalog.entities:
                continue
            fields = self.catalog.entity(name).fields
            for f in fields.values():
                if f.type is FieldType.LINK and f.groupable and f.target and f.target != name:
                    dimensions.setdefault(f.target, set()).update(fields)
        return dimensions

    def _offer(
        self, route: Route, session: Session, extra: Iterable[str], kept: Sequence[str] = ()
    ) -> list[str]:
        """``kept``: the conversation's tools so far, first and unchanged; the cap bounds what
        this message adds to them."""
        allowed = session.allowed_tools
        chosen: list[str] = list(dict.fromkeys(kept))

        def add(names: Iterable[str]) -> None:
            for name in names:
                if name in allowed and name in self.registry and name not in chosen:
                    chosen.append(name)

        add(SPINE)
        add(extra)
        by_entity: dict[str, list[Tool]] = {}
        for tool in self.registry:
            if tool.entity:
                by_entity.setdefault(tool.entity, []).append(tool)
        dimensions = self._dimensions(kept, route.in_play)
        named_ids = {entity for entity, _ in route.document_ids}
        # A process question ("how does a quotation become an order?") needs no records.
        entities = [e for e in route.entities if e in named_ids or not route.knowledge]
        writes = route.wants_write and not route.knowledge and not session.read_only
        strong = [e for e in entities if e in route.named] or entities[:1]
        if writes:
            entities = strong  # a change acts on the records it names; the tool resolves the rest
        entities = self._without_qualifiers(entities, route)
        for name in entities:
            own = route.named_fields.get(name, set()) - dimensions.get(name, set())
            tools = by_entity.get(name, [])
            actions: tuple[str, ...] = ()
            if name in dimensions and route.refers_back and not own:
                actions = ()  # the records in play, grouped by their link to it
            elif (
                route.records
                or (name in route.named and not route.counts and not route.analysed)
                or (
                    own
                    and (
                        name in dimensions
                        or (
                            self._attributes(name, own, strong)
                            and (route.refers_back or not route.metric_named)
                        )
                    )
                )
            ):
                actions = RECORD_ACTIONS  # records, or a field of their own ("credit limit")
            elif name not in self.measured:
                actions = RECORD_ACTIONS
            if (
                route.counts
                and not route.metric_named
                and name in strong
                and name not in self.counted
            ):
                actions += FIGURE_ACTIONS  # no metric counts these: their own figures
            if (
                name in named_ids
                or (writes and name in strong)
                or "workflow.describe" in route.asked
            ):
                actions += WORKFLOW_ACTIONS
            if actions and any(t.action == LOOKUP for t in tools) and not writes:
                actions = (LOOKUP,)  # a capability made for the question (prices by list)
            add(t.name for t in tools if t.action in actions and t.effect is Effect.READ)
            if writes and name in strong:
                changes = [t for t in tools if t.effect is Effect.WRITE]
                asked = [t for t in changes if _asked_change(t.action, route.changes)]
                if not asked:  # "reject the leave application": a change of its status
                    asked = [t for t in changes if t.action in ("update", "submit")]
                add(t.name for t in asked)
        add(f"report.{r}" for r in route.reports)
        return chosen[: self.cap + len(kept)]


def _changes(words: set[str], haystack: str) -> set[str]:
    """The changes a request asks for (create, update, submit, cancel, delete, approve…), by
    the question kinds' verbs."""
    return {
        change
        for change, verbs in _QUESTIONS.verbs.items()
        if any(
            (_stem(v) in words) if " " not in v else (f" {v} " in f" {haystack} ") for v in verbs
        )
    }


def _asked_change(action: str, changes: set[str]) -> bool:
    """Whether a write tool's action is a change the request asks for (any, when its verbs
    name none: "put together a quote")."""
    return not changes or bool(set(_WRITE_ACTIONS.get(action, (action,))) & changes)
