"""The offline planner's eval on four business dates of the demo's year × two demo data sets:
every ERPNext suite and both held-out sets, each (date, seed) on a demo ERP seeded as of that
date, every gate of every suite checked against this module's floors.

A planner tuned on one date's data can pass its gates there and fail them on another: the
first days of a year or a quarter (periods with no data yet, "last month" in another year),
the last day of one, another random seed and volume. Each run prints its wall time and its
scores; a failure prints every suite's families and every miss (``report.summary``).

The runner's date mechanics are tested here too: a figure whose truth is empty at the date is
passed by an answer that says there is none (and failed by one that invents a figure), a case
whose dated pick finds nothing or whose premise the data does not meet is skipped with its
reason, and cases run concurrently while a case that edits the ERP runs alone."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import TEST_TODAY, DemoERP
from erp_agent.config import Settings
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.report import summary
from erp_agent.evals.runner import MAX_PREFIX, SuiteResult
from erp_agent.evals.spec import Suite, builtin_names
from erp_agent.models.base import Completion, Message
from erp_agent.models.testing import ScriptedModel
from erp_agent.planner import OfflinePlanner
from erp_agent.retrieval.knowledge import KnowledgeBase, packaged_root
from erp_agent.retrieval.settings import make_retriever
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import SQLStore, open_store

YEAR = TEST_TODAY.year
DATES = (dt.date(YEAR, 1, 2), dt.date(YEAR, 4, 1), dt.date(YEAR, 11, 30), dt.date(YEAR, 12, 31))
DATA = ((42, 0.1), (7, 0.2))  # (random seed, volume) of the demo data
# Each date once, the two data sets in turn (each meets a year's start and a quarter's): four
# runs keep CI near its half hour; every pair is one edit of this line away.
RUNS = [(day, *DATA[i % len(DATA)]) for i, day in enumerate(DATES)]
DATA_DIR = Path(__file__).parent / "data"
# The held-out sets, and dev_v4 to dev_v14: sets of the planner's weakest families,
# written the same way but read while the planner was worked on (development sets, not held-out
# ones).
HELDOUT = tuple(
    DATA_DIR / f"{name}.yaml"
    for name in (
        "heldout_v2",
        "heldout_v3",
        "heldout_paraphrases",
        "dev_v4",
        "dev_v5",
        "dev_v6",
        "dev_v7",
        "dev_v8",
        "dev_v9",
        "dev_v10",
        "dev_v11",
        "dev_v12",
        "dev_v13",
        "dev_v14",
    )
)

# The floor of every gate of every suite on every run. Each is what the offline planner reached
# on that run when this table was written, rounded down to 0.01 (the held-out sets a further
# 0.01 lower: a few of their cases race their own writes): below the suite's own gate (in the
# comment) where it does not meet it yet, so that any regression fails. Raise them to the gate
# as the planner improves.
ONE = (1.0,) * len(RUNS)
FLOORS: dict[str, dict[str, tuple[float, ...]]] = {
    #                              Jan 2  Apr 1  Nov 30 Dec 31
    #                              s42    s7     s42    s7
    "aggregation_by_retrieval": {"accuracy": ONE, "groundedness": ONE},  # gate: 0.9, 1.0
    "cross_tenant": {"accuracy": ONE, "groundedness": ONE},  # gate: 0.9, 1.0
    "exact_identifier": {"accuracy": ONE, "groundedness": ONE},  # gate: 0.9, 1.0
    "groundedness": {"groundedness": ONE},  # gate: groundedness 1.0
    "out_of_scope": {"accuracy": ONE, "groundedness": ONE},  # gate: 0.9, 1.0
    "paraphrase": {  # gate: accuracy 0.95, groundedness 1.0
        "accuracy":               (0.98,  0.97,  1.0,   0.97),
        "groundedness": ONE,
    },
    "routing": {"accuracy": ONE},  # gate: accuracy 1.0
    "stale_record": {"accuracy": ONE, "groundedness": ONE},  # gate: 0.9, 1.0
    "heldout_v2": {  # gate: accuracy 0.9, groundedness 1.0
        "accuracy":               (0.68,  0.66,  0.68,  0.66),
        "groundedness":           (0.98,) * len(RUNS),
    },
    "heldout_v3": {  # gate: accuracy 0.9, groundedness 1.0
        "accuracy":               (0.77,  0.75,  0.76,  0.74),
        "groundedness":           (0.98,) * len(RUNS),
    },
    "dev_v4": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.92,  0.0,   0.99,  0.0),
        "groundedness":           (0.98,  0.0,   0.99,  0.0),
    },
    "dev_v5": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.91,  0.0,   0.89,  0.0),
        "groundedness":           (0.99,  0.0,   0.99,  0.0),
    },
    "dev_v6": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.88,  0.0,   0.91,  0.0),
        "groundedness":           (0.99,  0.0,   0.99,  0.0),
    },
    "dev_v7": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.89,  0.0,   0.91,  0.0),
        "groundedness":           (0.99,  0.0,   0.99,  0.0),
    },
    "dev_v8": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.85,  0.0,   0.91,  0.0),
        "groundedness":           (0.98,  0.0,   0.98,  0.0),
    },
    "dev_v9": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.93,  0.0,   0.95,  0.0),
        "groundedness":           (0.98,  0.0,   0.98,  0.0),
    },
    "dev_v10": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.93,  0.0,   0.94,  0.0),
        "groundedness":           (0.99,  0.0,   0.99,  0.0),
    },
    "dev_v11": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.87,  0.0,   0.86,  0.0),
        "groundedness":           (0.99,  0.0,   0.99,  0.0),
    },
    "dev_v12": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.80,  0.0,   0.82,  0.0),
        "groundedness":           (0.99,  0.0,   0.99,  0.0),
    },
    "dev_v13": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.86,  0.0,   0.85,  0.0),
        "groundedness":           (0.99,  0.0,   0.99,  0.0),
    },
    "dev_v14": {  # gate: accuracy 0.9, groundedness 1.0; run on seed 42 only (WRITTEN_FOR)
        "accuracy":               (0.69,  0.0,   0.71,  0.0),
        "groundedness":           (0.98,  0.0,   0.99,  0.0),
    },
    "heldout": {  # gate: accuracy 0.95, groundedness 1.0
        "accuracy":               (0.92,  0.92,  0.92,  0.85),
        "groundedness": ONE,
    },
}  # fmt: skip


# A set written against one data set only (its picks name that seed's records): run there.
WRITTEN_FOR = {"dev_v4": 42, "dev_v5": 42, "dev_v6": 42, "dev_v7": 42, "dev_v8": 42, "dev_v9": 42,
               "dev_v10": 42, "dev_v11": 42, "dev_v12": 42, "dev_v13": 42, "dev_v14": 42}  # fmt: skip


def _suites(seed: int | None = None) -> list[Suite]:
    suites = load_suites([*builtin_names(), *map(str, HELDOUT)])
    return [s for s in suites if seed is None or WRITTEN_FOR.get(s.name, seed) == seed]


def test_every_gate_of_every_suite_has_a_floor_on_every_run() -> None:
    suites = {s.name: s for s in _suites()}
    assert set(FLOORS) == set(suites)
    for name, suite in suites.items():
        assert set(FLOORS[name]) == set(suite.gates), name
        for gate, floors in FLOORS[name].items():
            assert len(floors) == len(RUNS), (name, gate)
            assert all(0 <= f <= 1 for f in floors), (name, gate)


@pytest.fixture(scope="session")
def agent_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The agent's data folder, the starter knowledge base indexed into it once for every run
    (process questions are answered from it, as `erp-agent demo` has it)."""
    folder = tmp_path_factory.mktemp("eval-agent-data")
    settings = Settings(data_dir=str(folder))
    retriever = make_retriever(settings)
    try:
        KnowledgeBase(retriever, settings.retrieval.index_tenant).index_path(packaged_root())
    finally:
        retriever.index.close()
    return folder


@pytest.fixture(scope="session")
def demo_erp_as_of(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[dt.date, int, float], str]]:
    """The URL of a demo ERP seeded with (seed, scale) as of a date: seeded and served once per
    session, for this run alone (the session's shared demo ERP is written to by other tests)."""
    from demo_erp.seed import seed as seed_demo
    from demo_erp.server import RunningServer, settings_for, start_in_thread

    servers: dict[tuple[dt.date, int, float], RunningServer] = {}

    def url(day: dt.date, seed: int, scale: float) -> str:
        if (day, seed, scale) not in servers:
            path = tmp_path_factory.mktemp("demo-erp") / "demo.sqlite"
            seed_demo(path, seed=seed, today=day, scale=scale)
            servers[day, seed, scale] = start_in_thread(settings_for(path, today=day))
        return servers[day, seed, scale].url

    yield url
    for server in servers.values():
        server.stop()


def _below_floor(results: Sequence[SuiteResult], column: int) -> list[str]:
    below = []
    for suite in results:
        for gate, result in suite.gates.items():
            floor, value = FLOORS[suite.name][gate][column], result["value"]
            ceiling = gate.startswith(MAX_PREFIX)
            if value is None or (value > floor if ceiling else value < floor):
                below.append(
                    f"{suite.name} {gate} {value} {'above' if ceiling else 'below'} its floor "
                    f"{floor} (gate {result['bound']:g})"
                )
    return below


@pytest.mark.slow
# A run on a seed-42 date asks about 1,700 cases (615 s alone on this kind of machine, with
# dev_v11); a loaded machine takes half as long again.
@pytest.mark.timeout(1500)
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("day", "seed", "scale"), RUNS, ids=[f"{d.isoformat()}-seed{s}-scale{x}" for d, s, x in RUNS]
)
async def test_the_offline_planner_holds_its_floors(
    day: dt.date, seed: int, scale: float, demo_erp_as_of: Callable[[dt.date, int, float], str],
    agent_data: Path, tmp_path: Path, record_property: Callable[[str, object], None],
) -> None:  # fmt: skip
    url = await asyncio.to_thread(demo_erp_as_of, day, seed, scale)
    # Concurrent cases' writes wait for the store's lock as long as a turn may take.
    store = SQLStore(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}", lock_timeout=60)
    runtime = await Runtime.create(Settings(erp_url=url, data_dir=str(agent_data)), store=store)
    try:
        run = await run_suites(
            runtime, OfflinePlanner(runtime.catalog), _suites(seed), password="demo", today=day
        )
    finally:
        await runtime.aclose()
    # The wall time and scores of every run, in CI's log (conftest prints them at the end of
    # the session, from whichever test worker ran it).
    lines = [f"eval as of {day}, seed {seed}, scale {scale}: {run.seconds:g} s wall"]
    for s in run.suites:
        m = s.metrics
        lines.append(f"  {s.name}: accuracy {m['accuracy']:g}, groundedness {m['groundedness']:g}"
                     f" ({m['cases']:g} cases, {m['skipped']:g} skipped)")  # fmt: skip
    record_property("printed", "\n".join(lines))
    below = _below_floor(run.suites, RUNS.index((day, seed, scale)))
    assert not below, "\n".join(below) + "\n\n" + summary(run)


# ---------------------------------------------------------------- the runner's date mechanics

AFTER_THE_DATA = TEST_TODAY + dt.timedelta(days=1)  # 1 Dec: nothing posted this month yet
THIS_MONTH = [["posting_date", "between", ["{month_start}", "{month_end}"]]]


def _case(id_: str, question: str, **extra: Any) -> dict[str, Any]:
    return {"id": id_, "question": question, **extra}


def _revenue(filters: list[list[Any]]) -> dict[str, Any]:
    return {"op": "sum", "doctype": "Sales Invoice", "field": "net_total", "docstatus": 1,
            "group_by": ["currency"], "filters": filters}  # fmt: skip


@pytest.fixture
async def runtime(demo_erp: DemoERP, tmp_path: Path) -> AsyncIterator[Runtime]:
    store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
    rt = await Runtime.create(Settings(erp_url=demo_erp.url, data_dir=str(tmp_path)), store=store)
    yield rt
    await rt.aclose()


class _Answers(ScriptedModel):
    """Answers each question by a marker in it (whatever order the cases run in), after a
    short wait, counting the questions in flight at once."""

    def __init__(self, answers: dict[str, str], default: str = "Nothing to report.") -> None:
        super().__init__()
        self.answers, self.default = answers, default
        self.in_flight, self.most = 0, 0
        self.beside: dict[str, int] = {}  # marker → questions in flight when it was asked

    async def complete(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = (), **_: Any
    ) -> Completion:
        asked = " ".join(m.content or "" for m in messages if m.role == "user")
        marker = next((k for k in self.answers if k in asked), None)
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if marker is not None:
            self.beside[marker] = self.in_flight
        await asyncio.sleep(0.3)
        self.in_flight -= 1
        return self.reply(self.answers[marker] if marker else self.default)


@pytest.mark.anyio
async def test_an_empty_period_is_passed_by_saying_so_and_failed_by_a_figure(
    runtime: Runtime,
) -> None:
    figures = [_revenue(THIS_MONTH)]
    suite = Suite.model_validate({"name": "empty", "cases": [
        _case("says-none", "revenue this month (a)", expect={"figures": figures}),
        _case("invents", "revenue this month (b)", expect={"figures": figures}),
        _case("own-words", "revenue this month (c)",
              expect={"figures": figures, "empty": ["quiet month"]}),
        _case("other-words", "revenue this month (d)",
              expect={"figures": figures, "empty": ["quiet month"]}),
    ]})  # fmt: skip
    model = _Answers({
        "(a)": "No records found: no sales invoices this month.",
        "(b)": "Revenue this month: KES 1,234,567.00.",
        "(c)": "A quiet month so far.",
        "(d)": "No records found.",
    })  # fmt: skip
    (run,) = (
        await run_suites(runtime, model, [suite], password="demo", today=AFTER_THE_DATA)
    ).suites
    says_none, invents, own_words, other_words = run.cases
    assert (says_none.passed, says_none.empty) == (True, ["figure0"])
    assert (invents.passed, invents.empty) == (False, ["figure0"]), invents.answer
    assert own_words.passed
    assert not other_words.passed  # a suite's own words replace the default ones


@pytest.mark.anyio
async def test_a_case_that_cannot_be_asked_is_skipped_and_not_scored(runtime: Runtime) -> None:
    """A dated pick that finds nothing, or a premise the data does not meet, skips the case with
    its reason; an undated pick that finds nothing is the suite's error, and fails."""
    dated = {"doctype": "Sales Invoice", "filters": THIS_MONTH}
    undated = {"doctype": "Sales Invoice", "filters": [["customer", "=", "Nobody Ltd"]]}
    nowhere = {"op": "count", "doctype": "Supplier", "docstatus": "any",
               "filters": [["name", "like", "Nowhere%"]]}  # fmt: skip
    two_acmes = {"op": "names", "doctype": "Customer", "docstatus": "any",
                 "filters": [["name", "like", "Acme%"]], "at_least": 2}  # fmt: skip
    suite = Suite.model_validate({"name": "picks", "gates": {"accuracy": 1.0}, "cases": [
        _case("this-months-invoice", "show invoice {pick.name}", pick=dated),
        _case("nowhere", "purchases from Nowhere", given=[nowhere]),
        _case("which-acme", "which Acme?", given=[two_acmes]),
        _case("nobodys-invoice", "show invoice {pick.name}", pick=undated),
        _case("revenue", "revenue this year", expect={"text": ["revenue"]}),
    ]})  # fmt: skip
    model = _Answers({"revenue": "Revenue this year: none yet."})
    (run,) = (
        await run_suites(runtime, model, [suite], password="demo", today=AFTER_THE_DATA)
    ).suites
    no_invoice, no_supplier, one_acme, broken, asked = run.cases
    assert "no document in its period as of 2026-12-01" in (no_invoice.skipped or "")
    assert "premise does not hold" in (no_supplier.skipped or "")
    assert "is 0, not at least 1" in (no_supplier.skipped or "")
    assert "is 1, not at least 2" in (one_acme.skipped or "")
    assert (broken.skipped, broken.passed) == (None, False)
    assert broken.error
    assert asked.passed
    assert (run.metrics["cases"], run.metrics["skipped"]) == (2, 3)
    assert run.metrics["accuracy"] == 0.5  # the skipped cases count neither way


@pytest.mark.anyio
async def test_cases_run_concurrently_and_an_edit_runs_alone(runtime: Runtime) -> None:
    edit = {"field": "credit_limit", "add": 1234.5}
    pick = {"doctype": "Customer", "filters": [["credit_limit", ">", 0]]}
    cases = [_case(f"q{n}", f"question {n}") for n in range(8)]
    cases.insert(3, _case("stale", "credit limit of {pick.name} EDITED", pick=pick, edit=edit))
    suite = Suite.model_validate({"name": "many", "cases": cases})
    model = _Answers({"EDITED": "Nothing to report."})
    run = await run_suites(runtime, model, [suite], password="demo", today=TEST_TODAY,
                           concurrency=4)  # fmt: skip
    assert model.most == 4
    assert model.beside == {"EDITED": 1}  # nothing else in flight while the ERP is edited
    assert [c.case for c in run.suites[0].cases] == [c["id"] for c in cases]  # suite order
