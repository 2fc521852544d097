"""Leave applications, salary slips and expense claims."""

from __future__ import annotations

import pytest
from builders import World, acc, assert_balanced, make_world

from demo_erp import documents
from demo_erp.exceptions import ValidationError


@pytest.fixture
def world(empty_db) -> World:  # type: ignore[no-untyped-def]
    return make_world(empty_db[1])


def _leave(world: World, **extra: object) -> dict:  # type: ignore[type-arg]
    data = {
        "employee": world.employee,
        "leave_type": "Casual Leave",
        "from_date": "2026-11-02",
        "to_date": "2026-11-04",
        "posting_date": "2026-11-01",
        **extra,
    }
    return world.insert("Leave Application", data)


def test_leave_days_and_dates(world: World) -> None:
    leave = _leave(world)
    assert leave["total_leave_days"] == 3
    assert leave["employee_name"] == "Jane Doe"
    assert _leave(world, to_date="2026-11-02", half_day=1)["total_leave_days"] == 0.5
    with pytest.raises(ValidationError, match="To date cannot be before from date"):
        _leave(world, to_date="2026-11-01")


def test_leave_submit_needs_decision(world: World) -> None:
    leave = _leave(world)
    with pytest.raises(ValidationError) as err:
        documents.submit(world.ctx, "Leave Application", leave["name"])
    assert err.value.message == (
        "Only Leave Applications with status 'Approved' and 'Rejected' can be submitted"
    )
    documents.save(world.ctx, "Leave Application", leave["name"], {"status": "Approved"})
    done = documents.submit(world.ctx, "Leave Application", leave["name"])
    assert done["docstatus"] == 1
    assert documents.cancel(world.ctx, "Leave Application", leave["name"])["status"] == "Cancelled"


def test_salary_slip_totals_and_gl(world: World) -> None:
    slip = world.insert(
        "Salary Slip",
        {
            "employee": world.employee,
            "posting_date": "2026-11-30",
            "start_date": "2026-11-01",
            "end_date": "2026-11-30",
            "total_working_days": 21,
            "payment_days": 21,
            "earnings": [
                {"salary_component": "Basic", "amount": 3000},
                {"salary_component": "HRA", "amount": 1000},
            ],
            "deductions": [{"salary_component": "Income Tax", "amount": 400}],
        },
        submit=True,
    )
    assert (slip["gross_pay"], slip["total_deduction"], slip["net_pay"]) == (4000, 400, 3600)
    assert slip["status"] == "Submitted"
    assert slip["employee_name"] == "Jane Doe"
    gl = {r["account"]: r for r in world.gl(slip["name"])}
    assert gl[acc("Salary")]["debit"] == 4000
    assert gl[acc("Payroll Payable")]["credit"] == 3600
    assert gl[acc("Payroll Payable")]["party_type"] == "Employee"
    assert gl[acc("Payroll Payable")]["party"] == world.employee
    assert gl[acc("VAT")]["credit"] == 400
    assert_balanced(world, slip["name"])
    assert documents.cancel(world.ctx, "Salary Slip", slip["name"])["status"] == "Cancelled"
    assert_balanced(world, slip["name"])


def test_expense_claim(world: World) -> None:
    claim = world.insert(
        "Expense Claim",
        {
            "employee": world.employee,
            "posting_date": "2026-11-10",
            "expenses": [
                {"expense_date": "2026-11-09", "expense_type": "Travel", "amount": 120},
                {"expense_date": "2026-11-09", "expense_type": "Food", "amount": 30},
            ],
        },
    )
    assert claim["total_claimed_amount"] == 150
    assert claim["total_sanctioned_amount"] == 150
    with pytest.raises(ValidationError, match="Approval Status must be 'Approved' or 'Rejected'"):
        documents.submit(world.ctx, "Expense Claim", claim["name"])
    documents.save(world.ctx, "Expense Claim", claim["name"], {"approval_status": "Approved"})
    claim = documents.submit(world.ctx, "Expense Claim", claim["name"])
    assert claim["status"] == "Unpaid"
    gl = {r["account"]: r for r in world.gl(claim["name"])}
    assert gl[acc("Payroll Payable")]["credit"] == 150
    assert gl[acc("Payroll Payable")]["party"] == world.employee
    assert gl[acc("Salary")]["debit"] == 150
    pay = world.insert(
        "Payment Entry",
        {
            "payment_type": "Pay",
            "party_type": "Employee",
            "party": world.employee,
            "posting_date": "2026-11-12",
            "paid_amount": 150,
            "references": [
                {
                    "reference_doctype": "Expense Claim",
                    "reference_name": claim["name"],
                    "allocated_amount": 150,
                }
            ],
        },
        submit=True,
    )
    assert pay["paid_to"] == acc("Payroll Payable")
    assert pay["party_name"] == "Jane Doe"
    assert world.load("Expense Claim", claim["name"])["status"] == "Paid"
    documents.cancel(world.ctx, "Payment Entry", pay["name"])
    assert world.load("Expense Claim", claim["name"])["status"] == "Unpaid"


def _ledger(world: World) -> list[tuple[str, float]]:
    rows = world.ctx.conn.execute(
        'select transaction_type, leaves from "tabLeave Ledger Entry" where docstatus = 1 '
        "order by transaction_type"
    ).fetchall()
    return [(r["transaction_type"], r["leaves"]) for r in rows]


def _allocate(world: World, days: float = 10, **extra: object) -> dict:  # type: ignore[type-arg]
    data = {
        "employee": world.employee,
        "leave_type": "Casual Leave",
        "from_date": "2026-01-01",
        "to_date": "2026-12-31",
        "new_leaves_allocated": days,
        **extra,
    }
    return world.insert("Leave Allocation", data, submit=True)


def test_leave_is_kept_in_the_leave_ledger_as_hrms_keeps_it(world: World) -> None:
    """An allocation posts +days, an approved application -days; cancelling deletes them."""
    allocation = _allocate(world)
    assert allocation["total_leaves_allocated"] == 10
    assert allocation["employee_name"] == "Jane Doe"
    leave = _leave(world, status="Approved")
    documents.submit(world.ctx, "Leave Application", leave["name"])
    rejected = _leave(world, status="Rejected", from_date="2026-11-09", to_date="2026-11-09")
    documents.submit(world.ctx, "Leave Application", rejected["name"])
    assert _ledger(world) == [("Leave Allocation", 10.0), ("Leave Application", -3.0)]
    with pytest.raises(ValidationError, match="already allocated"):
        _allocate(world, from_date="2026-06-01")
    with pytest.raises(ValidationError, match="is linked with the Leave Application"):
        documents.cancel(world.ctx, "Leave Allocation", allocation["name"])
    documents.cancel(world.ctx, "Leave Application", leave["name"])
    assert _ledger(world) == [("Leave Allocation", 10.0)]
    documents.cancel(world.ctx, "Leave Allocation", allocation["name"])
    assert _ledger(world) == []


def test_the_employee_leave_balance_report_reads_the_ledger(world: World) -> None:
    from demo_erp.reports import run

    _allocate(world)
    for start, end in (("2026-11-02", "2026-11-04"), ("2026-12-30", "2027-01-02")):
        leave = _leave(world, status="Approved", from_date=start, to_date=end)
        documents.submit(world.ctx, "Leave Application", leave["name"])
    out = run(
        world.ctx,
        "Employee Leave Balance",
        {"company": world.company, "from_date": "2026-01-01", "to_date": "2026-12-31",
         "consolidate_leave_types": 0},
    )  # fmt: skip
    [row] = [r for r in out["result"] if r.get("leave_type") == "Casual Leave"]
    # 3 days in November and the 2 of the 4 year-end days that fall in 2026.
    assert (row["opening_balance"], row["leaves_allocated"], row["leaves_taken"]) == (0, 10, 5)
    assert (row["leaves_expired"], row["closing_balance"]) == (0, 5)
    with pytest.raises(ValidationError, match="can not be greater than or equal"):
        run(world.ctx, "Employee Leave Balance",
            {"company": world.company, "from_date": "2026-01-01", "to_date": "2026-01-01"})  # fmt: skip
