"""Report tools, ``report.<name>``: the ERP's standard reports with strictly typed parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from erp_agent.catalog import Catalog, Report
from erp_agent.errors import ConfigError, ErpRefusal
from erp_agent.tools.base import (
    Args,
    Definition,
    Effect,
    ReadHandler,
    Requirement,
    Restrictions,
    Shape,
    Tool,
    ToolContext,
)
from erp_agent.tools.factories.schemas import Schema, obj, param_schema

if TYPE_CHECKING:
    from erp_agent.calls.session import Session


def report_schema(report: Report, catalog: Catalog) -> Schema:
    """Arguments of ``report.<name>``: its parameters; required ones have no default."""
    return obj(
        {name: param_schema(p, catalog) for name, p in report.params.items()},
        report.required,
    )


def _companies(parameters: Schema, session: Session, restrictions: Restrictions) -> Schema:
    """A report run for one company, as this user is offered it: the companies their ERP
    permissions allow (an enum), and their own default company (a User Default read at
    sign-in) filled in when the model leaves it out — so the model never has to guess one."""
    prop = parameters.get("properties", {}).get("company")
    if not isinstance(prop, dict) or "default" in prop:
        return parameters
    allowed = tuple(restrictions.get("Company", ()))
    default = session.company or session.default_company
    if allowed and default not in allowed:
        default = allowed[0] if len(allowed) == 1 else None
    if not allowed and not default:
        return parameters
    company = dict(prop)
    out = {**parameters, "properties": {**parameters["properties"], "company": company}}
    if allowed:
        company["enum"] = list(allowed)
    if default:
        company["default"] = default
        company["description"] = f"Default: {default} (the user's own company in the ERP)."
        required = [r for r in parameters.get("required", ()) if r != "company"]
        out["required"] = required
        if not required:
            del out["required"]
    return out


def _describe(report: Report) -> str:
    text = (
        f"Run the ERP's {report.label} report. {report.description.strip()} Returns the "
        "report's columns, rows, total row and summary exactly as the ERP computed them."
    )
    return " ".join(text.split())


def _run(report: Report, catalog: Catalog) -> ReadHandler:
    async def run(ctx: ToolContext, args: Args) -> dict[str, Any]:
        # Defaults are left to the connector, which resolves them the way the ERP would.
        try:
            result = await ctx.connector.run_report(ctx.session.credential, report.name, args)
        except ErpRefusal as exc:
            answered = await _instead(ctx, catalog, report, args, exc)
            if answered is None:
                raise
            return answered
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


_NOT_PERMITTED = ("PermissionError", "Forbidden", "NotPermitted")


async def _instead(
    ctx: ToolContext, catalog: Catalog, report: Report, args: Args, refused: ErpRefusal
) -> dict[str, Any] | None:
    """For a user the ERP does not let run ``report``: the metric that answers the same
    question over documents they may read (the report's declared fallback), saying so and
    quoting the ERP's refusal. None when there is none, or the refusal is not about rights."""
    from erp_agent.tools.modules import metrics  # the metric layer, below the report tools

    fallback = report.fallback
    refusal = refused.refusal
    rights = refusal.status in (401, 403) or any(t in refusal.exc_type for t in _NOT_PERMITTED)
    if fallback is None or not rights or "metrics.query" not in ctx.session.allowed_tools:
        return None

    def given(param: str | None) -> Any:
        """The argument, or the report's own default for it."""
        if param is None:
            return None
        spec = report.params.get(param)
        return args.get(param, spec.default if spec is not None else None)

    name = fallback.metric
    for param, choices in fallback.metric_by.items():
        name = choices.get(str(given(param)), name)
    metric = catalog.metrics.get(name)
    if metric is None or not metrics.readable(ctx, metric, catalog):
        return None
    chosen = given(fallback.group_by_param)
    group_by = [str(chosen)] if chosen else list(fallback.group_by)
    query: dict[str, Any] = {
        "metric": metric.name,
        "group_by": [d for d in group_by if d in metric.dimensions],
        "filters": [
            {"dimension": n, "op": "in" if isinstance(v, list) else "=", "value": v}
            for n, v in args.items()
            if n in metric.dimensions and v not in (None, "", [])
        ],
    }
    if args.get("from_date") and args.get("to_date") and metric.date_field:
        query["period"] = {"from": str(args["from_date"]), "to": str(args["to_date"])}
    if args.get("as_of_date"):
        query["as_of"] = str(args["as_of_date"])
    answered: dict[str, Any] = await metrics.query_handler(catalog)(ctx, query)
    entity = catalog.entity(metric.entity)
    answered["report_unavailable"] = (
        f"The ERP's {report.label} report is not available to you (the ERP said: "
        f"“{refusal.message}”). This is instead the metric {metric.label} over the "
        f"{entity.plural} you can read; say so in the answer."
    )
    return answered


def _definition(report: Report, args: Args, rows: int) -> Definition:
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
    if report.fallback is not None and report.fallback.metric not in catalog.metrics:
        raise ConfigError(
            f"report {report.name}: its fallback metric {report.fallback.metric!r} is not in "
            "the catalog's metrics"
        )
    return Tool(
        name=f"report.{report.name}",
        description=_describe(report),
        parameters=report_schema(report, catalog),
        effect=Effect.READ,
        module=report.module,
        run=_run(report, catalog),
        specialise=_companies if "company" in report.params else None,
        requires=(Requirement(report=report.name),),
        entity=report.entity,
        action=report.name,
        shape=Shape.REPORT,
    )


def report_tools(catalog: Catalog) -> list[Tool]:
    """One tool per catalog report."""
    return [report_tool(r, catalog) for r in catalog.reports.values()]
