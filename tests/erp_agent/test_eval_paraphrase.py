"""The paraphrase suite: the seed-question families asked the way staff phrase them, follow-up
chains, clarification round-trips and calculations, scored against the ERP's own REST API.

The suite's shape is pinned here (how many cases, which families, chains of 2–4 turns), the
conversation mechanics are unit-tested, and a model that states real ERP figures of the wrong
meaning fails. The offline planner is held to its floors on this suite and the held-out ones, on
four dates and two data sets, by test_eval_dates.py."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest

from conftest import TEST_TODAY, DemoERP
from erp_agent.evals import load_suites, run_suites
from erp_agent.evals.runner import _reply
from erp_agent.evals.spec import Suite, Turn
from erp_agent.evals.truth import ErpTruth
from erp_agent.models.testing import ScriptedModel
from erp_agent.runtime import Runtime

SUITE = "paraphrase"
# The families of the seed questions (what users ask), then the conversation kinds.
SEED_FAMILIES = (
    "overdue", "document", "counts", "totals", "top_n", "trends", "ageing", "statements",
    "stock", "concentration", "workflow", "knowledge", "find_record", "writes", "out_of_scope",
    "cross_scope",
)  # fmt: skip
KINDS = ("calculator", "follow_ups", "clarifications")


def _suite() -> Suite:
    (suite,) = load_suites([SUITE])
    return suite


def test_the_suite_covers_every_family_in_many_wordings() -> None:
    suite = _suite()
    assert len(suite.cases) >= 250
    assert suite.gates == {"accuracy": 0.95, "groundedness": 1.0}
    per_family = Counter(c.family for c in suite.cases)
    assert set(per_family) == {*SEED_FAMILIES, *KINDS}
    assert all(per_family[f] >= 5 for f in per_family), per_family
    chains = [c for c in suite.cases if c.then]
    assert {len(c.then) + 1 for c in chains} >= {2, 3, 4}  # follow-up chains of 2–4 turns
    assert max(len(c.then) for c in suite.cases) <= 3
    assert sum(1 for c in chains for t in c.then if t.choose) >= 5  # clicked clarifications
    assert len({c.id for c in suite.cases}) == len(suite.cases)
    # Expected figures are REST queries in the ERP's own terms; only sums state their result.
    for case in suite.cases:
        for expect in (case.expect, *(t.expect for t in case.then)):
            assert all(q.doctype for q in expect.figures)
            assert not expect.values or case.family == "calculator", case.id


def test_wordings_expand_to_one_case_each() -> None:
    suite = Suite.model_validate({
        "name": "s", "cases": [
            {"id": "a", "family": "f", "wordings": ["one", "two"], "then": [{"say": "and?"}]},
            {"id": "b", "question": "three"},
        ],
    })  # fmt: skip
    assert [(c.id, c.question, c.family) for c in suite.cases] == [
        ("a-1", "one", "f"), ("a-2", "two", "f"), ("b", "three", ""),
    ]  # fmt: skip
    assert suite.cases[1].then[0].say == "and?"
    with pytest.raises(ValueError, match="question or wordings"):
        Suite.model_validate(
            {"name": "s", "cases": [{"id": "a", "question": "q", "wordings": ["w"]}]}
        )
    with pytest.raises(ValueError, match="says something or chooses"):
        Turn.model_validate({"say": "x", "choose": "y"})


def test_a_choice_is_clicked_by_its_label_or_typed_when_none_was_offered() -> None:
    offered = [{"type": "text", "markdown": "Which company?"}, {
        "type": "choices", "question": "Which company?",
        "options": [{"label": "Harbor Goods Inc", "value": "company:HG"},
                    {"label": "Savanna Trading Ltd", "value": "company:ST"}],
    }]  # fmt: skip
    assert _reply(Turn(choose="savanna"), offered, None) == "company:ST"
    assert _reply(Turn(choose="Nowhere Ltd"), offered, None) is None
    assert _reply(Turn(choose="Savanna Trading"), [], None) == "Savanna Trading"
    assert _reply(Turn(say="and {pick.name}?"), offered, {"name": "SO-1"}) == "and SO-1?"
    # A wording that names the year names the eval date's.
    assert _reply(Turn(say="and in {prev_year}?"), [], None, dt.date(2027, 1, 2)) == "and in 2026?"


@pytest.mark.anyio
async def test_real_figures_of_the_wrong_meaning_fail(runtime: Runtime, demo_erp: DemoERP) -> None:
    """A model that quotes genuine ERP totals, but of every invoice including tax, drafts and
    cancelled ones, scores nothing on revenue: the truth is the ERP's meaning, not any number
    the ERP holds."""
    truth = ErpTruth(demo_erp.url, "demo", TEST_TODAY)
    try:
        rows = await truth.get_list(
            "admin@demo.local", "Sales Invoice", ["currency", "sum(grand_total) as total"],
            [["posting_date", "between", [f"{TEST_TODAY.year}-01-01", f"{TEST_TODAY.year}-12-31"]]],
            group_by=["currency"],
        )  # fmt: skip
    finally:
        await truth.aclose()
    wrong = "; ".join(f"{r['currency']} {float(r['total']):,.2f}" for r in rows)
    suite = _suite()
    revenue = [c for c in suite.cases if c.id.startswith("revenue-this-year-")]
    model = ScriptedModel(*[ScriptedModel.reply(f"Revenue this year: {wrong}.")] * len(revenue))
    (run,) = (
        await run_suites(
            runtime, model, [suite.model_copy(update={"cases": revenue})], password="demo",
            today=TEST_TODAY,
        )
    ).suites  # fmt: skip
    assert rows
    assert run.metrics["accuracy"] == 0.0
    assert not run.ok
