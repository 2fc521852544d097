"""HR and payroll: Employee, Leave Application, Salary Slip and Expense Claim."""

from __future__ import annotations

from demo_erp.context import Ctx
from demo_erp.controllers import Controller, Doc, register
from demo_erp.controllers.common import flt, get_company, getdate, invalidate, party_name
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

    def on_cancel(self, ctx: Ctx, doc: Doc) -> None:
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
