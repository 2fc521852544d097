"""Run suites through the real engine with any ChatModel, and score them.

Each case: pick a real document (if the case needs one), apply its edit (stale-record cases),
ask the question as the case's user, compute the expected figures straight from the system of
record (``evals.truth``: the ERP's REST API; ``evals.sql_truth``: hand-written SQL on a bespoke
database; never through the agent's own catalog, connector or tools), score, and restore the
edit.

Cases run concurrently (``concurrency`` at a time), each in its own conversation with its own
sign-in; a case that edits the ERP runs alone, after the others, so no other case reads its
edit. A figure whose truth is empty at the eval date is scored as "the answer says there is
none"; a case whose pick finds no document in a dated period is skipped with its reason
(docs/evals.md: "When the truth is empty on a date")."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from erp_agent.calls.session import Session
from erp_agent.errors import ConfigError
from erp_agent.evals import score
from erp_agent.evals.spec import (
    Case,
    Edit,
    Expect,
    Query,
    SqlEdit,
    SqlPick,
    SqlQuery,
    Suite,
    TrytonQuery,
    Turn,
)
from erp_agent.evals.sql_truth import SqlTruth
from erp_agent.evals.truth import ErpTruth, date_tokens, resolve
from erp_agent.evals.tryton_truth import TrytonTruth
from erp_agent.models.base import ChatModel
from erp_agent.results.blocks import Block, ChoicesBlock
from erp_agent.runtime import Runtime

ADMIN = "admin@demo.local"
Truth = ErpTruth | SqlTruth | TrytonTruth
# Gates named max_<metric> are ceilings; every other gate is a floor.
MAX_PREFIX = "max_"
# Cases in flight at once: enough to overlap the ERP's and the model's waits, few enough that
# one slow ERP is not flooded.
CONCURRENCY = 4
_DATE_TOKEN = re.compile(r"\{([a-z0-9_]+)(?:[+-]\d+)?\}")


@dataclass
class CaseResult:
    suite: str
    case: str
    question: str
    user: str
    passed: bool
    grounded: bool
    checks: dict[str, bool] = field(default_factory=dict)
    answer: str = ""
    tools: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    latency_ms: float = 0.0
    recall: float | None = None
    error: str | None = None
    family: str = ""
    # Checks whose truth was empty (or zero) at the eval date: passed by saying there is none.
    empty: list[str] = field(default_factory=list)
    # Why the case was not asked at the eval date (not scored); None when it was.
    skipped: str | None = None


@dataclass
class SuiteResult:
    name: str
    cases: list[CaseResult]
    metrics: dict[str, float | None]
    gates: dict[str, dict[str, Any]]

    @property
    def ok(self) -> bool:
        return all(g["ok"] for g in self.gates.values())


@dataclass
class EvalRun:
    model: str
    suites: list[SuiteResult]
    today: dt.date | None = None
    seconds: float = 0.0  # wall time of the whole run

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.suites)

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "ok": self.ok,
            "today": self.today.isoformat() if self.today else None,
            "seconds": self.seconds,
            "suites": [
                {"name": s.name, "ok": s.ok, "metrics": s.metrics, "gates": s.gates,
                 "cases": [asdict(c) for c in s.cases]}
                for s in self.suites
            ],
        }  # fmt: skip


class _Sessions:
    """A fresh sign-in per case (a session is the case's own), after one sign-in per user up
    front, so the grants the ERP gave each user are asked once and reused (GrantsCache)."""

    def __init__(self, runtime: Runtime, password: str) -> None:
        self.runtime, self.password = runtime, password

    async def warm(self, users: list[str]) -> None:
        for user in dict.fromkeys(users):
            await self.get(user)

    async def get(self, user: str) -> Session:
        return await self.runtime.sign_in(user, self.password)


async def run_suites(
    runtime: Runtime,
    model: ChatModel,
    suites: list[Suite],
    *,
    password: str,
    today: dt.date | None = None,
    admin: str = ADMIN,
    concurrency: int = CONCURRENCY,
) -> EvalRun:
    started = time.perf_counter()
    today = today or dt.date.today()
    name = runtime.connector.name
    system = name if name in ("sql", "tryton") else "erpnext"
    wrong = [s.name for s in suites if s.system != system]
    if wrong:
        raise ConfigError(
            f"eval suite {', '.join(wrong)} is not written for the {system} system in use"
        )
    sessions = _Sessions(runtime, password)
    truth: Truth = (
        SqlTruth(runtime.settings.erp_url, today)
        if system == "sql"
        else _tryton_truth(runtime, password, today)
        if system == "tryton"
        else ErpTruth(runtime.settings.erp_url, password, today)
    )
    engine = runtime.engine(model, runtime.settings.engine.model_copy(update={"today": today}))
    # The tools take the same business date as the truth ("overdue" = due before it).
    pinned, runtime.gateway.today = runtime.gateway.today, today
    results = []
    try:
        await sessions.warm([c.user for s in suites for c in s.cases])
        results = await _run_all(
            runtime, engine, truth, sessions, suites, admin, max(1, concurrency)
        )
    finally:
        runtime.gateway.today = pinned
        await truth.aclose()
    return EvalRun(model.profile.name, results, today, round(time.perf_counter() - started, 1))


async def _run_all(
    runtime: Runtime, engine: Any, truth: Truth, sessions: _Sessions, suites: list[Suite],
    admin: str, concurrency: int,
) -> list[SuiteResult]:  # fmt: skip
    slots = asyncio.Semaphore(concurrency)

    async def run(suite: Suite, case: Case) -> CaseResult:
        async with slots:
            try:
                if suite.mode == "route":
                    return await _route_case(runtime, sessions, suite, case)
                return await _turn_case(runtime, engine, truth, sessions, suite, case, admin)
            except Exception as exc:  # one broken case must not hide the others' scores
                return CaseResult(suite.name, case.id, case.question, case.user, False, False,
                                  error=f"{type(exc).__name__}: {exc}", family=case.family)  # fmt: skip

    everything = [(suite, case) for suite in suites for case in suite.cases]
    # A case that edits the ERP runs alone, once the others are done: none of them reads it.
    shared = [(n, s, c) for n, (s, c) in enumerate(everything) if c.edit is None]
    alone = [(n, s, c) for n, (s, c) in enumerate(everything) if c.edit is not None]
    done: dict[int, CaseResult] = {}
    answers = await asyncio.gather(*(run(s, c) for _, s, c in shared))
    done |= {n: result for (n, _, _), result in zip(shared, answers, strict=True)}
    for n, suite, case in alone:
        done[n] = await run(suite, case)
    results, n = [], 0
    for suite in suites:
        results.append(_summarise(suite, [done[n + i] for i in range(len(suite.cases))]))
        n += len(suite.cases)
    return results


async def _route_case(
    runtime: Runtime, sessions: _Sessions, suite: Suite, case: Case
) -> CaseResult:
    session = await sessions.get(case.user)
    started = time.perf_counter()
    route = runtime.router.route(case.question, session)
    checks = {f"offered:{n}": n in route.offered for n in case.expect.offered}
    return CaseResult(suite.name, case.id, case.question, case.user, all(checks.values()), True,
                      checks, tools=route.offered, latency_ms=_ms(started))  # fmt: skip


async def _turn_case(
    runtime: Runtime,
    engine: Any,
    truth: Truth,
    sessions: _Sessions,
    suite: Suite,
    case: Case,
    admin: str,
) -> CaseResult:
    session = await sessions.get(case.user)
    unmet = await _unmet_premise(truth, case, admin)
    if unmet is not None:
        return CaseResult(suite.name, case.id, case.question, case.user, False, False,
                          family=case.family, skipped=unmet)  # fmt: skip
    picked = await truth.pick(case.pick, admin) if case.pick else None
    if case.pick and picked is None:
        if _dated(case.pick):  # nothing in that period yet at this date: no question to ask
            return CaseResult(suite.name, case.id, case.question, case.user, False, False,
                              family=case.family, skipped=f"the pick finds no document in its "
                              f"period as of {truth.today.isoformat()}")  # fmt: skip
        return CaseResult(suite.name, case.id, case.question, case.user, False, False,
                          error="the pick found no document in this ERP", family=case.family)  # fmt: skip
    restore: tuple[str, str, str, Any] | None = None
    if isinstance(case.edit, SqlEdit) and isinstance(truth, SqlTruth):
        await truth.edit(case.edit, picked)
    elif isinstance(case.edit, Edit) and case.pick and picked and isinstance(truth, ErpTruth):
        doctype, name, field_name = (
            getattr(case.pick, "doctype", ""),
            str(picked["name"]),
            case.edit.field,
        )
        old = (await truth.document(admin, doctype, name)).get(field_name) or 0
        new = round(float(old) + case.edit.add, 2)
        await truth.set_value(admin, doctype, name, field_name, new)
        restore = (doctype, name, field_name, old)
    try:
        return await _conversation(runtime, engine, truth, session, suite, case, admin, picked)
    finally:
        if isinstance(case.edit, SqlEdit) and isinstance(truth, SqlTruth):
            await truth.restore(case.edit, picked)
        elif restore is not None and isinstance(truth, ErpTruth):
            await truth.set_value(admin, *restore)


async def _conversation(
    runtime: Runtime, engine: Any, truth: Truth, session: Session, suite: Suite, case: Case,
    admin: str, picked: dict[str, Any] | None,
) -> CaseResult:  # fmt: skip
    """The case's question, then each follow-up in the same conversation. Checks of a later
    turn are prefixed ``turnN:``; the case passes when every turn does, and is grounded when
    every answer is."""
    question = _fill(case.question, picked, truth.today)
    steps: list[tuple[str | Turn, Expect]] = [(question, case.expect)]
    steps += [(turn, turn.expect) for turn in case.then]
    checks: dict[str, bool] = {}
    answers: list[str] = []
    tools: list[str] = []
    grounded, tokens, latency, recall = True, 0, 0.0, None
    empty: list[str] = []
    conversation_id: str | None = None
    blocks: list[Block] = []
    seen: list[Any] = []
    for n, (step, expect) in enumerate(steps):
        prefix = f"turn{n + 1}:" if n else ""
        message = step if isinstance(step, str) else _reply(step, blocks, picked, truth.today)
        if message is None:
            checks[f"{prefix}choice"] = False  # the option to click was not offered
            break
        started = time.perf_counter()
        response = await engine.run_turn(session, message, conversation_id=conversation_id)
        latency += _ms(started)
        conversation_id, blocks = response.conversation_id, response.blocks
        stored = await runtime.store.turns(conversation_id)
        sources = score.tool_sources(stored[-1].state.get("messages", []) if stored else [])
        # An answer may quote an earlier turn's result ("how did you get that?"): grounded in
        # any tool result of this conversation so far.
        seen += sources
        answer = score.answer_text(blocks)
        called = [c["name"] for c in response.tools_called]
        found, nothing = await _checks(expect, case.user, truth, admin, picked, answer, called,
                                       blocks)  # fmt: skip
        checks |= {prefix + key: ok for key, ok in found.items()}
        empty += [prefix + key for key in nothing]
        if n == 0 and expect.recall_id and any(t.endswith(".search") for t in called):
            wanted = str(resolve(expect.recall_id, truth.today, picked))
            recall = 1.0 if wanted in score.search_ids(sources, suite.recall_k) else 0.0
        grounded = grounded and score.grounded(score.written_text(blocks), seen, message)
        answers.append(answer)
        tools += called
        tokens += response.usage.prompt_tokens
    return CaseResult(
        suite.name, case.id, question, case.user, all(checks.values()), grounded, checks,
        "\n---\n".join(answers), tools, tokens, round(latency, 1), recall, family=case.family,
        empty=empty,
    )  # fmt: skip


def _fill(template: str, picked: dict[str, Any] | None, today: dt.date | None = None) -> str:
    """A question as asked: ``{pick.FIELD}`` of the picked record; ``{year}``/``{prev_year}``
    the eval date's year and the one before (a wording that names a year keeps meaning this
    year on any date)."""
    values: dict[str, Any] = {"pick": _Attr(picked)} if picked else {}
    if today is not None:
        values |= {"year": today.year, "prev_year": today.year - 1}
    return template.format(**values)


def _reply(
    turn: Turn, blocks: list[Block], picked: dict[str, Any] | None,
    today: dt.date | None = None,
) -> str | None:  # fmt: skip
    """What the user sends: the typed text, or the value of the option they click (None when
    no offered option matches). With no options offered, a choice is typed as a short reply."""
    if turn.say is not None:
        return _fill(turn.say, picked, today)
    wanted = _fill(turn.choose or "", picked, today)
    offered: ChoicesBlock | None = None
    for block in blocks:  # the last question asked
        if block["type"] == "choices":
            offered = block
    if offered is None:
        return wanted
    for option in offered.get("options") or []:
        if wanted.lower() in str(option.get("label", "")).lower():
            return str(option.get("value"))
    return None


class _Attr:
    """``{pick.name}`` (or any picked native field) in a question template."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.__dict__.update(record)


async def _checks(
    exp: Expect, user: str, truth: Truth, admin: str, picked: dict[str, Any] | None,
    answer: str, tools: list[str], blocks: list[Block],
) -> tuple[dict[str, bool], list[str]]:  # fmt: skip
    """The checks of one answer, and which figure checks had an empty (or zero) truth."""
    checks: dict[str, bool] = {}
    nothing: list[str] = []
    if exp.tools:
        checks["plane"] = any(t in tools for t in exp.tools)
    for i, q in enumerate(exp.figures):
        values = await truth.figures(_asker(q, admin, user), q, picked)
        stated = bool(values) and all(score.figure_present(answer, v) for v in values)
        if score.nothing_in(values):
            # Nothing in that period at this date: the honest answer says so (or states 0).
            nothing.append(f"figure{i}")
            stated = stated or score.says_nothing(answer, exp.empty)
        checks[f"figure{i}"] = stated
    for i, q in enumerate(exp.forbid):
        values = await truth.figures(_asker(q, admin, user), q, picked)
        leaked = [v for v in values if (isinstance(v, str) and v in answer) or
                  (not isinstance(v, str) and abs(float(v or 0)) > 12 and score.figure_present(answer, v))]  # fmt: skip
        checks[f"forbid{i}"] = not leaked
    if exp.text:
        checks["text"] = any(t.lower() in answer.lower() for t in exp.text)
    for i, m in enumerate(exp.mention):
        value = str(resolve(m, truth.today, picked))
        checks[f"mention{i}"] = value.lower() in answer.lower()
    if exp.no_figures:
        checks["no_figures"] = not score.states_figures(answer)
    for i, expected in enumerate(exp.values):
        checks[f"value{i}"] = score.figure_present(answer, expected)
    shown = {b["type"] for b in blocks}
    for kind in exp.blocks:
        checks[f"block:{kind}"] = kind in shown
    if exp.choices:
        checks["choices"] = "choices" in shown
    return checks, nothing


async def _unmet_premise(truth: Truth, case: Case, admin: str) -> str | None:
    """Why the case cannot be asked of this data (its first premise that does not hold)."""
    for premise in case.given:
        values = await truth.figures(admin, premise, None)
        if premise.op == "count":
            found = int(values[0] or 0) if values else 0
        elif premise.op == "names":
            found = len(values)
        else:
            found = 0 if score.nothing_in(values) else premise.at_least
        if found < premise.at_least:
            where = " and ".join(f"{f} {op} {v}" for f, op, v in premise.filters) or "any"
            return (f"its premise does not hold as of {truth.today.isoformat()}: "
                    f"{premise.op} of {premise.doctype} where {where} is {found}, "
                    f"not at least {premise.at_least}")  # fmt: skip
    return None


def _dated(pick: Any) -> bool:
    """Whether a pick chooses within a period (a date token in its filters or statement)."""
    if isinstance(pick, SqlPick):
        return any(f":{name}" in pick.sql for name in date_tokens(dt.date(2000, 1, 1)))
    values = [v for f in getattr(pick, "filters", []) for v in _flat(f[2])]
    return any(isinstance(v, str) and _DATE_TOKEN.fullmatch(v) for v in values)


def _flat(value: Any) -> list[Any]:
    return [v for item in value for v in _flat(item)] if isinstance(value, list) else [value]


def _tryton_truth(runtime: Runtime, password: str, today: dt.date) -> TrytonTruth:
    # The same trytond and database the connector talks to, through a client of the eval's own.
    connector = runtime.connector
    url = str(getattr(connector, "base_url", runtime.settings.erp_url))
    database = str(getattr(connector, "database", runtime.settings.tryton_database or ""))
    return TrytonTruth(url, database, password, today)


def _asker(q: Query | SqlQuery | TrytonQuery, admin: str, user: str) -> str:
    # An SQL statement states its own scope; a REST query runs as the admin or the asker.
    return admin if isinstance(q, Query) and q.as_ == "admin" else user


def _summarise(suite: Suite, every: list[CaseResult]) -> SuiteResult:
    cases = [c for c in every if c.skipped is None]  # a skipped case is not scored
    n = len(cases) or 1
    latencies = sorted(c.latency_ms for c in cases)
    recalls = [c.recall for c in cases if c.recall is not None]
    metrics: dict[str, float | None] = {
        "accuracy": round(sum(c.passed for c in cases) / n, 4),
        "groundedness": round(sum(c.grounded for c in cases) / n, 4),
        "recall_at_k": round(statistics.mean(recalls), 4) if recalls else None,
        "prompt_tokens": round(statistics.mean(c.prompt_tokens for c in cases), 1) if cases else 0.0,
        "latency_ms_p50": round(statistics.median(latencies), 1) if latencies else 0.0,
        "latency_ms_p95": round(latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 1) if latencies else 0.0,
        "cases": float(len(cases)),
        "skipped": float(len(every) - len(cases)),
    }  # fmt: skip
    for family in sorted({c.family for c in cases if c.family}):
        members = [c for c in cases if c.family == family]
        metrics[f"accuracy[{family}]"] = round(sum(c.passed for c in members) / len(members), 4)
        metrics[f"groundedness[{family}]"] = round(
            sum(c.grounded for c in members) / len(members), 4
        )
    gates: dict[str, dict[str, Any]] = {}
    for name, bound in suite.gates.items():
        ceiling = name.startswith(MAX_PREFIX)
        value = metrics.get(name.removeprefix(MAX_PREFIX) if ceiling else name)
        ok = value is not None and (value <= bound if ceiling else value >= bound)
        gates[name] = {"bound": bound, "value": value, "ok": ok}
    return SuiteResult(suite.name, every, metrics, gates)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
