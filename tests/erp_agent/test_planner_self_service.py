"""Self-service: "I", "me" and "my" are the user's own Employee record. "How many casual leave
days do I have left?" is that record's leave (the leave form's figures, which an employee may
read where the leave balance report is not theirs to run); "I'd like 3 days of annual leave from
next Monday" and "I need to claim KSh 1,800 for fuel from yesterday" are proposals for that
record, filled as the ERP's forms fill them. Truth is read from the demo ERP's REST API as the
administrator, in its own terms (Employee.user_id, Leave Ledger Entry, docstatus)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from rest_truth import RestERP
from test_planner_conversation import block, chat_as, text_of

from conftest import TEST_TODAY
from erp_agent.evals.score import figure_present
from erp_agent.planner.parse_dates import parse_period, weekday_named

pytestmark = pytest.mark.anyio
EMPLOYEE = "employee@demo.local"
HR = "hr@demo.local"
YEAR = [TEST_TODAY.replace(month=1, day=1).isoformat(), TEST_TODAY.replace(month=12, day=31).isoformat()]  # fmt: skip


def _employee_of(rest: RestERP, user: str) -> dict[str, Any]:
    rows = rest.rows(
        "Employee", ["company", "leave_approver", "employee_name"], [["user_id", "=", user]]
    )
    assert len(rows) == 1, rows
    return rows[0]


def _left(rest: RestERP, employee: str | None, leave_type: str) -> Decimal:
    """Allocated less taken this leave year: the sum of the submitted ledger entries."""
    filters: list[list[Any]] = [
        ["docstatus", "=", 1], ["leave_type", "=", leave_type], ["from_date", "between", YEAR]
    ]  # fmt: skip
    if employee is not None:
        filters.append(["employee", "=", employee])
    return sum((Decimal(str(r["leaves"])) for r in rest.rows("Leave Ledger Entry", ["leaves"], filters)), Decimal(0))  # fmt: skip


@pytest.mark.parametrize("user", [EMPLOYEE, HR])
async def test_my_leave_left_is_my_own_ledgers(runtime: Any, rest: RestERP, user: str) -> None:
    me = _employee_of(rest, user)
    own, everyone = _left(rest, me["name"], "Casual Leave"), _left(rest, None, "Casual Leave")
    assert everyone != own  # the whole company's balance (the wrong reading) is another figure
    chat = await chat_as(runtime, user)
    answer = text_of(await chat.say("hey, how many casual leave days do I still have?"))
    assert figure_present(answer, own), answer
    assert not figure_present(answer, everyone), answer
    assert me["employee_name"] in answer, answer
    assert "Annual Leave" not in answer, answer
    # "And sick days?": the same question of another leave type, still the user's own.
    sick = text_of(await chat.say("and sick days?"))
    assert figure_present(sick, _left(rest, me["name"], "Sick Leave")), sick
    assert "Casual Leave" not in sick, sick


async def test_an_employee_sees_only_their_own_leave_details(demo_erp: Any, rest: RestERP) -> None:
    me, other = _employee_of(rest, EMPLOYEE), _employee_of(rest, HR)
    erp = RestERP(demo_erp.url, EMPLOYEE)
    try:
        method = "/api/method/hrms.hr.doctype.leave_application.leave_application.get_leave_details"
        own = erp.client.get(
            method, params={"employee": me["name"], "date": TEST_TODAY.isoformat()}
        )
        assert own.status_code == 200
        annual = own.json()["message"]["leave_allocation"]["Annual Leave"]
        assert Decimal(str(annual["remaining_leaves"])) == _left(rest, me["name"], "Annual Leave")
        theirs = erp.client.get(method, params={"employee": other["name"]})
        assert theirs.status_code == 403, theirs.text
        # Their own Employee record is readable although it reports to someone they cannot see.
        assert [r["name"] for r in erp.rows("Employee", [])] == [me["name"]]
    finally:
        erp.close()


async def test_applying_for_leave_proposes_my_leave_application(
    runtime: Any, rest: RestERP
) -> None:
    me = _employee_of(rest, EMPLOYEE)
    before = rest.rows("Leave Application", [], [["employee", "=", me["name"]]])
    monday = TEST_TODAY + dt.timedelta(days=7 - TEST_TODAY.weekday())  # Monday of next week
    chat = await chat_as(runtime, EMPLOYEE)
    response = await chat.say("I'd like to apply for 3 days annual leave starting next Monday")
    document = block(response, "proposal")["document"]
    assert document["employee"] == me["name"]
    assert document["company"] == me["company"]
    assert document["approver"] == me["leave_approver"]
    assert document["leave_type"] == "Annual Leave"
    assert document["from_date"] == monday.isoformat()
    assert document["to_date"] == (monday + dt.timedelta(days=2)).isoformat()
    assert document["date"] == TEST_TODAY.isoformat()  # applied today, not on the first day off
    assert rest.rows("Leave Application", [], [["employee", "=", me["name"]]]) == before


async def test_claiming_an_expense_proposes_my_claim(runtime: Any, rest: RestERP) -> None:
    me = _employee_of(rest, EMPLOYEE)
    chat = await chat_as(runtime, EMPLOYEE)
    response = await chat.say("I need to claim KSh 1,800 for fuel from yesterday's client visit")
    document = block(response, "proposal")["document"]
    assert document["employee"] == me["name"]
    assert document["company"] == me["company"]
    assert document["date"] == TEST_TODAY.isoformat()
    [line] = document["expenses"]
    assert line["amount"] == 1800
    assert line["expense_type"] == "Fuel"
    assert line["date"] == (TEST_TODAY - dt.timedelta(days=1)).isoformat()
    assert "ERP" in text_of(response) or "confirm" in text_of(response)


@pytest.mark.parametrize(
    ("said", "today", "day"),
    [
        ("next Monday", dt.date(2026, 11, 30), dt.date(2026, 12, 7)),  # said on a Monday
        ("next Monday", dt.date(2026, 12, 3), dt.date(2026, 12, 7)),
        ("next Friday", dt.date(2026, 11, 30), dt.date(2026, 12, 11)),  # next week's Friday
        ("this Friday", dt.date(2026, 11, 30), dt.date(2026, 12, 4)),
        ("coming Friday", dt.date(2026, 12, 4), dt.date(2026, 12, 11)),
        ("last Friday", dt.date(2026, 11, 30), dt.date(2026, 11, 27)),
        ("last Monday", dt.date(2026, 11, 30), dt.date(2026, 11, 23)),
    ],
)
def test_a_weekday_said_is_one_day(said: str, today: dt.date, day: dt.date) -> None:
    assert weekday_named(said, today) == day
    period = parse_period(f"sales {said}", today)
    assert period is not None
    assert (period.start, period.end) == (day, day)


def test_tomorrow_is_one_day() -> None:
    period = parse_period("what falls due tomorrow", TEST_TODAY)
    assert period is not None
    assert period.start == period.end == TEST_TODAY + dt.timedelta(days=1)


async def test_marking_someone_absent_proposes_their_attendance(
    runtime: Any, rest: RestERP
) -> None:
    kevin = rest.rows("Employee", ["company"], [["employee_name", "=", "Kevin Mwangi"]])
    assert len(kevin) == 1
    chat = await chat_as(runtime, HR)
    response = await chat.say("Mark Kevin Mwangi as absent for today please")
    document = block(response, "proposal")["document"]
    assert document == {
        "employee": kevin[0]["name"], "date": TEST_TODAY.isoformat(), "status": "Absent",
        "company": kevin[0]["company"],
    }  # fmt: skip
    # Marking a leave application (a span with a life of its own) is a change to one, asked.
    answer = text_of(
        await (await chat_as(runtime, HR)).say("mark Kevin Mwangi's leave application as rejected")
    )
    assert "Which leave application" in answer, answer


async def test_my_branch_is_the_branch_i_am_held_to(runtime: Any, demo_erp: Any) -> None:
    manager = RestERP(demo_erp.url, "kisumu.manager@demo.local")
    try:
        overdue = [["docstatus", "=", 1], ["outstanding_amount", ">", 0], ["due_date", "<", TEST_TODAY.isoformat()]]  # fmt: skip
        rows = manager.rows("Sales Invoice", ["outstanding_amount", "branch"], overdue)
    finally:
        manager.close()
    assert {r["branch"] for r in rows} == {"Kisumu"}
    owed = sum((Decimal(str(r["outstanding_amount"])) for r in rows), Decimal(0))
    chat = await chat_as(runtime, "kisumu.manager@demo.local")
    response = await chat.say("whats overdue in my branch?")
    assert response.reading is not None
    assert "branch Kisumu" in response.reading, response.reading
    # What is overdue, not the receivables report's rows (which also hold what is not yet due).
    assert figure_present(text_of(response), owed), text_of(response)


async def test_my_branch_without_one_is_said(runtime: Any) -> None:
    chat = await chat_as(runtime, "admin@demo.local")
    answer = text_of(await chat.say("whats overdue in my branch?"))
    assert "can't tell which branch is yours" in answer, answer


async def test_my_take_home_pay_is_my_own_slips(runtime: Any, rest: RestERP) -> None:
    me = _employee_of(rest, EMPLOYEE)
    last = TEST_TODAY.replace(day=1) - dt.timedelta(days=1)
    month = [last.replace(day=1).isoformat(), last.isoformat()]
    slips = rest.rows("Salary Slip", ["net_pay", "employee"], [["docstatus", "=", 1], ["start_date", "between", month]])  # fmt: skip
    own = sum((Decimal(str(s["net_pay"])) for s in slips if s["employee"] == me["name"]), Decimal(0))  # fmt: skip
    assert own
    assert len({s["employee"] for s in slips}) > 1
    answer = text_of(await (await chat_as(runtime, EMPLOYEE)).say("What was my take home pay for last month pls"))  # fmt: skip
    assert figure_present(answer, own), answer
    # HR asking to be shown everyone's figure ("show me") is not asking for their own.
    shown = await (await chat_as(runtime, HR)).say("show me the net pay for last month")
    assert "employee" not in (shown.reading or ""), shown.reading


async def test_what_rent_cost_my_branch(runtime: Any, rest: RestERP) -> None:
    last = TEST_TODAY.replace(day=1) - dt.timedelta(days=1)
    month = [last.replace(day=1).isoformat(), last.isoformat()]
    rent = rest.rows("GL Entry", ["debit", "credit", "branch"],
                      [["account", "=", "Rent - ST"], ["is_cancelled", "=", 0], ["posting_date", "between", month]])  # fmt: skip
    mine = sum((Decimal(str(r["debit"])) - Decimal(str(r["credit"])) for r in rent if r["branch"] == "Mombasa"), Decimal(0))  # fmt: skip
    every = sum((Decimal(str(r["debit"])) - Decimal(str(r["credit"])) for r in rent), Decimal(0))
    assert mine
    assert mine != every
    answer = text_of(await (await chat_as(runtime, "mombasa.manager@demo.local")).say("What did rent cost our branch last month?"))  # fmt: skip
    assert figure_present(answer, mine), answer


async def test_my_department_is_my_employee_records(runtime: Any, rest: RestERP) -> None:
    me = rest.rows("Employee", ["department"], [["user_id", "=", HR]])[0]
    staff = rest.rows("Employee", [], [["department", "=", me["department"]]])
    response = await (await chat_as(runtime, HR)).say(
        "how many employees do we have in my department"
    )
    assert response.reading == f"count of employees, department {me['department']}", (
        response.reading
    )
    assert figure_present(text_of(response), len(staff)), text_of(response)
