"""HR and payroll: Employee, Leave Allocation, Leave Application, Salary Slip and Expense
Claim.

Leave is kept as hrms keeps it, in the Leave Ledger: a submitted Leave Allocation posts its new
leaves (+), an approved, submitted Leave Application its days (-); cancelling deletes the
document's entries (``delete_ledger_entry``). The Employee Leave Balance report reads the
ledger. Not simulated: carry-forward expiry, encashment, earned leave, applications that span
two allocations (hrms splits them), and holidays (a leave day is a calendar day here).
"""

from __future__ import annotations

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers.common import (
    flt,
    get_company,
    getdate,
    invalidate,
    ledger_columns,
    party_name,
)
from demo_erp.controllers.gl import cancel_gl_entries, gl_row, make_gl_entries
from demo_erp.exceptions import ValidationError


def _employee_name(ctx: Ctx, doc: Doc) -> None:
    if doc.get("employee"):
        doc["employee_name"] = party_name(ctx, "Employee", doc["employee"]) or doc.get(
            "employee_name"
        )


@register("Employee")
class Employee(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        invalidate(ctx)  # employee names are cached for the documents that fetch them
        doc["employee_name"] = " ".join(
            part for part in (doc.get("first_name"), doc.get("last_name")) if part
        )


def _post_leave(ctx: Ctx, doc: Doc, leaves: float, *, is_lwp: int = 0) -> None:
    """One submitted Leave Ledger Entry for ``doc`` (hrms ``create_leave_ledger_entry``)."""
    import secrets

    row = {
        **ledger_columns(ctx, secrets.token_hex(5), ctx.now()),
        "employee": doc.get("employee"),
        "employee_name": doc.get("employee_name"),
        "leave_type": doc.get("leave_type"),
        "transaction_type": doc["doctype"],
        "transaction_name": doc["name"],
        "leaves": leaves,
        "from_date": str(doc.get("from_date"))[:10],
        "to_date": str(doc.get("to_date"))[:10],
        "is_carry_forward": 0,
        "is_expired": 0,
        "is_lwp": is_lwp,
        "company": doc.get("company"),
    }
    columns = list(row)
    ctx.conn.execute(
        f'insert into "tabLeave Ledger Entry" ({", ".join(chr(34) + c + chr(34) for c in columns)}) '
        f"values ({', '.join('?' for _ in columns)})",
        [row[c] for c in columns],
    )


def _delete_leave(ctx: Ctx, doc: Doc) -> None:
    ctx.conn.execute(
        'delete from "tabLeave Ledger Entry" where transaction_name = ?', (doc["name"],)
    )


def _is_lwp(ctx: Ctx, leave_type: str | None) -> int:
    row = ctx.conn.execute(
        'select is_lwp from "tabLeave Type" where name = ?', (leave_type,)
    ).fetchone()
    return int(row["is_lwp"] or 0) if row else 0


@register("Leave Allocation")
class LeaveAllocation(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        _employee_name(ctx, doc)
        if doc.get("employee") and not doc.get("department"):
            row = ctx.conn.execute(
                'select department from "tabEmployee" where name = ?', (doc["employee"],)
            ).fetchone()
            doc["department"] = row["department"] if row else None
        doc["unused_leaves"] = flt(doc.get("unused_leaves"))
        doc["total_leaves_allocated"] = flt(
            flt(doc.get("unused_leaves")) + flt(doc.get("new_leaves_allocated"))
        )
        if not (doc.get("from_date") and doc.get("to_date") and doc.get("employee")):
            return  # the mandatory check names what is missing
        start, end = getdate(doc["from_date"]), getdate(doc["to_date"])
        if end < start:
            raise ValidationError("To date cannot be before from date")
        if _is_lwp(ctx, doc.get("leave_type")):
            raise ValidationError(
                f"Leave Type {doc.get('leave_type')} cannot be allocated since it is leave "
                "without pay"
            )
        overlap = ctx.conn.execute(
            'select name from "tabLeave Allocation" where employee = ? and leave_type = ? '
            "and name != ? and docstatus = 1 and to_date >= ? and from_date <= ?",
            (doc["employee"], doc["leave_type"], doc.get("name") or "", str(start), str(end)),
        ).fetchone()
        if overlap:
            raise ValidationError(
                f"{doc['leave_type']} already allocated for Employee {doc['employee']} for "
                f"period {start} to {end}: {overlap['name']}"
            )

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        _post_leave(ctx, doc, flt(doc.get("new_leaves_allocated")))

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        taken = ctx.conn.execute(
            'select transaction_name from "tabLeave Ledger Entry" where employee = ? and '
            "leave_type = ? and transaction_type = 'Leave Application' and from_date >= ? "
            "and to_date <= ?",
            (doc["employee"], doc["leave_type"], str(doc["from_date"])[:10],
             str(doc["to_date"])[:10]),
        ).fetchall()  # fmt: skip
        if taken:
            raise ValidationError(
                f"Leave allocation {doc['name']} is linked with the Leave Application "
                + ", ".join(r["transaction_name"] for r in taken)
            )
        _delete_leave(ctx, doc)


@register("Leave Application")
class LeaveApplication(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        _employee_name(ctx, doc)
        if not doc.get("from_date") or not doc.get("to_date"):
            return
        start, end = getdate(doc["from_date"]), getdate(doc["to_date"])
        if end < start:
            raise ValidationError("To date cannot be before from date")
        days = float((end - start).days + 1)
        if doc.get("half_day"):
            days -= 0.5
        doc["total_leave_days"] = days

    def before_submit(self, ctx: Ctx, doc: Doc) -> None:
        if doc.get("status") not in ("Approved", "Rejected"):
            raise ValidationError(
                "Only Leave Applications with status 'Approved' and 'Rejected' can be submitted"
            )

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        if doc.get("status") == "Approved":
            lwp = _is_lwp(ctx, doc.get("leave_type"))
            _post_leave(ctx, doc, -flt(doc.get("total_leave_days")), is_lwp=lwp)

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        _delete_leave(ctx, doc)
        doc["status"] = "Cancelled"


@register("Attendance")
class Attendance(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        _employee_name(ctx, doc)


@register("Salary Slip")
class SalarySlip(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        _employee_name(ctx, doc)
        company = get_company(ctx, doc.get("company"))
        doc["currency"] = doc.get("currency") or company.get("default_currency")
        gross = flt(sum(flt(r.get("amount")) for r in doc.get("earnings") or []))
        deductions = flt(sum(flt(r.get("amount")) for r in doc.get("deductions") or []))
        doc["gross_pay"] = gross
        doc["total_deduction"] = deductions
        doc["net_pay"] = flt(gross - deductions)
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        # Simplification: ERPNext books salaries through a Payroll Entry; here each slip posts.
        company = get_company(ctx, doc.get("company"))
        employee = doc.get("employee")
        rows = [
            gl_row(company.get("default_salary_account"), debit=flt(doc.get("gross_pay"))),
            gl_row(
                company.get("default_payroll_payable_account"),
                credit=flt(doc.get("net_pay")),
                party_type="Employee",
                party=employee,
            ),
        ]
        if flt(doc.get("total_deduction")):
            rows.append(
                gl_row(company.get("default_tax_account"), credit=flt(doc.get("total_deduction")))
            )
        make_gl_entries(ctx, doc, rows)
        if doc.get("status") != "Withheld":
            doc["status"] = "Submitted"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_gl_entries(ctx, doc)
        doc["status"] = "Cancelled"


@register("Expense Claim")
class ExpenseClaim(Controller):
    def validate(self, ctx: Ctx, doc: Doc) -> None:
        _employee_name(ctx, doc)
        claimed = sanctioned = 0.0
        for row in doc.get("expenses") or []:
            if doc.get("approval_status") == "Rejected":
                row["sanctioned_amount"] = 0.0
            elif not flt(row.get("sanctioned_amount")):
                row["sanctioned_amount"] = flt(row.get("amount"))
            claimed += flt(row.get("amount"))
            sanctioned += flt(row.get("sanctioned_amount"))
        doc["total_claimed_amount"] = flt(claimed)
        doc["total_sanctioned_amount"] = flt(sanctioned)
        if int(doc.get("docstatus") or 0) == 0:
            doc["status"] = "Draft"

    def before_submit(self, ctx: Ctx, doc: Doc) -> None:
        if doc.get("approval_status") not in ("Approved", "Rejected"):
            raise ValidationError("Approval Status must be 'Approved' or 'Rejected'")

    def on_submit(self, ctx: Ctx, doc: Doc) -> None:
        if doc.get("approval_status") == "Rejected":
            doc["status"] = "Rejected"
            return
        company = get_company(ctx, doc.get("company"))
        amount = flt(doc.get("total_sanctioned_amount"))
        make_gl_entries(
            ctx,
            doc,
            [
                gl_row(company.get("default_salary_account"), debit=amount),
                gl_row(
                    company.get("default_payroll_payable_account"),
                    credit=amount,
                    party_type="Employee",
                    party=doc.get("employee"),
                    against_voucher_type="Expense Claim",
                    against_voucher=doc["name"],
                ),
            ],
        )
        doc["status"] = "Unpaid" if amount > 0 else "Paid"

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
        cancel_gl_entries(ctx, doc)
        doc["status"] = "Cancelled"
