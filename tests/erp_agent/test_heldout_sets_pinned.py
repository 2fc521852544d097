"""The second held-out suite (tests/erp_agent/data/heldout_v2.yaml) is pinned: it was written
without reading the planner, so it may only change on purpose (update SHA256 in the same
commit). It parses with the project's suite loader, holds at least 250 cases covering every
question family of the seed questions plus HR, purchase rates, outstanding vs billed and GL
balances, is asked by every demo user, and states its truth in the ERP's terms with date
tokens only (no typed dates)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from demo_erp.seed.users import DEMO_USERS
from erp_agent.evals import load_suites
from erp_agent.evals.spec import Query, Suite
from erp_agent.evals.truth import date_tokens

SUITE = Path(__file__).parent / "data" / "heldout_v2.yaml"
SHA256 = "3338123c4f0ca0ab91f4c66f135d3bf6a49100b7923d74a240b26c7bed103909"
MIN_CASES = 250
FAMILIES = {
    "overdue", "one_document", "counts", "totals", "top_n", "trends", "ageing", "statements",
    "stock", "concentration", "workflow", "process_knowledge", "find_record", "writes",
    "out_of_scope", "cross_scope", "hr", "purchase_rates", "outstanding_vs_billed",
    "gl_balances", "clarification", "bad_input",
}  # fmt: skip
_TOKEN = re.compile(r"^\{([a-z0-9_]+)(?:[+-]\d+)?\}$")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _suite() -> Suite:
    (suite,) = load_suites([str(SUITE)])
    return suite


def _queries(suite: Suite) -> list[Query]:
    out: list[Query] = []
    for case in suite.cases:
        for expect in (case.expect, *(turn.expect for turn in case.then)):
            out += [q for q in (*expect.figures, *expect.forbid) if isinstance(q, Query)]
    return out


def _values(value: Any) -> list[Any]:
    return [v for item in value for v in _values(item)] if isinstance(value, list) else [value]


def test_the_file_is_pinned() -> None:
    assert hashlib.sha256(SUITE.read_bytes()).hexdigest() == SHA256, (
        "heldout_v2.yaml changed: a held-out set only changes on purpose (update SHA256)"
    )


def test_it_parses_as_an_erpnext_suite_with_its_gates() -> None:
    suite = _suite()
    assert suite.name == "heldout_v2"
    assert suite.system == "erpnext"
    assert suite.gates == {"accuracy": 0.9, "groundedness": 1.0}


def test_it_has_enough_cases_in_every_family() -> None:
    suite = _suite()
    assert len(suite.cases) >= MIN_CASES
    assert len({case.id for case in suite.cases}) == len(suite.cases)
    families = Counter(case.family for case in suite.cases)
    assert set(families) == FAMILIES
    assert all(n >= 6 for n in families.values()), families


def test_every_demo_user_asks() -> None:
    users = {case.user for case in _suite().cases}
    assert {user.email for user in DEMO_USERS} <= users


def test_it_covers_follow_ups_writes_and_probes() -> None:
    cases = _suite().cases
    assert sum(1 for case in cases if len(case.then) >= 1) >= 20
    assert any(len(case.then) >= 2 for case in cases)
    assert any(turn.choose for case in cases for turn in case.then)
    writes = [case for case in cases if case.family == "writes"]
    assert all("proposal" in case.expect.blocks for case in writes)
    probes = [case for case in cases if case.family == "cross_scope"]
    assert all(case.expect.forbid for case in probes)
    assert any(len(case.question) >= 2000 for case in cases)


def test_truth_uses_date_tokens_never_typed_dates() -> None:
    suite = _suite()
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
