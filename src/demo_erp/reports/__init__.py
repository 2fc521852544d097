"""Script reports and ``frappe.desk.query_report.run``.

A report is a function ``execute(ctx, filters) -> ReportOutput`` registered with ``@report``.
Reports read through ``demo_erp.query.get_list`` (or apply ``permissions.list_conditions``
themselves), so the user's role and user permissions shape every figure they return.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from demo_erp import permissions
from demo_erp.context import Ctx
from demo_erp.exceptions import DoesNotExistError, PermissionError, ValidationError
from demo_erp.filters import decode

Row = dict[str, Any]
_TOTALLED = {"Currency", "Int", "Float", "Percent", "Duration"}


@dataclass
class ReportOutput:
    columns: list[dict[str, Any]]
    result: list[Any]
    message: str | None = None
    chart: dict[str, Any] | None = None
    report_summary: list[dict[str, Any]] | None = None
    skip_total_row: bool = False


@dataclass(frozen=True)
class ReportDef:
    name: str
    ref_doctype: str
    roles: tuple[str, ...]
    execute: Callable[[Ctx, dict[str, Any]], ReportOutput]
    add_total_row: bool = True
    prepared_report: bool = False
    required_filters: tuple[str, ...] = ()
    filters: list[dict[str, Any]] = field(default_factory=list)


REPORTS: dict[str, ReportDef] = {}
_loaded = False
_load_lock = threading.RLock()


def report(
    name: str,
    ref_doctype: str,
    roles: tuple[str, ...],
    *,
    add_total_row: bool = True,
    prepared_report: bool = False,
    required_filters: tuple[str, ...] = (),
    filters: list[dict[str, Any]] | None = None,
) -> Callable[
    [Callable[[Ctx, dict[str, Any]], ReportOutput]], Callable[[Ctx, dict[str, Any]], ReportOutput]
]:
    def wrap(
        fn: Callable[[Ctx, dict[str, Any]], ReportOutput],
    ) -> Callable[[Ctx, dict[str, Any]], ReportOutput]:
        REPORTS[name] = ReportDef(
            name,
            ref_doctype,
            roles,
            fn,
            add_total_row,
            prepared_report,
            required_filters,
            filters or [],
        )
        return fn

    return wrap


def load_reports() -> dict[str, ReportDef]:
    global _loaded
    # Requests run on several threads: the first one imports, the others wait for it to finish
    # (flagging "loaded" before the imports let a concurrent request see no reports at all).
    with _load_lock:
        if not _loaded:
            for info in pkgutil.iter_modules(__path__):
                importlib.import_module(f"{__name__}.{info.name}")
            _loaded = True
    return REPORTS


def get_report(ctx: Ctx, name: str) -> ReportDef:
    """The report, after Frappe's checks: Report roles, then ``report`` right on ref_doctype."""
    definition = load_reports().get(name)
    if definition is None:
        raise DoesNotExistError(
            f"Report {name} not found",
            messages=[
                {"message": f"Report {name} not found", "title": "Message", "indicator": "red"}
            ],
        )
    if not ctx.is_admin and not (set(definition.roles) & ctx.roles):
        raise PermissionError(
            f"You don't have access to Report: {name}",
            messages=[
                {
                    "message": f"You don't have access to Report: {name}",
                    "title": "Not Permitted",
                    "indicator": "red",
                }
            ],
        )
    if not permissions.has_permission(ctx, definition.ref_doctype, "report"):
        raise PermissionError(
            f"You don't have permission to get a report on: {definition.ref_doctype}",
            messages=[
                {
                    "message": f"You don't have permission to get a report on: {definition.ref_doctype}",
                    "title": "Not Permitted",
                    "indicator": "red",
                }
            ],
        )
    return definition


def total_row(columns: list[dict[str, Any]], rows: list[Any]) -> list[Any]:
    """Frappe's add_total_row: one *list*, sums of numeric columns, 'Total' in the first cell."""
    out: list[Any] = []
    for i, col in enumerate(columns):
        fieldtype = col.get("fieldtype", "Data")
        if fieldtype in _TOTALLED:
            values = [r.get(col["fieldname"]) for r in rows if isinstance(r, dict)]
            numbers = [float(v) for v in values if isinstance(v, (int, float))]
            total = round(sum(numbers), 9)
            if fieldtype == "Percent" and numbers:
                total = round(total / len(numbers), 9)
            out.append(total)
        else:
            out.append("Total" if i == 0 else "")
    if columns and columns[0].get("fieldtype") in _TOTALLED | {"Date"}:
        out[0] = out[0] if columns[0].get("fieldtype") in _TOTALLED else ""
    return out


def run(
    ctx: Ctx, report_name: str, filters: Any = None, ignore_prepared_report: Any = False
) -> dict[str, Any]:
    definition = get_report(ctx, report_name)
    parsed = decode(filters) or {}
    if not isinstance(parsed, dict):
        raise ValidationError("Report filters must be a JSON object")
    missing = [f for f in definition.required_filters if parsed.get(f) in (None, "", [])]
    if missing:
        raise ValidationError(
            f"Missing mandatory filters: {', '.join(missing)}", title="Missing Filters"
        )
    ignore = str(ignore_prepared_report).lower() in ("1", "true", "yes")
    if definition.prepared_report and not ignore:
        # No background worker here: reply like Frappe does when no completed prepared report exists.
        return {
            "prepared_report": True,
            "doc": None,
            "add_total_row": int(definition.add_total_row),
        }
    started = time.perf_counter()
    output = definition.execute(ctx, parsed)
    result: list[Any] = list(output.result)
    if definition.add_total_row and not output.skip_total_row:
        result.append(total_row(output.columns, [r for r in output.result if isinstance(r, dict)]))
    return {
        "result": result,
        "columns": output.columns,
        "message": output.message,
        "chart": output.chart,
        "report_summary": output.report_summary,
        "skip_total_row": int(output.skip_total_row),
        "status": None,
        "execution_time": round(time.perf_counter() - started, 4),
        "add_total_row": int(definition.add_total_row),
    }


def column(
    label: str,
    fieldname: str,
    fieldtype: str = "Data",
    options: str | None = None,
    width: int = 120,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "label": label,
        "fieldname": fieldname,
        "fieldtype": fieldtype,
        "width": width,
    }
    if options:
        out["options"] = options
    return out


def as_list(value: Any) -> list[str]:
    """MultiSelectList filters arrive as JSON arrays (or a single value)."""
    value = decode(value)
    if value in (None, "", []):
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


__all__ = ["ReportOutput", "Row", "as_list", "column", "json", "load_reports", "report", "run"]
