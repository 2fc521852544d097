"""The suite format (YAML data files in ``evals/suites``): cases, ground-truth specs, gates."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from erp_agent.errors import ConfigError

Who = Literal["admin", "user"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


DocStatus = Literal[0, 1, 2, "any"]


class Query(_Strict):
    """An expected figure stated in the ERP's own terms, computed over its REST API at eval time
    (plain HTTP as the admin or the asking user; never through the agent's catalog or tools).

    ``op``: count | sum (of ``field``) | names (of matching documents) | value (one document's
    ``field``). ``doctype``, ``field``, ``filters`` and ``group_by`` use the ERP's native names
    (``Sales Invoice``, ``grand_total``, ``posting_date``). ``docstatus`` is stated for every
    count, sum and names query: 1 = submitted only, 0 = drafts, 2 = cancelled, a list of them, or
    ``any`` (a doctype that is not submittable, or a probe that means every document). Filter
    values may be date tokens (``{today}``, ``{year_start}``, ``{today-30}`` …) or ``{pick.FIELD}``.
    """

    op: Literal["count", "sum", "names", "value"]
    doctype: str
    field: str | None = None
    docstatus: DocStatus | list[Literal[0, 1, 2]] | None = None
    filters: list[list[Any]] = Field(default_factory=list)  # [field, op, value]
    group_by: list[str] = Field(default_factory=list)  # one figure per group (e.g. currency)
    top: int | None = None  # only the N largest groups
    name: str | None = None  # for value: a document name or "{pick.name}" (the default)
    as_: Who = Field("admin", alias="as")

    @model_validator(mode="after")
    def _meaning_is_stated(self) -> Query:
        if self.op in ("sum", "value") and not self.field:
            raise ValueError(f"a {self.op} query names the native field it reads")
        if self.op != "value" and self.docstatus is None:
            raise ValueError(
                f"a {self.op} query over {self.doctype} states its docstatus "
                "(1 = submitted only; 'any' for a doctype that is not submittable)"
            )
        if any(len(f) != 3 for f in self.filters):
            raise ValueError("each filter is [field, operator, value]")
        return self


class Premise(Query):
    """What a case presumes of the data it is asked of, in the same terms as a figure (run as
    the admin): it holds when the query finds at least ``at_least`` — documents (count), names
    (names), or a sum or value that is not zero. A case whose premise does not hold is skipped
    with the reason: its question cannot be asked of that data (two suppliers named "Athi
    River" that a clarification presumes, on a seed that made none; this quarter's sales to
    chart, on the first day of the quarter)."""

    at_least: int = Field(1, ge=1)


class SqlQuery(_Strict):
    """An expected figure on a bespoke SQL database: a hand-written SELECT run straight on the
    database at eval time (its own SQLAlchemy engine; never the connector, its mapping or the
    planner). Every value of every row is expected in the answer (numbers as figures, text as
    text); a ``forbid`` query's values must not appear. The statement states its own scope
    (``tenant_id = 'SAVANNA' and branch_id = 'Kisumu'``) and meaning (``stage = 'posted'``,
    ``deleted_at is null``). Named parameters ``:year_start``, ``:today``, ``:prev_month_end`` …
    bind the date tokens; ``:pick_FIELD`` binds a column of the picked row."""

    sql: str
    top: int | None = None  # only the first N rows


class TrytonQuery(_Strict):
    """An expected figure on Tryton, stated in Tryton's own terms and computed at eval time
    over its JSON-RPC by a plain client of the eval's own (never the tryton connector, its maps
    or the planner), as the asking user, so Tryton's record rules apply to the truth too.

    ``model`` and ``field`` are Tryton's (``account.invoice``, ``total_amount``); ``domain`` is
    a Tryton domain (``[[type, "=", out]]``) whose values may be date tokens (``{year_start}``);
    ``state`` is stated for every query on a model with states: the native states counted
    (``[posted, paid]``: booked invoices only), or ``any``. ``group_by`` names native fields
    (``company.rec_name``): one figure per group, the ``top`` N largest when given.
    ``context`` is sent with the call: a context model (``account.aged_balance``) reads it."""

    op: Literal["count", "sum"]
    model: str
    field: str | None = None
    domain: list[Any] = Field(default_factory=list)
    state: list[str] | Literal["any"]
    group_by: list[str] = Field(default_factory=list)
    top: int | None = None
    context: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _sum_names_its_field(self) -> TrytonQuery:
        if self.op == "sum" and not self.field:
            raise ValueError("a sum query names the native field it adds up")
        return self


class Pick(_Strict):
    """A document chosen at eval time (over REST, as the admin), so questions name real
    documents without typing them. ``fields`` are native; ``{pick.name}`` is the document name."""

    doctype: str
    filters: list[list[Any]] = Field(default_factory=list)
    order_by: str = "name desc"
    offset: int = 0
    fields: list[str] = Field(default_factory=lambda: ["name"])


class SqlPick(_Strict):
    """A row chosen at eval time by a hand-written SELECT (the first row); its columns fill
    ``{pick.COLUMN}`` in questions and ``:pick_COLUMN`` in statements."""

    sql: str


class SqlEdit(_Strict):
    """A hand-written UPDATE run before asking (the stale-record failure mode) and its
    ``restore`` statement run afterwards; both bind ``:pick_COLUMN`` and ``:now``."""

    sql: str
    restore: str


class Edit(_Strict):
    """Change the picked document's native ``field`` over REST before asking (the stale-record
    failure mode); the original value is restored afterwards."""

    field: str
    add: float


class Expect(_Strict):
    tools: list[str] = Field(default_factory=list)  # any one of these must be called (the plane)
    offered: list[str] = Field(default_factory=list)  # routing: each must be offered
    figures: list[Query | SqlQuery | TrytonQuery] = Field(default_factory=list)  # each must appear
    forbid: list[Query | SqlQuery | TrytonQuery] = Field(default_factory=list)  # none may appear
    text: list[str] = Field(default_factory=list)  # any one phrase must appear (case-insensitive)
    mention: list[str] = Field(default_factory=list)  # every one must appear (after templating)
    no_figures: bool = False  # the answer states no figure at all (out of scope)
    recall_id: str | None = None  # the document name a search tool must return in its top k
    values: list[float] = Field(default_factory=list)  # a calculation's result, stated exactly
    blocks: list[str] = Field(default_factory=list)  # each block type must appear (chart, file…)
    choices: bool = False  # the answer asks back with clickable choices
    # When a figure's truth is empty (or zero) at the eval date, the answer must say one of
    # these instead (default: evals.score.NOTHING, "no records", "none" … or a stated zero).
    empty: list[str] = Field(default_factory=list)


class Turn(_Strict):
    """A later message in the same conversation. ``say`` types a message; ``choose`` answers a
    clarification by clicking the offered option whose label contains it (or, when the last
    answer offered no choices, types it as a short reply)."""

    say: str | None = None
    choose: str | None = None
    expect: Expect = Field(default_factory=Expect)

    @model_validator(mode="after")
    def _one_message(self) -> Turn:
        if (self.say is None) == (self.choose is None):
            raise ValueError("a turn either says something or chooses an option")
        return self


class Case(_Strict):
    id: str
    question: str
    family: str = ""  # the question family (per-family accuracy in the results)
    user: str = "admin@demo.local"
    pick: Pick | SqlPick | None = None
    edit: Edit | SqlEdit | None = None
    given: list[Premise] = Field(default_factory=list)  # else skipped: see Premise
    expect: Expect = Field(default_factory=Expect)
    then: list[Turn] = Field(default_factory=list)  # follow-ups in the same conversation


class Suite(_Strict):
    name: str
    description: str = ""
    mode: Literal["turn", "route"] = "turn"  # route: only the router runs (no model, no ERP data)
    # The system of record the suite is written for: its truth is REST in ERPNext terms
    # (erpnext), hand-written SQL on the bespoke database (sql), or Tryton's JSON-RPC in
    # Tryton's terms (tryton).
    system: Literal["erpnext", "sql", "tryton"] = "erpnext"
    gates: dict[str, float] = Field(default_factory=dict)  # metric → minimum
    recall_k: int = 5
    cases: list[Case]

    @model_validator(mode="before")
    @classmethod
    def _one_case_per_wording(cls, data: Any) -> Any:
        """A case written with ``wordings`` (one meaning, several phrasings) becomes one case
        per wording, numbered ``<id>-1``, ``<id>-2`` …"""
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            return data
        cases: list[Any] = []
        for raw in data["cases"]:
            if not isinstance(raw, dict) or "wordings" not in raw:
                cases.append(raw)
                continue
            if "question" in raw:
                raise ValueError(f"case {raw.get('id')}: give a question or wordings, not both")
            shared = {k: v for k, v in raw.items() if k not in ("wordings", "id")}
            for n, wording in enumerate(raw["wordings"], start=1):
                cases.append({**shared, "id": f"{raw.get('id')}-{n}", "question": wording})
        return {**data, "cases": cases}

    @model_validator(mode="after")
    def _truth_of_its_system(self) -> Suite:
        """A suite's truth speaks its system's language: REST queries for erpnext, SQL for sql."""
        sql = self.system == "sql"
        for case in self.cases:
            expects = [case.expect, *(turn.expect for turn in case.then)]
            parts: list[object] = [q for e in expects for q in (*e.figures, *e.forbid)]
            parts += [p for p in (case.pick, case.edit) if p is not None] + list(case.given)
            for part in parts:
                if (self.system == "tryton") != isinstance(part, TrytonQuery):
                    raise ValueError(
                        f"case {case.id}: a tryton suite states its truth in Tryton's terms "
                        "(model, domain, state) and only a tryton suite does"
                    )
                if self.system == "tryton":
                    continue
                if isinstance(part, SqlQuery | SqlPick | SqlEdit) != sql:
                    raise ValueError(
                        f"case {case.id}: a {self.system} suite states its truth "
                        + ("as hand-written SQL (sql: ...)" if sql else "in the ERP's terms")
                    )
        return self


def _parse(path_name: str, text: str) -> Suite:
    try:
        return Suite.model_validate(yaml.safe_load(text))
    except Exception as exc:  # pydantic and YAML errors both: name the file
        raise ConfigError(f"eval suite {path_name}: {exc}") from exc


System = Literal["erpnext", "sql", "tryton"]


def _root(system: System) -> Any:
    # ERPNext suites sit at the top of suites/; another system's suites in suites/<system>/.
    root = resources.files("erp_agent.evals") / "suites"
    return root if system == "erpnext" else root / system


def builtin_names(system: System = "erpnext") -> list[str]:
    root = _root(system)
    return sorted(p.name.removesuffix(".yaml") for p in root.iterdir() if p.name.endswith(".yaml"))


def load_suites(names: list[str] | None = None, system: System = "erpnext") -> list[Suite]:
    """Built-in suites of ``system`` by name (all when none given), or suite files by path."""
    root = _root(system)
    chosen = names or builtin_names(system)
    suites = []
    for name in chosen:
        path = Path(name)
        if path.suffix in (".yaml", ".yml") and path.is_file():
            suites.append(_parse(str(path), path.read_text(encoding="utf-8")))
            continue
        file = root / f"{name}.yaml"
        if not file.is_file():
            raise ConfigError(
                f"No {system} eval suite {name!r}. Built-in suites: "
                f"{', '.join(builtin_names(system))}; "
                "or give the path of a suite YAML file."
            )
        suites.append(_parse(name, file.read_text(encoding="utf-8")))
    wrong = [s.name for s in suites if s.system != system]
    if wrong:
        raise ConfigError(
            f"eval suite {', '.join(wrong)} is written for another system than {system}: "
            "run it with --system set to the suite's system"
        )
    return suites
