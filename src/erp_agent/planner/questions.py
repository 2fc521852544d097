"""A request's kind, read from the question kinds declared in ``catalog/data/questions.yaml``.

The file holds the cues (words and patterns) and, in precedence order, each kind's condition
over the reading; this module evaluates those conditions. The checks a condition may name are
the ``CHECKS`` below: facts of the reading (an entity was named, a document id, a grouping …),
never words of example sentences.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from erp_agent.catalog import Catalog
from erp_agent.catalog.questions import Condition, load_questions
from erp_agent.planner.reading import Request
from erp_agent.planner.terms import explicit, has_term, norm


@functools.cache
def _compiled(name: str) -> re.Pattern[str]:
    questions = load_questions()
    words = sorted(questions.words(name), key=len, reverse=True)
    parts = [f"(?:{p})" for p in questions.patterns(name)]
    if words:
        alternatives = "|".join(_phrase(w) for w in words)
        parts.append(rf"\b(?:{alternatives})(?:s|es)?\b")
    return re.compile("|".join(parts) or r"(?!)")


def cue(name: str) -> re.Pattern[str]:
    """The compiled cue: its patterns and its words (a plural allowed) in one expression."""
    if name not in load_questions().cues:
        raise KeyError(f"questions.yaml declares no cue {name!r}")
    return _compiled(name)


def says(name: str, text: str) -> bool:
    return cue(name).search(text.lower()) is not None


@functools.cache
def verb_patterns() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """(verb, the change it asks for, the request opening with it), longest verbs first."""
    polite = "|".join(load_questions().patterns("polite"))
    verbs = [(v, change) for change, vs in load_questions().verbs.items() for v in vs]
    verbs.sort(key=lambda t: -len(t[0]))
    # "Take a look at…", "make me a list": a verb that asks for no change.
    glance = (
        r"(?!\s+(?:a\s+(?:look|peek|glance)|me\s+(?:through|to|a\s+list)))"
        # "Need a list of…", "want a breakdown": words asking to be shown, not a document.
        r"(?!\s+(?:(?:a|an|me\s+a|us\s+a)\s+)?(?:list|report|summary|breakdown|total|figure|"
        r"number|count|chart|graph|table|overview|update|idea|sense|quick)\b)"
    )
    return tuple(
        # "Take-home pay", "set-up costs": a verb joined to the next word names, never asks.
        (v, change, re.compile(rf"\s*(?:{polite})?{_phrase(v)}\b(?!-){glance}"))
        for v, change in verbs
    )


def _phrase(words: str) -> str:
    """A phrase as a pattern: its words with any spacing between them."""
    return r"\s+".join(re.escape(w) for w in words.split())


def opening_verb(low: str) -> tuple[str, str] | None:
    """The verb a request for a change opens with, and the change it asks for; in a message
    that asks nothing, also a later clause's ("Kevin called in sick, put in 2 days' leave")."""
    clauses = [low] + ([] if "?" in low else re.split(r"[,;.]\s+|\s+[-–—]\s+", low)[1:])
    for clause in clauses:
        for verb, change, pattern in verb_patterns():
            if pattern.match(clause):
                return verb, change
    return None


def meant_metrics(text: str) -> list[str]:
    """The figures cues mean when no figure is named ("how did Kisumu do" → revenue)."""
    low = text.lower()
    return [
        spec.means_metric
        for name, spec in load_questions().cues.items()
        if spec.means_metric and cue(name).search(low)
    ]


@dataclass
class Facts:
    """What a kind's condition is checked against: the reading and its words."""

    req: Request
    low: str
    reports: Mapping[str, int]
    catalog: Catalog

    @functools.cached_property
    def cued(self) -> str:
        """The words cues are read in: the document's own name of several words stands for
        the records, so "sales" in "show me sales invoices" is no figure of sales."""
        entity = self.req.entity
        if entity is None:
            return self.low
        names = {n.lower() for n in (entity.label, entity.plural, *entity.synonyms) if " " in n}
        text = self.low
        for name in sorted(names, key=len, reverse=True):
            text = re.sub(rf"\b{re.escape(name)}(?:e?s)?\b", "records", text)
        return text


def _named_transaction(f: Facts) -> bool:
    e = f.req.entity
    return e is not None and e.kind.value == "transaction" and explicit(e, norm(f.low))


def _many_records(f: Facts) -> bool:
    """The records named in the plural ("the payments we received"), not one record."""
    e = f.req.entity
    if e is None:
        return False
    haystack = norm(f.low)
    singular = {norm(t).strip() for t in (e.label, *e.keywords, *e.synonyms)}
    return any(f" {t}s " in haystack or f" {t}es " in haystack
               for t in singular if t and not t.endswith("s"))  # fmt: skip


def _report_by_label(f: Facts) -> bool:
    haystack = norm(f.low)
    return any(has_term(haystack, f.catalog.reports[n].label) for n in f.reports)


CHECKS: dict[str, Callable[[Facts], bool]] = {
    "always": lambda f: True,
    "verb": lambda f: f.req.verb is not None,
    "entity": lambda f: f.req.entity is not None,
    "doc_ids": lambda f: bool(f.req.doc_ids),
    "names": lambda f: bool(f.req.names),
    "group": lambda f: bool(f.req.group),
    "top": lambda f: bool(f.req.top),
    "amount_field": lambda f: f.req.entity is not None and bool(f.req.entity.amount_field),
    # Records something is owed on (invoices), or the parties who owe or are owed.
    "owed_entity": lambda f: (
        f.req.entity is not None
        and ("outstanding" in f.req.entity.fields or f.req.entity.name in ("customer", "supplier"))
    ),
    "reports": lambda f: bool(f.reports),
    # The reading is of one of the ERP's reports (the kind chosen, in the plans).
    "report_kind": lambda f: f.req.report is not None and str(f.req.kind) == "report",
    "report_by_label": _report_by_label,
    "many_records": _many_records,
    "named_transaction": _named_transaction,
    "grouped_transaction": lambda f: (
        f.req.entity is not None and f.req.entity.kind.value == "transaction" and bool(f.req.group)
    ),
    # A document of an entity with an approval workflow.
    "workflow_entity": lambda f: any(
        "workflow_state" in e.fields
        for e in ([e for e, _ in f.req.doc_ids] or ([f.req.entity] if f.req.entity else []))
    ),
}


def holds(cond: Condition, facts: Facts, extra: Mapping[str, Callable[[Facts], bool]] = {}) -> bool:
    """Whether a condition of the file holds for this reading."""
    if isinstance(cond, str):
        if cond.startswith("cue:"):
            return cue(cond[4:]).search(facts.cued) is not None
        if cond.startswith("said:"):
            return cond[5:] in facts.low
        derived = load_questions().conditions.get(cond)
        if derived is not None:
            return holds(derived, facts, extra)
        check = extra.get(cond) or CHECKS.get(cond)
        if check is None:
            raise KeyError(f"questions.yaml names an unknown check {cond!r}")
        return check(facts)
    if "all" in cond:
        return all(holds(c, facts, extra) for c in _items(cond["all"]))
    if "any" in cond:
        return any(holds(c, facts, extra) for c in _items(cond["any"]))
    if "not" in cond:
        return not holds(cond["not"], facts, extra)
    raise KeyError(f"questions.yaml: a condition is all/any/not, not {sorted(cond)}")


def _items(value: Any) -> list[Condition]:
    return list(value) if isinstance(value, list) else [value]


def classify(facts: Facts) -> str:
    """The first kind, in the file's order, whose condition holds."""
    for kind in load_questions().kinds:
        if holds(kind.when, facts):
            return kind.name
    return load_questions().kinds[-1].name
