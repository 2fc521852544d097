"""The held-out suites (tests/erp_agent/data/heldout_v2.yaml, heldout_v3.yaml) are pinned: each
was written without reading the planner, so it may only change on purpose (update its SHA-256 in
the same commit). Each parses with the project's suite loader, holds enough cases in every
question family of the seed questions plus HR, purchase rates and GL balances, is asked by every
demo user, and states its truth in the ERP's terms with date tokens only (no typed dates)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from demo_erp.seed.users import DEMO_USERS
from erp_agent.evals import load_suites
from erp_agent.evals.spec import Query, Suite
from erp_agent.evals.truth import date_tokens

DATA = Path(__file__).parent / "data"
FAMILIES = {
    "overdue", "one_document", "counts", "totals", "top_n", "trends", "ageing", "statements",
    "stock", "concentration", "workflow", "process_knowledge", "find_record", "writes",
    "out_of_scope", "cross_scope", "hr", "purchase_rates", "gl_balances", "clarification",
    "bad_input",
}  # fmt: skip


@dataclass(frozen=True)
class Pinned:
    name: str
    sha256: str
    min_cases: int
    families: frozenset[str]

    @property
    def path(self) -> Path:
        return DATA / f"{self.name}.yaml"


SETS = [
    Pinned(
        "heldout_v2",
        "3338123c4f0ca0ab91f4c66f135d3bf6a49100b7923d74a240b26c7bed103909",
        250,
        frozenset(FAMILIES | {"outstanding_vs_billed"}),
    ),
    Pinned(
        "heldout_v3",
        "92075f5919eb38f51146cc0b817c199d992fa4c25390bf75d579da9328377b90",
        220,
        frozenset(FAMILIES),
    ),
]
by_name = pytest.mark.parametrize("pinned", SETS, ids=[p.name for p in SETS])
_TOKEN = re.compile(r"^\{([a-z0-9_]+)(?:[+-]\d+)?\}$")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _suite(pinned: Pinned) -> Suite:
    (suite,) = load_suites([str(pinned.path)])
    return suite


def _queries(suite: Suite) -> list[Query]:
    out: list[Query] = []
    for case in suite.cases:
        for expect in (case.expect, *(turn.expect for turn in case.then)):
            out += [q for q in (*expect.figures, *expect.forbid) if isinstance(q, Query)]
    return out


def _values(value: Any) -> list[Any]:
    return [v for item in value for v in _values(item)] if isinstance(value, list) else [value]


@by_name
def test_the_file_is_pinned(pinned: Pinned) -> None:
    assert hashlib.sha256(pinned.path.read_bytes()).hexdigest() == pinned.sha256, (
        f"{pinned.name}.yaml changed: a held-out set only changes on purpose (update its SHA-256)"
    )


@by_name
def test_it_parses_as_an_erpnext_suite_with_its_gates(pinned: Pinned) -> None:
    suite = _suite(pinned)
    assert suite.name == pinned.name
    assert suite.system == "erpnext"
    assert suite.gates == {"accuracy": 0.9, "groundedness": 1.0}


@by_name
def test_it_has_enough_cases_in_every_family(pinned: Pinned) -> None:
    suite = _suite(pinned)
    assert len(suite.cases) >= pinned.min_cases
    assert len({case.id for case in suite.cases}) == len(suite.cases)
    families = Counter(case.family for case in suite.cases)
    assert set(families) == pinned.families
    assert all(n >= 6 for n in families.values()), families


@by_name
def test_every_demo_user_asks(pinned: Pinned) -> None:
    users = {case.user for case in _suite(pinned).cases}
    assert {user.email for user in DEMO_USERS} <= users


@by_name
def test_it_covers_follow_ups_writes_and_probes(pinned: Pinned) -> None:
    cases = _suite(pinned).cases
    assert sum(1 for case in cases if len(case.then) >= 1) >= 20
    assert any(len(case.then) >= 2 for case in cases)
    assert any(turn.choose for case in cases for turn in case.then)
    writes = [case for case in cases if case.family == "writes"]
    assert all("proposal" in case.expect.blocks for case in writes)
    probes = [case for case in cases if case.family == "cross_scope"]
    assert all(case.expect.forbid for case in probes)
    assert any(len(case.question) >= 2000 for case in cases)


@by_name
def test_truth_uses_date_tokens_never_typed_dates(pinned: Pinned) -> None:
    suite = _suite(pinned)
    known = set(date_tokens(dt.date(2026, 11, 30)))
    for query in _queries(suite):
        for value in (v for f in query.filters for v in _values(f[2])):
            if not isinstance(value, str):
                continue
            assert not _ISO_DATE.search(value), f"typed date in {query}"
            token = _TOKEN.match(value)
            if token and not value.startswith("{pick."):
                assert token.group(1) in known, f"unknown date token {value}"
    for case in suite.cases:
        for pick_filter in getattr(case.pick, "filters", []):
            assert not any(
                isinstance(v, str) and _ISO_DATE.search(v) for v in _values(pick_filter[2])
            )
