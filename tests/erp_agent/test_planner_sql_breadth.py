"""The offline planner on the bespoke SQL database, asked in wordings no eval suite uses: a
count asked of an amount's records, stock per branch store, a figure asked "in total" of a
report's records, and a bare "per branch" follow-up. Truth is SQL run straight on the database,
in its own terms (stage = 'posted', deleted_at is null), never through the agent."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sql_databases import MAPPING, database, raw, seeded

from conftest import TEST_TODAY
from erp_agent.config import EngineSettings, Settings
from erp_agent.engine.response import TurnResponse
from erp_agent.evals.score import figure_present, plain
from erp_agent.planner import OfflinePlanner
from erp_agent.runtime import Runtime
from erp_agent.store.sql_store import open_store

pytestmark = pytest.mark.anyio
OWNER = "owner@savanna.test"
POSTED = "tenant_id = 'SAVANNA' and stage = 'posted' and deleted_at is null"


@pytest.fixture
async def sql(tmp_path: Path) -> AsyncIterator[tuple[str, Runtime]]:
    with database("sqlite", tmp_path) as url:
        seeded(url, per_branch=20)
        store = open_store(f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite'}")
        settings = Settings(
            connector="sql",
            erp_url=url,
            sql_mapping=str(MAPPING),
            engine=EngineSettings(today=TEST_TODAY),
        )
        runtime = await Runtime.create(settings, store=store)
        yield url, runtime
        await runtime.aclose()


async def ask(runtime: Runtime, *messages: str) -> list[TurnResponse]:
    session = await runtime.sign_in(OWNER, "demo")
    engine = runtime.engine(OfflinePlanner(runtime.catalog, runtime.connector.name))
    out: list[TurnResponse] = []
    conversation: str | None = None
    for message in messages:
        response = await engine.run_turn(session, message, conversation_id=conversation)
        conversation = response.conversation_id
        out.append(response)
    return out


def text_of(response: TurnResponse) -> str:
    return plain("\n".join(b["markdown"] for b in response.blocks if b["type"] == "text"))


async def test_how_many_asks_for_the_count_of_what_the_amount_sums(
    sql: tuple[str, Runtime],
) -> None:
    url, runtime = sql
    (answer,) = await ask(runtime, "what number of invoices are past due?")
    due = f"{POSTED} and balance > 0 and due_on < '{TEST_TODAY.isoformat()}'"
    count = raw(url, f"select count(*) from invoices where {due}")[0][0]
    owed = raw(url, f"select sum(balance) from invoices where {due}")[0][0]
    text = text_of(answer)
    assert count > 12  # a count the provenance guard would not let through unsourced
    assert figure_present(text, count), text
    # The amount overdue is the other figure of the same records: not what was asked.
    assert not figure_present(text, owed), text


async def test_the_tools_take_the_pinned_business_date(sql: tuple[str, Runtime]) -> None:
    """Overdue means due before the deployment's today (here pinned), not the machine clock's."""
    _, runtime = sql
    (answer,) = await ask(runtime, "how many invoices are overdue?")
    assert f"due date < {TEST_TODAY.isoformat()}" in text_of(answer)
    assert runtime.gateway.today == TEST_TODAY != dt.date.today()


async def test_stock_value_of_one_branch_store(sql: tuple[str, Runtime]) -> None:
    url, runtime = sql
    (answer,) = await ask(runtime, "value of stock we hold at Mombasa")
    value = raw(url, "select sum(stock_value) from stock_levels where tenant_id = 'SAVANNA' "
                     "and branch_id = 'Mombasa'")[0][0]  # fmt: skip
    everywhere = raw(url, "select sum(stock_value) from stock_levels "
                          "where tenant_id = 'SAVANNA'")[0][0]  # fmt: skip
    text = text_of(answer)
    assert figure_present(text, value), text
    assert not figure_present(text, everywhere), text


async def test_a_total_asked_of_a_reports_records_is_one_figure(
    sql: tuple[str, Runtime],
) -> None:
    url, runtime = sql
    (answer,) = await ask(runtime, "receivables altogether?")
    total = raw(url, f"select sum(balance) from invoices where {POSTED}")[0][0]
    assert figure_present(text_of(answer), total), text_of(answer)
    # Every figure stated is a tool's: no count of hidden rows made up in words.
    assert "Not verified" not in text_of(answer)


async def test_a_bare_per_branch_regroups_the_last_figure(sql: tuple[str, Runtime]) -> None:
    url, runtime = sql
    first, then = await ask(runtime, "how many invoices did we issue last year?", "per branch")
    # Each count says what was counted, in the system's own terms.
    for answer in (first, then):
        assert "Counted: posted Sales Invoices only (stage = 'posted')" in text_of(answer)
    year = TEST_TODAY.year - 1
    # Every posted invoice document of the year (the record count the first answer gave).
    rows = raw(url, f"select branch_id, count(*) from invoices where {POSTED} "
                    f"and issued_on between '{year}-01-01' and '{year}-12-31' "
                    "group by branch_id")  # fmt: skip
    text = text_of(then)
    assert len(rows) == 3
    for branch, count in rows:
        assert branch in text, text
        assert figure_present(text, count), (branch, count, text)
    assert "branches:" not in text.lower()  # not a list of the branch records


async def test_payments_by_method_and_one_method_by_its_value(sql: tuple[str, Runtime]) -> None:
    """A payment method is only a column's value here (no records of methods): grouped by it,
    and a method named is found among the values the payments carry."""
    url, runtime = sql
    year = TEST_TODAY.year - 1
    span = f"paid_on between '{year}-01-01' and '{year}-12-31'"
    live = "tenant_id = 'SAVANNA' and deleted_at is null"
    by_method = raw(url, f"select method, sum(amount) from payments where {live} and {span} "
                         "group by method")  # fmt: skip
    (grouped,) = await ask(runtime, "money received last year split by payment method")
    text = text_of(grouped)
    assert len(by_method) == 3
    for method, amount in by_method:
        assert method in text, text
        assert figure_present(text, amount), (method, amount, text)
    (one,) = await ask(runtime, f"how much was received through M-Pesa in {year}?")
    mpesa = raw(url, f"select sum(amount) from payments where {live} and {span} "
                     "and method = 'M-Pesa'")[0][0]  # fmt: skip
    everything = sum(a for _, a in by_method)
    assert figure_present(text_of(one), mpesa), text_of(one)
    assert not figure_present(text_of(one), everything), text_of(one)


async def test_a_field_of_the_record_the_last_answer_was_about(sql: tuple[str, Runtime]) -> None:
    url, runtime = sql
    top, limit, unknown = await ask(
        runtime,
        "which customer owes us the most?",
        "and what's its credit limit",
        "their shoe size?",
    )
    (code, owed) = raw(url, f"select customer_code, sum(balance) as owed from invoices where {POSTED} "
                            "and balance <> 0 group by customer_code "
                            "order by owed desc, customer_code limit 1")[0]  # fmt: skip
    credit = raw(url, "select credit_limit from customers where code = :c", c=code)[0][0]
    assert figure_present(text_of(top), owed), text_of(top)
    assert code in text_of(limit), text_of(limit)
    assert figure_present(text_of(limit), credit), text_of(limit)
    assert "no field" in text_of(unknown), text_of(unknown)
    (alone,) = await ask(runtime, "what is their credit limit?")
    assert "no earlier answer" in text_of(alone), text_of(alone)
