"""hrms's whitelisted helpers an employee's own forms call: the leave a Leave Application form
shows for its employee (``get_leave_details``), per leave type.

Read as the user: the employee record must be one they can read, so an employee sees their own
leave and HR whoever they may see.
"""

from __future__ import annotations

from typing import Any

from demo_erp import documents
from demo_erp.api.methods import Args, _required, whitelist
from demo_erp.context import Ctx
from demo_erp.controllers.common import getdate
from demo_erp.reports.employee_leave_balance import leave_details


@whitelist("hrms.hr.doctype.leave_application.leave_application.get_leave_details")
def get_leave_details(ctx: Ctx, args: Args) -> dict[str, Any]:
    """Per leave type with an allocation covering ``date``: total allocated, expired, taken
    and pending approval within that allocation, and what remains (hrms
    ``get_leave_details``)."""
    employee = documents.get(ctx, "Employee", str(_required(args, "employee")))
    day = getdate(args.get("date") or ctx.today)
    return {
        "leave_allocation": leave_details(ctx, str(employee["name"]), day),
        "leave_approver": employee.get("leave_approver"),
        "lwps": [],
    }
