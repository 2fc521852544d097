"""Accounts Payable: open Purchase Invoices aged by due, posting or supplier-invoice date."""

from __future__ import annotations

from typing import Any

from demo_erp.context import Ctx
from demo_erp.reports import ReportOutput, report
from demo_erp.reports._ageing import PAYABLE, execute


@report(
    "Accounts Payable",
    "Purchase Invoice",
    ("Accounts User", "Purchase User", "Accounts Manager", "Auditor"),
    required_filters=("company",),
)
def accounts_payable(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    return execute(ctx, PAYABLE, filters)
