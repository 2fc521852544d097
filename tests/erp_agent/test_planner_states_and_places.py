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
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP, sums
from test_planner_conversation import Chat, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present

pytestmark = pytest.mark.anyio


@pytest.fixture
def admin(demo_erp: Any) -> Iterator[RestERP]:
    erp = RestERP(demo_erp.url, "admin@demo.local")
    yield erp
    erp.close()


async def _as(runtime: Any, user: str) -> Chat:
    from erp_agent.gateway.signin import sign_in

    return Chat(
        runtime, await sign_in(runtime.connector, runtime.registry, runtime.policy, user, "demo")
    )


def _employee(admin: RestERP, user: str) -> str:
    [row] = admin.rows("Employee", ["employee_name"], [["user_id", "=", user]])
    return str(row["employee_name"])


async def test_the_state_asked_is_the_latest_records_drafts_included(
    runtime: Any, admin: RestERP
) -> None:
    me = _employee(admin, "employee@demo.local")
    mine = admin.rows("Leave Application", ["posting_date", "status", "docstatus"],
                      [["employee_name", "=", me], ["docstatus", "!=", 2]])  # fmt: skip
    latest = max(mine, key=lambda r: (r["posting_date"], r["name"]))
    submitted = [r for r in mine if r["docstatus"] == 1]
    newest_submitted = max(submitted, key=lambda r: (r["posting_date"], r["name"]))
    chat = await _as(runtime, "employee@demo.local")
    answer = text_of(
        await chat.say("did my last leave request get approved or is it still pending?")
    )
    assert latest["name"] in answer, answer
    assert latest["status"] in answer, answer
    if newest_submitted["name"] != latest["name"]:
        # Only submitted ones, or only approved ones (the wrong readings), name another.
        assert newest_submitted["name"] not in answer, answer


async def test_absences_are_attendance_marked_absent(runtime: Any, admin: RestERP) -> None:
    since = (TEST_TODAY - dt.timedelta(days=14)).isoformat()
    window = [
        ["attendance_date", "between", [since, TEST_TODAY.isoformat()]],
        ["docstatus", "=", 1],
    ]
    absent = admin.rows("Attendance", ["employee_name"], [*window, ["status", "=", "Absent"]])
    everyone = admin.rows("Attendance", [], window)
    assert absent
    assert len(everyone) > len(absent)
    chat = await _as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("any absences marked in the last 2 weeks?"))
    assert {r["name"] for r in absent} <= set(re.findall(r"HR-ATT-[\w-]+", answer)), answer
    assert figure_present(answer, len(absent)), answer
    assert not figure_present(answer, len(everyone)), answer


def _overdue(admin: RestERP, filters: list[list[Any]]) -> list[dict[str, Any]]:
    return admin.rows(
        "Sales Invoice",
        ["customer", "outstanding_amount", "currency"],
        [["docstatus", "=", 1], ["outstanding_amount", ">", 0],
         ["due_date", "<", TEST_TODAY.isoformat()], *filters],
    )  # fmt: skip


async def test_whats_overdue_names_the_invoices_behind_the_figure(
    runtime: Any, admin: RestERP
) -> None:
    rows = _overdue(admin, [["branch", "=", "Mombasa"]])
    assert 0 < len(rows) <= 12
    total = sum((Decimal(str(r["outstanding_amount"])) for r in rows), Decimal(0))
    chat = await _as(runtime, "mombasa.manager@demo.local")
    answer = text_of(await chat.say("whats overdue in my branch?"))
    assert figure_present(answer, total), answer
    assert {r["name"] for r in rows} <= set(re.findall(r"ACC-SINV-[\w-]+", answer)), answer
    others = _overdue(admin, [["branch", "!=", "Mombasa"]])
    assert not {r["name"] for r in others} & set(re.findall(r"ACC-SINV-[\w-]+", answer))


async def test_which_customers_are_late_paying_is_per_customer(
    runtime: Any, admin: RestERP
) -> None:
    chat = await _as(runtime, "sales@demo.local")
    rest = RestERP(admin.client.base_url.__str__().rstrip("/"), "sales@demo.local")
    try:
        rows = _overdue(rest, [])
    finally:
        rest.close()
    per_customer = sums(rows, lambda r: (r["customer"], r["currency"]), "outstanding_amount")
    assert len(per_customer) > 1
    answer = text_of(await chat.say("which of my customers are late paying, and by how much?"))
    for (customer, _), owed in per_customer.items():
        assert customer in answer, answer
        assert figure_present(answer, owed), (customer, owed, answer)


async def test_below_reorder_level_anywhere_is_per_warehouse(runtime: Any, admin: RestERP) -> None:
    items = admin.rows("Item", ["item_name", "reorder_level"], [["reorder_level", ">", 0]])
    bins = admin.rows("Bin", ["item_code", "warehouse", "actual_qty", "projected_qty"])
    level = {i["name"]: i["reorder_level"] for i in items}
    low: dict[str, list[dict[str, Any]]] = {}
    for b in bins:
        if b["item_code"] in level and b["projected_qty"] < level[b["item_code"]]:
            low.setdefault(b["item_code"], []).append(b)
    code = next(c for c, found in sorted(low.items()) if len(found) >= 2)
    name = next(i["item_name"] for i in items if i["name"] == code)
    chat = await _as(runtime, "stock@demo.local")
    answer = text_of(await chat.say(f"is the {name.lower()} below its reorder level anywhere?"))
    for b in low[code]:
        assert b["warehouse"] in answer, answer
        assert figure_present(answer, b["actual_qty"]), answer
    assert figure_present(answer, level[code]), answer
    fine = [b["warehouse"] for b in bins if b["item_code"] == code and b not in low[code]]
    assert not any(f"{w}," in answer for w in fine), answer


async def test_items_described_by_everyday_words_ask_which_one(
    runtime: Any, admin: RestERP
) -> None:
    hits = admin.rows("Item", ["item_name"], [["item_name", "like", "%Tape Measure%"]])
    assert len(hits) >= 2
    chat = await _as(runtime, "stock@demo.local")
    asked = text_of(await chat.say("How many tape measures have we got in Nairobi Stores?"))
    for hit in hits:
        assert hit["item_name"] in asked, asked
    chosen = max(hits, key=lambda h: len(h["item_name"]))
    [stock] = admin.rows("Bin", ["actual_qty"], [["item_code", "=", chosen["name"]], ["warehouse", "=", "Nairobi Stores - ST"]])  # fmt: skip
    answer = text_of(await chat.say(chosen["item_name"].split("Tape Measure")[-1].strip()))
    assert figure_present(answer, stock["actual_qty"]), answer


async def test_a_leave_balance_for_a_name_typed_in_lower_case(runtime: Any, admin: RestERP) -> None:
    year = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.replace(month=12, day=31).isoformat()]  # fmt: skip
    [faith] = admin.rows("Employee", ["employee_name"], [["employee_name", "=", "Faith Njeri"]])
    ledger = admin.rows("Leave Ledger Entry", ["leaves", "employee"],
                        [["docstatus", "=", 1], ["leave_type", "=", "Annual Leave"], ["from_date", "between", year]])  # fmt: skip
    own = sum(
        (Decimal(str(r["leaves"])) for r in ledger if r["employee"] == faith["name"]), Decimal(0)
    )
    everyone = sum((Decimal(str(r["leaves"])) for r in ledger), Decimal(0))
    assert own != everyone
    chat = await _as(runtime, "hr@demo.local")
    answer = text_of(await chat.say("annual leave balance for faith njeri?"))
    assert figure_present(answer, own), answer
    assert not figure_present(answer, everyone), answer
