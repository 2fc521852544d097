"""Report: the ERP's own report, its parameters filled from the request and the session."""

from __future__ import annotations

from erp_agent.planner import reporting
from erp_agent.planner.steps import Ctx, Step


def handle(ctx: Ctx) -> Step:
    return reporting.report(ctx)
