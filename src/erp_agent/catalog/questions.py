"""The question kinds and their vocabulary (``data/questions.yaml``), loaded and checked once.

One vocabulary for one meaning: the offline planner reads a request's kind from it, and tool
routing reads the same cues (which words ask for a change, a figure, an analysis).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, model_validator

from erp_agent.catalog._base import Frozen
from erp_agent.errors import CatalogError

QUESTIONS = Path(__file__).parent / "data" / "questions.yaml"

# A condition as written in the file: a name ("entity", "cue:count", "said:pending approval"),
# or {all: [...]}, {any: [...]}, {not: ...}.
Condition = str | dict[str, Any]


class Cue(Frozen):
    """Words (whole words, a plural allowed) and patterns that say one thing; a cue may include
    other cues."""

    words: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()
    offers: str | None = None  # the analysis tool routing offers beside the data on its words
    means_metric: str | None = None  # the figure its words mean when no other is named

    @model_validator(mode="after")
    def _compiles(self) -> Cue:
        for pattern in self.patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
        return self


class QuestionKind(Frozen):
    name: str
    description: str
    when: Condition
    handler: str
    slots: tuple[str, ...] = ()


class Plan(Frozen):
    handler: str
    when: Condition


class Questions(Frozen):
    cues: dict[str, Cue]
    verbs: dict[str, tuple[str, ...]]
    statuses: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    kinds: tuple[QuestionKind, ...] = Field(min_length=1)
    conditions: dict[str, Condition] = Field(default_factory=dict)
    plans: tuple[Plan, ...] = ()

    @model_validator(mode="after")
    def _names_resolve(self) -> Questions:
        for name, spec in self.cues.items():
            missing = [c for c in spec.includes if c not in self.cues]
            if missing:
                raise ValueError(f"cue {name!r} includes unknown cues {missing}")
        names = [k.name for k in self.kinds]
        if len(set(names)) != len(names):
            raise ValueError("a kind is declared twice")
        for cond in [*(k.when for k in self.kinds), *(p.when for p in self.plans)]:
            for named in _cues_named(cond):
                if named not in self.cues:
                    raise ValueError(f"condition names an unknown cue {named!r}")
        return self

    def kind(self, name: str) -> QuestionKind:
        for kind in self.kinds:
            if kind.name == name:
                return kind
        raise CatalogError(f"no question kind {name!r} in {QUESTIONS.name}")

    def words(self, cue: str) -> frozenset[str]:
        """A cue's words, with those of the cues it includes."""
        spec = self.cues[cue]
        out = set(spec.words)
        for other in spec.includes:
            out |= self.words(other)
        return frozenset(out)

    def patterns(self, cue: str) -> tuple[str, ...]:
        spec = self.cues[cue]
        out = list(spec.patterns)
        for other in spec.includes:
            out += self.patterns(other)
        return tuple(out)

    def offered_on_words(self) -> dict[str, str]:
        """Each word of a cue that offers an analysis tool → that tool (routing)."""
        return {w: c.offers for c in self.cues.values() if c.offers for w in c.words}

    @property
    def write_words(self) -> frozenset[str]:
        """The one-word verbs of a change (routing offers write tools when one is said)."""
        return frozenset(v for verbs in self.verbs.values() for v in verbs if " " not in v)

    @property
    def write_phrases(self) -> frozenset[str]:
        """The verbs of a change said in several words ("draw up", "sign off")."""
        return frozenset(v for verbs in self.verbs.values() for v in verbs if " " in v)


def _cues_named(cond: Condition) -> list[str]:
    if isinstance(cond, str):
        return [cond.removeprefix("cue:")] if cond.startswith("cue:") else []
    out: list[str] = []
    for value in cond.values():
        for item in value if isinstance(value, list) else [value]:
            out += _cues_named(item)
    return out


@functools.cache
def load_questions(path: Path = QUESTIONS) -> Questions:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Questions.model_validate(raw)
    except (OSError, yaml.YAMLError, ValueError) as exc:
        raise CatalogError(f"{path.name}: {exc}") from exc
