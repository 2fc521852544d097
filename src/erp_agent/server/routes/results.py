"""Stored results: pages of a table and exports, for their owner only."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import FileResponse, Response

from erp_agent.calls.outcome import Status
from erp_agent.errors import ToolInputError
from erp_agent.metrics.drill import drillable, row_refs
from erp_agent.results.layout import default_columns
from erp_agent.results.model_view import rows_of
from erp_agent.results.render import table_page
from erp_agent.results.store import ResultRecord, page_of
from erp_agent.server.routes._deps import Signed, State, User
from erp_agent.server.state import ServerState

router = APIRouter(prefix="/api/results", tags=["results"])
EXPORT_TOOL = "results.export"


async def _owned(state: ServerState, result_id: str, user: str) -> ResultRecord:
    record = await state.runtime.results.fetch_stored(result_id, user)
    if record is None:
        # The same answer whether it is someone else's or missing: ids reveal nothing.
        raise HTTPException(404, f"There is no result {result_id} of yours.")
    return record


def _columns(state: ServerState, record: ResultRecord, wanted: str | None) -> list[str]:
    if not wanted:
        rows = rows_of(record.data) or []
        catalog = state.runtime.catalog
        return default_columns(record.data, rows, catalog, record.entity, record.tool)
    chosen = [c for c in wanted.split(",") if c]
    unknown = [c for c in chosen if c not in record.columns]
    if unknown:
        raise HTTPException(422, f"Unknown column(s): {', '.join(unknown)}.")
    return chosen


@router.get("/{result_id}", summary="One page of a stored result, optionally sorted")
async def page(
    result_id: str,
    user: User,
    state: State,
    start: int = Query(0, ge=0),
    limit: int = Query(20, ge=1, le=200),
    columns: str | None = Query(None, description="Comma-separated column names."),
    sort_by: str | None = None,
    descending: bool = False,
) -> dict[str, Any]:
    record = await _owned(state, result_id, user.session.user)
    chosen = _columns(state, record, columns)
    try:
        part = page_of(
            record.table, start=start, limit=limit, sort_by=sort_by, descending=descending
        )
    except ToolInputError as exc:
        raise HTTPException(422, str(exc)) from exc
    rows = part["rows"]
    linker = state.runtime.connector.link
    entity = record.entity
    shown = table_page(record, rows, chosen, state.runtime.catalog, rows_of(record.data) or rows)
    return {
        "result_id": result_id,
        **shown,
        "links": [linker(entity, r) if entity and r.get("id") else None for r in rows],
        **({"drills": row_refs(result_id, record.data, rows)} if drillable(record.data) else {}),
        "total_rows": part["total_rows"],
        "page": {"start": start, "limit": part["limit"]},
        "sort_by": sort_by,
        "descending": descending,
    }


@router.get("/{result_id}/export", summary="Download a stored result as csv, xlsx or pdf")
async def export(
    result_id: str,
    user: User,
    state: State,
    format: str = Query("csv", pattern="^(csv|xlsx|pdf)$"),
    columns: str | None = None,
) -> Response:
    record = await _owned(state, result_id, user.session.user)
    exported = await _through_export_tool(state, user, result_id, format)
    if exported is not None:
        return exported
    if format != "csv":
        raise HTTPException(501, "Only CSV export is available on this server.")
    # A file holds every column; the table's first ones are only what fits on a screen.
    return _csv(record, _columns(state, record, columns) if columns else record.columns, result_id)


async def _through_export_tool(
    state: ServerState, user: Signed, result_id: str, fmt: str
) -> Response | None:
    """The analytics side owns exports: one gateway call, audited like any other."""
    if state.runtime.registry.get(EXPORT_TOOL) is None:
        return None
    if EXPORT_TOOL not in user.session.allowed_tools:
        return None
    outcome = await state.runtime.gateway.call(
        user.session, EXPORT_TOOL, {"result_id": result_id, "format": fmt}
    )
    block = outcome.data.get("block") if isinstance(outcome.data, dict) else None
    if outcome.status is not Status.OK or not isinstance(block, dict) or not block.get("path"):
        raise HTTPException(400, outcome.message or "The export failed.")
    return FileResponse(
        Path(str(block["path"])),
        media_type=str(block.get("mime") or "application/octet-stream"),
        filename=str(block.get("name") or f"{result_id}.{fmt}"),
    )


def _csv(record: ResultRecord, chosen: list[str], result_id: str) -> Response:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(chosen)
    for row in record.rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in chosen])
    name = f"{record.tool.replace('.', '-') or 'result'}-{result_id}.csv"
    return Response(
        buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
