"""The Tool model and the registry the gateway looks tools up in."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict

from erp_agent.errors import ConfigError
from erp_agent.store.records import FieldChange

if TYPE_CHECKING:
    from erp_agent.calls.session import Session
    from erp_agent.catalog import Catalog
    from erp_agent.connectors.base import Connector

Args = dict[str, Any]
BASE_MODIFIED = "base_modified"  # payload key: the record's version the user was shown


class Effect(StrEnum):
    READ = "read"
    WRITE = "write"


class Shape(StrEnum):
    """How a tool's result is shaped for the model and the user, declared on the tool so that
    every channel (the loop, MCP, the OpenAI-compatible API, the relay) shapes it the same way
    (``erp_agent.results.shaping``)."""

    ROWS = "rows"  # stored; the model sees all of a small one, a summary and a page of a big one
    WHOLE = "whole"  # an analysis is a summary already: the model sees it whole
    METRIC = "metric"  # per-currency totals with one page of rows; never re-added here
    REPORT = "report"  # the ERP's report: its summary quotes the ERP's own total row
    DISPLAY = "display"  # the result is a block shown to the user (table, chart, file)
    TOOL_SEARCH = "tool_search"  # the result names tools that become available to the caller
    PASSAGES = "passages"  # knowledge passages: shown to the user as citations


class Definition(TypedDict):
    """How a figure-bearing result was computed, in words: every figure says what it counted.

    Made by the tools and the metric layer (``tools/factories/documents.definition``, a
    report's, ``metrics.query``'s and its drill-downs'); carried as it is by the display blocks
    (``results.blocks``) and shown under a table or chart on every channel."""

    text: str  # what was computed, over which records
    filters: NotRequired[list[str]]  # each condition, in words
    period: NotRequired[str | None]  # the period in words (with the one compared with)
    record_count: int | None  # the records counted (None where the ERP does not say)
    source: str  # where the figures came from (ERP aggregate, report, exact read …)
    metric: NotRequired[str]  # the catalog metric, for ``metrics.query`` and its drills
    rows: NotRequired[int]  # the rows of the result


class ResultAccess(Protocol):
    """Stored tool results, readable by their owner only (display and export tools use this)."""

    async def fetch(self, result_id: str, user: str) -> Any | None: ...


@dataclass
class ToolContext:
    """What a handler may use. ``session.credential`` is the user's: every ERP call is theirs."""

    session: Session
    connector: Connector
    catalog: Catalog
    results: ResultAccess | None = None
    today: dt.date | None = None  # the business date when pinned (demos, evals)
    # A confirm's write marker (set by the gateway just before a create is sent): the create
    # carries it, so a create whose answer is lost can be found (gateway/reconcile.py).
    marker: str | None = None


@dataclass
class Change:
    """What a write tool will do, prepared (reading as the user) before the user confirms.

    ``payload`` is exactly what ``execute`` receives after the confirm; ``summary`` is one line
    for the user; ``diff`` lists field/before/after for an update; ``document`` is the whole
    record for a create (or the record acted on, as read).
    """

    payload: Args
    summary: str
    diff: list[FieldChange] = field(default_factory=list)
    document: dict[str, Any] | None = None
    # The record's ``modified`` as read (writes to an existing record). ``payload`` carries it
    # too, under BASE_MODIFIED, so the payload hash binds the confirm to this version.
    base_modified: str | None = None


ReadHandler = Callable[[ToolContext, Args], Awaitable[Any]]
PrepareHandler = Callable[[ToolContext, Args], Awaitable[Change]]
ExecuteHandler = Callable[[ToolContext, Args], Awaitable[Any]]
# The restrictions of a user's reads (their ERP's User Permissions): each restricted kind of
# record ("Company", "Branch") with the values they are limited to.
Restrictions = Mapping[str, tuple[str, ...]]
# The parameters as one user is shown them (the metrics they may read, their companies): a
# function of the tool's parameters, the session and its restrictions only, so a conversation's
# tools stay the same bytes from request to request. The gateway still checks calls against
# ``parameters``.
Specialise = Callable[[dict[str, Any], "Session", Restrictions], dict[str, Any]]
# Keywords only the gateway's check needs (it validates every call against the full schema);
# a model reads the rest: names, types, enums, required fields, bounds of numbers, prose.
_CHECK_ONLY = frozenset(
    ["minLength", "maxLength", "pattern", "uniqueItems", "minItems", "title", "examples"]
)


@dataclass(frozen=True)
class Requirement:
    """The ERP right a tool depends on: the tool is offered only if the ERP grants it."""

    entity: str | None = None  # a catalog entity, checked with connector.access
    right: str = "read"  # read/create/update/submit/cancel/delete
    report: str | None = None  # a catalog report, checked with connector.report_access


@dataclass(frozen=True)
class Tool:
    """A tool named ``<entity|module>.<action>``.

    A read tool has ``run``; a write tool has ``prepare`` (builds the exact change, reading as
    the user) and ``execute`` (performs exactly the confirmed payload). Handlers never check
    permissions or effects: the gateway does.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    effect: Effect
    module: str
    run: ReadHandler | None = None
    prepare: PrepareHandler | None = None
    execute: ExecuteHandler | None = None
    prompt_rules: str = ""
    requires: tuple[Requirement, ...] = ()
    entity: str | None = None
    action: str = ""
    shape: Shape = Shape.ROWS
    specialise: Specialise | None = None

    def __post_init__(self) -> None:
        if "." not in self.name:
            raise ConfigError(f"tool name {self.name!r} must be '<entity-or-module>.<action>'")
        if self.effect is Effect.READ and (self.run is None or self.prepare or self.execute):
            raise ConfigError(f"read tool {self.name} needs `run` and no prepare/execute")
        if self.effect is Effect.WRITE and (
            self.prepare is None or self.execute is None or self.run
        ):
            raise ConfigError(f"write tool {self.name} needs `prepare` and `execute`, not `run`")
        if self.parameters.get("type") != "object":
            raise ConfigError(f"tool {self.name}: parameters must be a JSON schema of type object")

    @functools.cached_property
    def digest(self) -> str:
        """A hash of the definition as sent, computed once (the prompt's prefix hash joins
        them, every round of every turn)."""
        return hashlib.sha256(json.dumps(self.schema()).encode()).hexdigest()

    @functools.cached_property
    def _view(self) -> dict[str, Any]:
        view: dict[str, Any] = model_view(self.parameters)
        return view

    def schema(
        self, session: Session | None = None, restrictions: Restrictions | None = None
    ) -> dict[str, Any]:
        """The definition sent to a model (OpenAI function-tool shape): the description with
        the tool's rules (sent only with the tool), the parameters as ``session``'s user sees
        them, without what only the gateway's check reads."""
        parameters = self._view
        if session is not None and self.specialise is not None:
            parameters = model_view(self.specialise(self.parameters, session, restrictions or {}))
        description = " ".join(p for p in (self.description, self.prompt_rules) if p)
        return {
            "type": "function",
            "function": {"name": self.name, "description": description, "parameters": parameters},
        }


def model_view(schema: Any) -> Any:
    """A JSON schema without the keywords only a validator needs (a copy)."""
    if isinstance(schema, list):
        return [model_view(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _CHECK_ONLY or (key == "additionalProperties" and value is False):
            continue
        if key in ("properties", "$defs"):
            out[key] = {name: model_view(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            out[key] = model_view(value)
        else:
            out[key] = value
    return out


class ToolRegistry:
    """All tools, by name. Modules register at start; lookups are by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ConfigError(f"two tools are named {tool.name!r}")
        self._tools[tool.name] = tool

    def extend(self, tools: Iterable[Tool]) -> None:
        for tool in tools:
            self.add(tool)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def by_module(self) -> Mapping[str, list[Tool]]:
        grouped: dict[str, list[Tool]] = {}
        for tool in self._tools.values():
            grouped.setdefault(tool.module, []).append(tool)
        return grouped
