"""Deliberately wrong agents, to prove the eval gate fails them (test doubles).

Each misreading agent answers a suite's figure questions with the figure of a *different*
question — drafts and cancelled documents counted, the date filter dropped, the branch filter
dropped — computed over the ERP's REST API, after calling the tool the case expects. Its answers
are exact arithmetic over the wrong documents: the failure this harness exists to catch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from erp_agent.evals.spec import Query, Suite
from erp_agent.evals.truth import ErpTruth
from erp_agent.models.base import Completion, Message
from erp_agent.models.testing import ScriptedModel

Misreading = Callable[[Query], Query]
_DATE_OPS = ("between", ">", ">=", "<", "<=")


def faithful(query: Query) -> Query:
    """The control: the question as the case states it."""
    return query


def counting_drafts(query: Query) -> Query:
    """Adds up every document, drafts and cancelled ones included."""
    return query.model_copy(update={"docstatus": "any"})


def counting_cancelled(query: Query) -> Query:
    """Adds up submitted and cancelled documents."""
    return query.model_copy(update={"docstatus": [1, 2]})


def dropping_dates(query: Query) -> Query:
    """Forgets the period the user asked about."""
    kept = [f for f in query.filters if not (str(f[0]).endswith("date") and f[1] in _DATE_OPS)]
    return query.model_copy(update={"filters": kept})


def dropping_branch(query: Query) -> Query:
    """Forgets the branch the user asked about."""
    return query.model_copy(update={"filters": [f for f in query.filters if f[0] != "branch"]})


def _stated(value: Any) -> str:
    return f"{Decimal(str(value)):,.2f}" if not isinstance(value, str) else value


async def misreading_agent(
    truth: ErpTruth, suite: Suite, misread: Misreading, *, admin: str
) -> ScriptedModel:
    """A model that, for each figure case of ``suite``, calls the case's first expected tool and
    then states the figures of the misread queries."""
    answers: dict[str, tuple[str, str]] = {}
    for case in suite.cases:
        if case.pick or not case.expect.figures:
            continue
        stated = []
        for q in case.expect.figures:
            if not isinstance(q, Query):
                continue  # the misreadings are stated in the ERP's terms
            wrong = misread(q)
            user = admin if wrong.as_ == "admin" else case.user
            stated += [_stated(v) for v in await truth.figures(user, wrong, None)]
        tool = case.expect.tools[0] if case.expect.tools else ""
        answers[case.question] = (tool, "The figures are: " + "; ".join(stated or ["none"]) + ".")

    def step(messages: Sequence[Message]) -> Completion:
        asked = [m.content or "" for m in reversed(messages) if m.role == "user"]
        tool, text = next(
            (found for said in asked for q, found in answers.items() if q in said),
            ("", "I can't see that."),
        )
        if messages[-1].role == "user" and tool:
            return ScriptedModel.call(tool, {})
        return ScriptedModel.reply(text)

    return ScriptedModel(*[step] * (4 * len(suite.cases) + 8))
