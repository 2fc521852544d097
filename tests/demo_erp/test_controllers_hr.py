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
