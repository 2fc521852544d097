"""Accounts Receivable: open Sales Invoices aged by due (or posting) date."""

from __future__ import annotations

from typing import Any

from demo_erp.context import Ctx
from demo_erp.reports import ReportOutput, report
from demo_erp.reports._ageing import RECEIVABLE, execute


@report(
    "Accounts Receivable",
    "Sales Invoice",
    ("Accounts Manager", "Accounts User"),
    required_filters=("company",),
)
def accounts_receivable(ctx: Ctx, filters: dict[str, Any]) -> ReportOutput:
    return execute(ctx, RECEIVABLE, filters)
