"""Deterministic tool routing: the request's words → business modules → the tools to offer.

Cheap and predictable: no model call. Role filter first (the session's allowed tools), then the
catalog's keywords pick modules (widened to related modules), then only those modules' read
tools — writes only when the request asks to change something — plus an always-offered spine,
under a hard cap. ``tools.search`` lets the model enable any other permitted tool.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.catalog.fields import FieldType
from erp_agent.gateway.session import Session
from erp_agent.tools.base import Effect, Tool, ToolRegistry

SPINE = (
    "tools.search",
    "metrics.catalog",
    "calculator.evaluate",
    "display.table",
    "display.chart",
    "display.cards",
    "display.choices",
    "knowledge.search",
    "records.search",
    "workflow.describe",
    "workflow.pending",
    # Small, and what a follow-up about the last result asks for ("export that", "the next
    # ones"): offered from the first turn, so a follow-up need not change the tools array.
    "results.export",
    "results.page",
)
WRITE_WORDS = frozenset(
    [
        "create",
        "make",
        "add",
        "new",
        "raise",
        "draft",
        "prepare",
        "update",
        "change",
        "edit",
        "set",
        "mark",
        "approve",
        "reject",
        "submit",
        "cancel",
        "delete",
        "remove",
        "record",
        "book",
        "post",
        "amend",
        "assign",
        "convert",
    ]
)
# Words that ask for an analysis rather than records: offer the analysis tool beside the data.
ANALYSIS_WORDS = {
    "trend": "analytics.trend", "trending": "analytics.trend", "growth": "analytics.trend",
    "compare": "analytics.comparison", "comparison": "analytics.comparison", "versus": "analytics.comparison",
    "ageing": "analytics.ageing", "aging": "analytics.ageing", "overdue": "analytics.ageing",
    "dependent": "analytics.concentration", "concentration": "analytics.concentration",
    "top": "analytics.concentration", "pareto": "analytics.concentration",
    "forecast": "analytics.forecast", "projected": "analytics.forecast", "projection": "analytics.forecast",
    "predict": "analytics.forecast", "unusual": "analytics.anomalies", "anomaly": "analytics.anomalies",
    "anomalies": "analytics.anomalies", "outlier": "analytics.anomalies", "suspicious": "analytics.anomalies",
}  # fmt: skip
# Words that ask for a figure: offer metrics.query, the one exact tool for business figures.
FIGURE_WORDS = frozenset(
    [
        "total", "sum", "how", "many", "much", "count", "number", "average", "top", "biggest",
        "largest", "highest", "lowest", "by", "per", "trend", "compare", "versus", "vs", "figure",
        "figures", "value", "amount", "kpi", "metric", "metrics", "breakdown", "share",
    ]
)  # fmt: skip
# Words that only ask for an order ("the top 5"): a question of its own is offered the
# concentration analysis too (what the top few make of the whole), but a follow-up ranks the
# result it has with the conversation's aggregate, so they add no analysis there.
RANKING_WORDS = frozenset(["top"])
METRICS_QUERY = "metrics.query"
# A follow-up naming what the conversation's records link to ("which customers are they
# for?") is about those records broken down by it: their own aggregate groups by the link, so
# the linked entity adds no tools when the message refers back to them. A field of its own that
# those records lack ("what credit limit do those customers have?"), or no reference back
# ("show me the customers"), adds the tools that read its records (not its counts and sums).
DIMENSION_ACTIONS = ("list", "get")
BACK_WORDS = frozenset(["they", "them", "those", "these", "their"])
DEFAULT_CAP = 26  # the spine (13) and up to 13 tools the request picks
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


class Router:
    def __init__(
        self, catalog: Catalog, registry: ToolRegistry, connector_name: str, cap: int = DEFAULT_CAP
    ) -> None:
        self.catalog = catalog
        self.registry = registry
        self.connector_name = connector_name
        self.cap = cap

    def route(self, text: str, session: Session, extra: Iterable[str] = ()) -> Route:
        haystack = normalise(text)
        words = {_stem(w) for w in haystack.split()}
        route = Route(wants_write=bool(words & WRITE_WORDS), refers_back=bool(words & BACK_WORDS))
        for entity, doc_id in self.catalog.find_document_ids(self.connector_name, text):
            route.document_ids.append((entity.name, doc_id))
            route.entities.append(entity.name)
        for entity in self.catalog.entities.values():
            terms = (
                entity.name.replace("_", " "),
                entity.label,
                entity.plural,
                *entity.keywords,
                *entity.synonyms,
            )
            if entity.name not in route.entities and any(
                _contains(haystack, words, t) for t in terms
            ):
                route.entities.append(entity.name)
        for name in route.entities:
            route.named_fields[name] = {
                f.name
                for f in self.catalog.entity(name).fields.values()
                if not f.title
                and any(_contains(haystack, words, t) for t in (f.label, f.name.replace("_", " ")))
            }
        for report in self.catalog.reports.values():
            if any(_contains(haystack, words, t) for t in (report.label, *report.keywords)):
                route.reports.append(report.name)
        modules: list[str] = []
        for module in self.catalog.modules.values():
            if any(_contains(haystack, words, t) for t in module.keywords):
                modules.append(module.name)
        for name in route.entities:
            modules.extend(self.catalog.entity(name).modules[:1])
        for name in route.reports:
            modules.append(self.catalog.report(name).module)
        route.modules = list(dict.fromkeys(self.catalog.with_related(dict.fromkeys(modules))))
        analyses = [tool for word, tool in ANALYSIS_WORDS.items() if word in words]
        route.ranking = [
            tool
            for tool in dict.fromkeys(analyses)
            if all(
                w in RANKING_WORDS for w, t in ANALYSIS_WORDS.items() if t == tool and w in words
            )
        ]
        if self._asks_for_a_figure(haystack, words):
            analyses.insert(0, METRICS_QUERY)
        route.asked = [*analyses, *extra]
        route.offered = self._offer(route, session, route.asked)
        return route

    def follow(self, route: Route, before: Mapping[str, Any], session: Session) -> Route:
        """``route`` for a follow-up turn, routed against the conversation's tools so far: they
        come first, in their order, and this message only appends what they do not already
        cover (a fallback such as ``analytics.aggregate`` is not added when the conversation
        has an aggregate). The tools array then stays byte-identical from turn to turn, or
        grows at its end, so a server's prefix cache (vLLM, llama.cpp) and a provider's prompt
        cache reuse it: chat templates render the tools before the messages, and any change
        inside the array would invalidate the whole history after it. Write tools carry over
        only to a request to change something."""
        kept = [
            name
            for name in before.get("offered", [])
            if name in session.allowed_tools
            and (tool := self.registry.get(name)) is not None
            and (route.wants_write or tool.effect is not Effect.WRITE)
        ]
        if route.wants_write and not route.entities:
            # "approve the first one", "submit it": a change that names nothing acts on what
            # the conversation was about, so its write tools are offered.
            route.entities = [e for e in before.get("entities", []) if e in self.catalog.entities]
        if any(n == METRICS_QUERY or n.endswith(".aggregate") for n in kept):
            # "show the top 5 as a chart": the conversation's aggregate ranks its own result.
            route.asked = [n for n in route.asked if n not in route.ranking]
        # This message's own modules pick its tools; the conversation's modules keep its prompt.
        route.offered = self._offer(route, session, route.asked, kept)
        route.modules = list(dict.fromkeys([*before.get("modules", []), *route.modules]))
        return route

    def _dimensions(self, kept: Sequence[str]) -> dict[str, set[str]]:
        """Entities the conversation's records link to by a field they group by (the customer
        of the sales orders already in play), each with the fields of those records."""
        entities = {t.entity for n in kept if (t := self.registry.get(n)) is not None and t.entity}
        dimensions: dict[str, set[str]] = {}
        for name in entities:
            if name not in self.catalog.entities:
                continue
            fields = self.catalog.entity(name).fields
            for f in fields.values():
                if f.type is FieldType.LINK and f.groupable and f.target and f.target != name:
                    dimensions.setdefault(f.target, set()).update(fields)
        return dimensions

    def _asks_for_a_figure(self, haystack: str, words: set[str]) -> bool:
        """Figure words, or the name of a metric ("revenue", "overdue", "headcount")."""
        if words & FIGURE_WORDS:
            return True
        return any(
            _contains(haystack, words, term)
            for metric in self.catalog.metrics.values()
            for term in (metric.name.replace("_", " "), metric.label, *metric.synonyms)
        )

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

        add(n for n in SPINE)
        add(extra)
        by_entity: dict[str, list[Tool]] = {}
        for tool in self.registry:
            if tool.entity:
                by_entity.setdefault(tool.entity, []).append(tool)
        dimensions = self._dimensions(kept)
        # Directly named entities and reports first; the rest of a module only when nothing
        # more specific matched (every extra schema costs hundreds of prompt tokens).
        for name in route.entities:
            own = route.named_fields.get(name, set()) - dimensions.get(name, set())
            if name in dimensions and route.refers_back and not own:
                reads: Iterable[Tool] = ()  # the records in play, grouped by their link to it
            elif name in dimensions:
                reads = (t for t in by_entity.get(name, []) if t.action in DIMENSION_ACTIONS)
            else:
                reads = by_entity.get(name, [])
            add(t.name for t in reads if t.effect is Effect.READ)
            if route.wants_write and not session.read_only:
                add(t.name for t in by_entity.get(name, []) if t.effect is Effect.WRITE)
        add(f"report.{r}" for r in route.reports)
        if not any(n.endswith(".aggregate") for n in chosen):
            add(["analytics.aggregate"])  # totals over any entity when none was named
        if not route.entities and not route.reports:
            for module in route.modules:
                add(f"report.{r.name}" for r in self.catalog.reports_for_module(module))
            for module in route.modules:
                for entity in self.catalog.entities_for_module(module):
                    add(
                        t.name
                        for t in by_entity.get(entity.name, [])
                        if t.action in ("list", "aggregate")
                    )
        return chosen[: self.cap + len(kept)]
