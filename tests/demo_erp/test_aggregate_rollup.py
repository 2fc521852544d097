"""A GROUP BY over date parts runs in two steps (per day and company first, then by month):
the same rows, the same figures to the cent, in the same order as the one-step query, for every
aggregate the metrics send, in both field syntaxes (v15 strings, v16 dicts)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from demo_erp import db, query
from demo_erp.context import ADMINISTRATOR, Ctx, Settings, as_user

V15_FIELDS = [
    "company as company",
    "year(posting_date) as year_date",
    "month(posting_date) as month_date",
    "sum(base_net_total) as sum_base_net_total",
    "avg(grand_total) as avg_grand_total",
    "min(posting_date) as first",
    "max(outstanding_amount) as largest",
    "count(*) as count",
]
V16_FIELDS = [
    "company as company",
    {"QUARTER": "posting_date", "as": "quarter_date"},
    {"SUM": "base_net_total", "as": "sum_base_net_total"},
    {"COUNT": "*", "as": "count"},
]


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    path: Path = tmp_path_factory.mktemp("rollup") / "erp.sqlite"
    conn = db.connect(path)
    db.create_schema(conn)
    rng = random.Random(4)
    rows = []
    for i in range(3000):
        day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(900))
        amount = round(rng.uniform(1, 90_000), 2)
        rows.append((
            f"SINV-{i:05d}", rng.choice([0, 1, 1, 1, 2]), rng.choice(["Savanna", "Rift"]),
            None if i % 97 == 0 else day.isoformat(), amount, round(amount * 1.16, 2),
            round(amount * rng.choice([0, 0.5, 1]), 2),
        ))  # fmt: skip
    conn.executemany(
        'insert into "tabSales Invoice" (name, docstatus, company, posting_date, base_net_total, '
        "grand_total, outstanding_amount) values (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    yield conn
    conn.close()


def _ctx(conn: Any, version: int) -> Ctx:
    return as_user(conn, Settings(db_path=":memory:", version=version), ADMINISTRATOR)


def _both(
    monkeypatch: pytest.MonkeyPatch, ctx: Ctx, **kwargs: Any
) -> tuple[list[Any], list[Any], list[str]]:
    """The result with the two-step plan, the one-step result, and the SQL that ran."""
    ran: list[str] = []
    rollup = query._rollup

    def spy(*args: Any) -> str | None:
        sql = rollup(*args)
        ran.append(sql or "")
        return sql

    monkeypatch.setattr(query, "_rollup", spy)
    two = query.get_list(ctx, "Sales Invoice", limit_page_length=0, **kwargs)
    monkeypatch.setattr(query, "_rollup", lambda *args: None)
    one = query.get_list(ctx, "Sales Invoice", limit_page_length=0, **kwargs)
    return two, one, ran


@pytest.mark.parametrize("filters", [[["docstatus", "=", 1]], [], [["company", "=", "Rift"]]])
def test_v15_date_parts_roll_up_to_the_same_figures(
    conn: Any, monkeypatch: pytest.MonkeyPatch, filters: list[Any]
) -> None:
    two, one, ran = _both(
        monkeypatch,
        _ctx(conn, 15),
        fields=V15_FIELDS,
        filters=filters,
        group_by="company, year_date, month_date",
        order_by="company asc, year_date asc, month_date desc",
    )
    assert ran[0].startswith("select "), "the two-step plan was not used"
    assert two == one
    assert len(two) > 25
    assert any(row["year_date"] is None for row in two)  # undated invoices: their own group


def test_v16_quarters_roll_up_to_the_same_figures(
    conn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    two, one, ran = _both(
        monkeypatch,
        _ctx(conn, 16),
        fields=V16_FIELDS,
        filters=[["docstatus", "=", 1]],
        group_by="company, quarter_date",
        order_by="quarter_date asc, company asc",
    )
    assert ran[0]
    assert two == one


def test_what_does_not_combine_exactly_runs_in_one_step(
    conn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fields in (
        ["year(posting_date) as y", "avg(conversion_rate) as rate"],  # a float average
        ["year(posting_date) as y", "count(distinct customer) as count"],
    ):
        two, one, ran = _both(
            monkeypatch, _ctx(conn, 15), fields=fields, group_by="y", order_by="y asc"
        )
        assert ran == [""]
        assert two == one
