"""Employee Leave Balance (hrms ``hr/report/employee_leave_balance``): per leave type and
employee, between two dates, the opening balance, leaves newly allocated, taken and expired, and
the closing balance — read from the Leave Ledger as hrms reads it.

closing = new allocations starting in the period + opening - (expired + taken), where taken is
every approved leave day in the period (an application reaching outside it counts only its days
inside), and the opening is the balance the day before the period starts.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from demo_erp.context import Ctx
from demo_erp.exceptions import ValidationError
from demo_erp.reports import ReportOutput, column, report
from demo_erp.reports._common import get_date, scope, truthy

_COLUMNS = [
    column("Leave Type", "leave_type", "Link", "Leave Type", 200),
    column("Employee", "employee", "Link", "Employee", 100),
    column("Employee Name", "employee_name", "Dynamic Link", "employee", 100),
    column("Opening Balance", "opening_balance", "float", width=150),
    column("New Leave(s) Allocated", "leaves_allocated", "float", width=200),
    column("Leave(s) Taken", "leaves_taken", "float", width=150),
    column("Leave(s) Expired", "leaves_expired", "float", width=150),
    column("Closing Balance", "closing_balance", "float", width=150),
]


def _day(value: Any) -> dt.date:
    return dt.date.fromisoformat(str(value)[:10])


class _Ledger:
    """One employee's and leave type's submitted Leave Ledger Entries."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def allocations(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["transaction_type"] == "Leave Allocation"]

    def leaves_for_period(self, start: dt.date, end: dt.date) -> float:
        """hrms ``get_leaves_for_period``: leave days taken in [start, end] (negative), an
        application's days outside the period left out."""
        days = 0.0
        for r in self.rows:
            if r["transaction_type"] != "Leave Application" or float(r["leaves"] or 0) >= 0:
                continue
            first, last = _day(r["from_date"]), _day(r["to_date"])
            if last < start or first > end:
                continue
            if first >= start and last <= end:
                days += float(r["leaves"])
            else:  # clipped to the period: its calendar days inside it
                days -= float((min(last, end) - max(first, start)).days + 1)
        return days

    def balance_on(self, day: dt.date) -> float:
        """hrms ``get_leave_balance_on``: the allocation covering ``day`` less the leave taken
        from its start up to ``day``."""
        covering = [
            a
            for a in self.allocations()
            if _day(a["from_date"]) <= day <= _day(a["to_date"]) and not a["is_expired"]
        ]
        if not covering:
            return 0.0
        start = min(_day(a["from_date"]) for a in covering)
        allocated = sum(float(a["leaves"] or 0) for a in covering)
        return allocated + self.leaves_for_period(start, day)


def _ledgers(ctx: Ctx, employees: list[str]) -> dict[tuple[str, str], _Ledger]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if not employees:
        return {}
    marks = ", ".join("?" for _ in employees)
    rows = ctx.conn.execute(
        f'select * from "tabLeave Ledger Entry" where docstatus = 1 and employee in ({marks})',
        employees,
    )
    for row in map(dict, rows):
        out.setdefault((row["employee"], row["leave_type"]), []).append(row)
    return {k: _Ledger(v) for k, v in out.items()}


def leave_details(ctx: Ctx, employee: str, day: dt.date) -> dict[str, dict[str, float]]:
    """hrms ``get_leave_details``: per leave type with an allocation covering ``day``, the days
    allocated, taken and pending approval within that allocation, what remains (every approved
    leave in the allocation counted, later ones too) and what expired."""
    out: dict[str, dict[str, float]] = {}
    for (_, leave_type), ledger in sorted(_ledgers(ctx, [employee]).items()):
        covering = [
            a
            for a in ledger.allocations()
            if _day(a["from_date"]) <= day <= _day(a["to_date"]) and not a["is_expired"]
        ]
        if not covering:
            continue
        start = min(_day(a["from_date"]) for a in covering)
        end = max(_day(a["to_date"]) for a in covering)
        total = sum(float(a["leaves"] or 0) for a in covering)
        taken = abs(ledger.leaves_for_period(start, end))
        remaining = total - taken
        pending = ctx.conn.execute(
            'select coalesce(sum(total_leave_days), 0) from "tabLeave Application" where '
            "employee = ? and leave_type = ? and status = 'Open' and docstatus = 0 and "
            "from_date >= ? and to_date <= ?",
            (employee, leave_type, start.isoformat(), end.isoformat()),
        ).fetchone()[0]
        out[leave_type] = {
            "total_leaves": round(total, 3),
            "expired_leaves": max(round(total - (remaining + taken), 3), 0.0),
            "leaves_taken": round(taken, 3),
            "leaves_pending_approval": round(float(pending or 0), 3),
            "remaining_leaves": round(remaining, 3),
        }
    return out


def _previous_allocation(
    ctx: Ctx, employee: str, leave_type: str, before: dt.date
) -> dict[str, Any] | None:
    row = ctx.conn.execute(
        'select name, from_date, to_date from "tabLeave Allocation" where to_date < ? and '
        "leave_type = ? and employee = ? and docstatus = 1 order by to_date desc limit 1",
        (before.isoformat(), leave_type, employee),
    ).fetchone()
    return dict(row) if row else None


def _row(
    ctx: Ctx, ledger: _Ledger, employee: str, leave_type: str, start: dt.date, end: dt.date
) -> dict[str, float]:
    taken = -ledger.leaves_for_period(start, end)
    new = expired = carried = 0.0
    for record in ledger.allocations():
        first, last = _day(record["from_date"]), _day(record["to_date"])
        overlaps = (start <= first <= end) or (start <= last <= end) or (first < start < end < last)
        if not overlaps or record["is_expired"]:
            continue
        leaves = float(record["leaves"] or 0)
        if last < end:  # an allocation ending inside the period: its unused leave expires
            used = abs(ledger.leaves_for_period(first, last))
            expired += leaves - min(used, leaves)
        if first >= start:
            if record["is_carry_forward"]:
                carried += leaves
            else:
                new += leaves
    day_before = start - dt.timedelta(days=1)
    previous = _previous_allocation(ctx, employee, leave_type, start)
    if previous and _day(previous["to_date"]) == day_before:
        opening = carried
    else:
        opening = ledger.balance_on(day_before)
    return {
        "opening_balance": round(opening, 3),
        "leaves_allocated": round(new, 3),
        "leaves_taken": round(taken, 3),
        "leaves_expired": round(expired, 3),
        "closing_balance": round(new + opening - (expired + taken), 3),
    }


@report(
    "Employee Leave Balance",
    "Employee",
    ("HR User", "HR Manager", "Employee"),
    add_total_row=False,
    required_filters=("from_date", "to_date", "company"),
)
def employee_leave_balance(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    start, end = get_date(filters, "from_date"), get_date(filters, "to_date")
    if end <= start:
        raise ValidationError('"From Date" can not be greater than or equal to "To Date"')
    where, params = "company = ?", [filters.get("company")]
    for key in ("department", "employee"):
        if filters.get(key):
            where += f" and {key if key != 'employee' else 'name'} = ?"
            params.append(filters[key])
    if filters.get("employee_status"):
        where += " and status = ?"
        params.append(filters["employee_status"])
    permitted, more = scope(ctx, "Employee", "e")
    employees = [
        dict(r)
        for r in ctx.conn.execute(
            f'select e.name, e.employee_name from "tabEmployee" e where {where}{permitted} '
            "order by e.name",
            [*params, *more],
        )
    ]
    leave_types = [
        r["name"] for r in ctx.conn.execute('select name from "tabLeave Type" order by name')
    ]
    ledgers = _ledgers(ctx, [e["name"] for e in employees])
    consolidate = len(employees) > 1 and truthy(filters.get("consolidate_leave_types", 1))
    data: list[dict[str, Any]] = []
    for leave_type in leave_types:
        if consolidate:
            data.append({"leave_type": leave_type})
        for emp in employees:
            ledger = ledgers.get((emp["name"], leave_type), _Ledger([]))
            row: dict[str, Any] = {} if consolidate else {"leave_type": leave_type}
            row |= {"employee": emp["name"], "employee_name": emp["employee_name"]}
            row |= _row(ctx, ledger, emp["name"], leave_type, start, end)
            row["indent"] = 1
            data.append(row)
    return ReportOutput(_COLUMNS, data)
