"""Run suites through the real engine with any ChatModel, and score them.

Each case: pick a real document (if the case needs one), apply its edit (stale-record cases),
ask the question as the case's user, compute the expected figures straight from the ERP's REST
API (``evals.truth``: never through the agent's own catalog, connector or tools), score, and
restore the edit."""

from __future__ import annotations

import datetime as dt
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from erp_agent.engine.turn import EngineSettings
from erp_agent.evals import score
from erp_agent.evals.spec import Case, Suite
from erp_agent.evals.truth import ErpTruth, resolve
from erp_agent.gateway.session import Session
from erp_agent.gateway.signin import sign_in
from erp_agent.models.base import ChatModel
from erp_agent.runtime import Runtime

ADMIN = "admin@demo.local"
# Gates named max_<metric> are ceilings; every other gate is a floor.
MAX_PREFIX = "max_"


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

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.suites)

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "ok": self.ok,
            "suites": [
                {"name": s.name, "ok": s.ok, "metrics": s.metrics, "gates": s.gates,
                 "cases": [asdict(c) for c in s.cases]}
                for s in self.suites
            ],
        }  # fmt: skip


class _Sessions:
    def __init__(self, runtime: Runtime, password: str) -> None:
        self.runtime, self.password = runtime, password
        self.cache: dict[str, Session] = {}

    async def get(self, user: str) -> Session:
        if user not in self.cache:
            rt = self.runtime
            self.cache[user] = await sign_in(
                rt.connector, rt.registry, rt.policy, user, self.password
            )
        return self.cache[user]


async def run_suites(
    runtime: Runtime,
    model: ChatModel,
    suites: list[Suite],
    *,
    password: str,
    today: dt.date | None = None,
    admin: str = ADMIN,
) -> EvalRun:
    today = today or dt.date.today()
    sessions = _Sessions(runtime, password)
    truth = ErpTruth(runtime.settings.erp_url, password, today)
    engine = runtime.engine(model, EngineSettings(today=today))
    results = []
    try:
        results = await _run_all(runtime, engine, truth, sessions, suites, admin)
    finally:
        await truth.aclose()
    return EvalRun(model.profile.name, results)


async def _run_all(
    runtime: Runtime, engine: Any, truth: ErpTruth, sessions: _Sessions, suites: list[Suite],
    admin: str,
) -> list[SuiteResult]:  # fmt: skip
    results = []
    for suite in suites:
        cases = []
        for case in suite.cases:
            try:
                if suite.mode == "route":
                    cases.append(await _route_case(runtime, sessions, suite, case))
                else:
                    cases.append(
                        await _turn_case(runtime, engine, truth, sessions, suite, case, admin)
                    )
            except Exception as exc:  # one broken case must not hide the others' scores
                cases.append(CaseResult(suite.name, case.id, case.question, case.user, False, False,
                                        error=f"{type(exc).__name__}: {exc}"))  # fmt: skip
        results.append(_summarise(suite, cases))
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
    truth: ErpTruth,
    sessions: _Sessions,
    suite: Suite,
    case: Case,
    admin: str,
) -> CaseResult:
    session = await sessions.get(case.user)
    picked = await truth.pick(case.pick, admin) if case.pick else None
    if case.pick and picked is None:
        return CaseResult(suite.name, case.id, case.question, case.user, False, False,
                          error="the pick found no document in this ERP")  # fmt: skip
    restore: tuple[str, str, str, Any] | None = None
    if case.edit and case.pick and picked:
        doctype, name, field_name = case.pick.doctype, str(picked["name"]), case.edit.field
        old = (await truth.document(admin, doctype, name)).get(field_name) or 0
        new = round(float(old) + case.edit.add, 2)
        await truth.set_value(admin, doctype, name, field_name, new)
        restore = (doctype, name, field_name, old)
    question = case.question.format(**({"pick": _Attr(picked)} if picked else {}))
    try:
        started = time.perf_counter()
        response = await engine.run_turn(session, question)
        latency = _ms(started)
        turns = await runtime.store.turns(response.conversation_id)
        sources = score.tool_sources(turns[-1].state.get("messages", []) if turns else [])
        answer = score.plain(
            "\n".join(b.get("markdown", "") for b in response.blocks if b.get("type") == "text")
        )
        checks = await _checks(case, suite, truth, admin, picked, answer,
                               [c["name"] for c in response.tools_called])  # fmt: skip
        recall = None
        if case.expect.recall_id and any(
            c["name"].endswith(".search") for c in response.tools_called
        ):
            wanted = str(resolve(case.expect.recall_id, truth.today, picked))
            recall = 1.0 if wanted in score.search_ids(sources, suite.recall_k) else 0.0
        is_grounded = score.grounded(answer, sources, question)
        return CaseResult(
            suite.name, case.id, question, case.user, all(checks.values()), is_grounded, checks,
            answer, [c["name"] for c in response.tools_called], response.usage.prompt_tokens,
            latency, recall,
        )  # fmt: skip
    finally:
        if restore is not None:
            await truth.set_value(admin, *restore)


class _Attr:
    """``{pick.name}`` (or any picked native field) in a question template."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.__dict__.update(record)


async def _checks(
    case: Case, suite: Suite, truth: ErpTruth, admin: str, picked: dict[str, Any] | None,
    answer: str, tools: list[str],
) -> dict[str, bool]:  # fmt: skip
    exp = case.expect
    checks: dict[str, bool] = {}
    if exp.tools:
        checks["plane"] = any(t in tools for t in exp.tools)
    for i, q in enumerate(exp.figures):
        values = await truth.figures(admin if q.as_ == "admin" else case.user, q, picked)
        checks[f"figure{i}"] = bool(values) and all(score.figure_present(answer, v) for v in values)
    for i, q in enumerate(exp.forbid):
        values = await truth.figures(admin if q.as_ == "admin" else case.user, q, picked)
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
    return checks


def _summarise(suite: Suite, cases: list[CaseResult]) -> SuiteResult:
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
    }  # fmt: skip
    gates: dict[str, dict[str, Any]] = {}
    for name, bound in suite.gates.items():
        ceiling = name.startswith(MAX_PREFIX)
        value = metrics.get(name.removeprefix(MAX_PREFIX) if ceiling else name)
        ok = value is not None and (value <= bound if ceiling else value >= bound)
        gates[name] = {"bound": bound, "value": value, "ok": ok}
    return SuiteResult(suite.name, cases, metrics, gates)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
