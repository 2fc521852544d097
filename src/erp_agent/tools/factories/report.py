"""Report tools, ``report.<name>``: the ERP's standard reports with strictly typed parameters."""

from __future__ import annotations

from typing import Any

from erp_agent.catalog import Catalog, Report
from erp_agent.tools.base import Args, Effect, ReadHandler, Requirement, Shape, Tool, ToolContext
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
            "definition": _definition(report, args, len(result.rows)),
            "columns": result.columns,
            "rows": result.rows,
            "total_row": result.total_row,
            "summary": result.summary,
            "chart": result.chart,
            "message": result.message,
            "prepared": result.prepared,
        }

    return run


def _definition(report: Report, args: Args, rows: int) -> dict[str, Any]:
    """How the report's figures were computed: by the ERP, with these filters."""
    given = {n: v for n, v in args.items() if v not in (None, "", [])}
    dates = [given[n] for n in ("from_date", "to_date") if n in given]
    as_of = next((given[n] for n in ("report_date", "as_of", "date") if n in given), None)
    period = " to ".join(map(str, dates)) if dates else (f"as of {as_of}" if as_of else None)
    filters = [
        f"{report.params[n].label if n in report.params else n}: "
        f"{', '.join(map(str, v)) if isinstance(v, list) else v}"
        for n, v in given.items()
    ]
    filters.append("the ERP's own rules for the report (submitted documents only)")
    return {
        "text": f"The ERP's {report.label} report: {' '.join(report.description.split())}",
        "filters": filters,
        "period": period,
        "record_count": rows,
        "source": f"ERP report ({report.label}), computed by the ERP as you",
    }


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
        shape=Shape.REPORT,
    )


def report_tools(catalog: Catalog) -> list[Tool]:
    """One tool per catalog report."""
    return [report_tool(r, catalog) for r in catalog.reports.values()]
