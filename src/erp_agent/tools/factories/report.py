"""Report tools, ``report.<name>``: the ERP's standard reports with strictly typed parameters."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Catalog, Report
from erp_agent.tools.base import Args, Effect, ReadHandler, Requirement, Tool, ToolContext
from erp_agent.tools.factories._text import REPORT_RULE
from erp_agent.tools.factories.schemas import Schema, obj, param_schema


def report_schema(report: Report, catalog: Catalog) -> Schema:
    """Arguments of ``report.<name>``: its parameters; required ones have no default."""
    return obj(
        {name: param_schema(p, catalog) for name, p in report.params.items()},
        report.required,
    )


def _describe(report: Report) -> str:
    text = (
        f"Run the ERP's {report.label} report. {report.description.strip()} Returns the "
        "report's columns, rows, total row and summary exactly as the ERP computed them."
    )
    if report.required:
        text += f" Required: {', '.join(report.required)}."
    return " ".join(text.split())


def _run(report: Report) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        # Defaults are left to the connector, which resolves them the way the ERP would.
        result = await ctx.connector.run_report(ctx.session.credential, report.name, args)
        return {
            "columns": result.columns,
            "rows": result.rows,
            "total_row": result.total_row,
            "summary": result.summary,
            "chart": result.chart,
            "message": result.message,
            "prepared": result.prepared,
        }

    return run


def report_tool(report: Report, catalog: Catalog) -> Tool:
    """The tool ``report.<name>``."""
    return Tool(
        name=f"report.{report.name}",
        description=_describe(report),
        parameters=report_schema(report, catalog),
        effect=Effect.READ,
        module=report.module,
        run=_run(report),
        prompt_rules=REPORT_RULE,
        requires=(Requirement(report=report.name),),
        entity=report.entity,
        action=report.name,
    )


def report_tools(catalog: Catalog) -> list[Tool]:
    """One tool per catalog report."""
    return [report_tool(r, catalog) for r in catalog.reports.values()]
