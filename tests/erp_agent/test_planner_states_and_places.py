"""What staff ask of a record's state, of what is owed and of where stock is, as they ask it:
"did my last leave request get approved or is it still pending?" is the state of the latest one,
drafts included; "absences marked in the last 2 weeks" are attendance marked Absent; "what's
overdue in my branch?" names the invoices that make up the figure; "which of my customers are
late paying, and by how much?" is per customer; "is X below its reorder level anywhere?" is per
warehouse; "how many tape measures have we got?" asks which tape measure; a name typed in lower
case is still that employee. Truth is read from the demo ERP's REST API in its own terms
(doctype, native fields, docstatus), never through the planner's code."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, sums
from test_planner_conversation import chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio


def _employee(rest: RestERP, user: str) -> str:
    [row] = rest.rows("Employee", ["employee_name"], [["user_id", "=", user]])
    return str(row["employee_name"])


async def test_the_state_asked_is_the_latest_records_drafts_included(
    runtime: Any, rest: RestERP
) -> None:
    me = _employee(rest, "employee@demo.local")
    mine = rest.rows("Leave Application", ["posting_date", "status", "docstatus"],
                      [["employee_name", "=", me], ["docstatus", "!=", 2]])  # fmt: skip
    latest = max(mine, key=lambda r: (r["posting_date"], r["name"]))
    submitted = [r for r in mine if r["docstatus"] == 1]
    newest_submitted = max(submitted, key=lambda r: (r["posting_date"], r["name"]))
    chat = await chat_as(runtime, "employee@demo.local")
    answer = text_of(
        await chat.say("did my last leave request get approved or is it still pending?")
    )
    assert latest["name"] in answer, answer
    assert latest["status"] in answer, answer
    if newest_submitted["name"] != latest["name"]:
        # Only submitted ones, or only approved ones (the wrong readings), name another.
        assert newest_submitted["name"] not in answer, answer


async def test_absences_are_attendance_marked_absent(runtime: Any, rest: RestERP) -> None:
    since = (TEST_TODAY - dt.timedelta(days=14)).isoformat()
    window = [
        ["attendance_date", "between", [since, TEST_TODAY.isoformat()]],
        ["docstatus", "=", 1],
    ]
    absent = rest.rows("Attendance", ["employee_name"], [*window, ["status", "=", "Absent"]])
    everyone = rest.rows("Attendance", [], window)
    assert absent
    assert len(everyone) > len(absent)
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("any absences marked in the last 2 weeks?"))
    assert {r["name"] for r in absent} <= set(re.findall(r"HR-ATT-[\w-]+", answer)), answer
    assert figure_present(answer, len(absent)), answer
    assert not figure_present(answer, len(everyone)), answer


def _overdue(rest: RestERP, filters: list[list[Any]]) -> list[dict[str, Any]]:
    return rest.rows(
        "Sales Invoice",
        ["customer", "outstanding_amount", "currency"],
        [["docstatus", "=", 1], ["outstanding_amount", ">", 0],
         ["due_date", "<", TEST_TODAY.isoformat()], *filters],
    )  # fmt: skip


async def test_whats_overdue_names_the_invoices_behind_the_figure(
    runtime: Any, rest: RestERP
) -> None:
    rows = _overdue(rest, [["branch", "=", "Mombasa"]])
    assert 0 < len(rows) <= 12
    total = sum((Decimal(str(r["outstanding_amount"])) for r in rows), Decimal(0))
    chat = await chat_as(runtime, "mombasa.manager@demo.local")
    answer = text_of(await chat.say("whats overdue in my branch?"))
    assert figure_present(answer, total), answer
    assert {r["name"] for r in rows} <= set(re.findall(r"ACC-SINV-[\w-]+", answer)), answer
    others = _overdue(rest, [["branch", "!=", "Mombasa"]])
    assert not {r["name"] for r in others} & set(re.findall(r"ACC-SINV-[\w-]+", answer))


async def test_which_customers_are_late_paying_is_per_customer(runtime: Any, demo_erp: Any) -> None:
    chat = await chat_as(runtime, "sales@demo.local")
    sales = RestERP(demo_erp.url, "sales@demo.local")  # the invoices a sales user may see
    try:
        rows = _overdue(sales, [])
    finally:
        sales.close()
    per_customer = sums(rows, lambda r: (r["customer"], r["currency"]), "outstanding_amount")
    assert len(per_customer) > 1
    answer = text_of(await chat.say("which of my customers are late paying, and by how much?"))
    for (customer, _), owed in per_customer.items():
        assert customer in answer, answer
        assert figure_present(answer, owed), (customer, owed, answer)


async def test_below_reorder_level_anywhere_is_per_warehouse(runtime: Any, rest: RestERP) -> None:
    items = rest.rows("Item", ["item_name", "reorder_level"], [["reorder_level", ">", 0]])
    bins = rest.rows("Bin", ["item_code", "warehouse", "actual_qty", "projected_qty"])
    level = {i["name"]: i["reorder_level"] for i in items}
    low: dict[str, list[dict[str, Any]]] = {}
    for b in bins:
        if b["item_code"] in level and b["projected_qty"] < level[b["item_code"]]:
            low.setdefault(b["item_code"], []).append(b)
    code = next(c for c, found in sorted(low.items()) if len(found) >= 2)
    name = next(i["item_name"] for i in items if i["name"] == code)
    chat = await chat_as(runtime, "stock@demo.local")
    answer = text_of(await chat.say(f"is the {name.lower()} below its reorder level anywhere?"))
    for b in low[code]:
        assert b["warehouse"] in answer, answer
        assert figure_present(answer, b["actual_qty"]), answer
    assert figure_present(answer, level[code]), answer
    fine = [b["warehouse"] for b in bins if b["item_code"] == code and b not in low[code]]
    assert not any(f"{w}," in answer for w in fine), answer


async def test_items_described_by_everyday_words_ask_which_one(runtime: Any, rest: RestERP) -> None:
    hits = rest.rows("Item", ["item_name"], [["item_name", "like", "%Tape Measure%"]])
    assert len(hits) >= 2
    chat = await chat_as(runtime, "stock@demo.local")
    asked = text_of(await chat.say("How many tape measures have we got in Nairobi Stores?"))
    for hit in hits:
        assert hit["item_name"] in asked, asked
    chosen = max(hits, key=lambda h: len(h["item_name"]))
    [stock] = rest.rows("Bin", ["actual_qty"], [["item_code", "=", chosen["name"]], ["warehouse", "=", "Nairobi Stores - ST"]])  # fmt: skip
    answer = text_of(await chat.say(chosen["item_name"].split("Tape Measure")[-1].strip()))
    assert figure_present(answer, stock["actual_qty"]), answer


async def test_a_leave_balance_for_a_name_typed_in_lower_case(runtime: Any, rest: RestERP) -> None:
    year = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.replace(month=12, day=31).isoformat()]  # fmt: skip
    [faith] = rest.rows("Employee", ["employee_name"], [["employee_name", "=", "Faith Njeri"]])
    ledger = rest.rows("Leave Ledger Entry", ["leaves", "employee"],
                        [["docstatus", "=", 1], ["leave_type", "=", "Annual Leave"], ["from_date", "between", year]])  # fmt: skip
    own = sum(
        (Decimal(str(r["leaves"])) for r in ledger if r["employee"] == faith["name"]), Decimal(0)
    )
    everyone = sum((Decimal(str(r["leaves"])) for r in ledger), Decimal(0))
    assert own != everyone
    chat = await chat_as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("annual leave balance for faith njeri?"))
    assert figure_present(answer, own), answer
    assert not figure_present(answer, everyone), answer
