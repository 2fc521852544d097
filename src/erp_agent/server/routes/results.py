"""Stored results: pages of a table and exports, for their owner only."""

from __future__ import annotations

import csv
import io
from typing import Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import JSONResponse, Response

from erp_agent.engine.results import StoredResult, rows_of
from erp_agent.gateway.outcome import Status
from erp_agent.server.routes._deps import State, User
from erp_agent.server.state import ServerState

router = APIRouter(prefix="/api/results", tags=["results"])
EXPORT_TOOL = "results.export"


async def _owned(
    state: ServerState, result_id: str, user: str
) -> tuple[StoredResult, list[dict[str, Any]]]:
    stored = await state.runtime.results.fetch_stored(result_id, user)
    rows = rows_of(stored.data) if stored is not None else None
    if stored is None or rows is None:
        # The same answer whether it is someone else's or missing: ids reveal nothing.
        raise HTTPException(404, f"There is no table result {result_id} of yours.")
    return stored, rows


def _columns(rows: list[dict[str, Any]], wanted: str | None) -> list[str]:
    known = list(dict.fromkeys(k for r in rows for k in r))
    if not wanted:
        return known
    chosen = [c for c in wanted.split(",") if c]
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise HTTPException(422, f"Unknown column(s): {', '.join(unknown)}.")
    return chosen


@router.get("/{result_id}", summary="One page of a stored table result")
async def page(
    result_id: str,
    user: User,
    state: State,
    start: int = Query(0, ge=0),
    limit: int = Query(20, ge=1, le=500),
    columns: str | None = Query(None, description="Comma-separated column names."),
) -> dict[str, Any]:
    stored, rows = await _owned(state, result_id, user.session.user)
    chosen = _columns(rows, columns)
    part = rows[start : start + limit]
    linker = state.runtime.connector.link
    links = [linker(stored.entity, r) if stored.entity and r.get("id") else None for r in part]
    return {
        "result_id": result_id,
        "columns": chosen,
        "rows": [[r.get(c) for c in chosen] for r in part],
        "links": links,
        "total_rows": len(rows),
        "page": {"start": start, "limit": limit},
    }


@router.get("/{result_id}/export", summary="Export a stored result (CSV, or the export tool)")
async def export(
    result_id: str,
    user: User,
    state: State,
    format: str = Query("csv", pattern="^(csv|xlsx|pdf)$"),
    columns: str | None = None,
) -> Response:
    stored, rows = await _owned(state, result_id, user.session.user)
    if state.runtime.registry.get(EXPORT_TOOL) is not None:
        # The analytics side owns exports: one gateway call, audited like any other.
        outcome = await state.runtime.gateway.call(
            user.session, EXPORT_TOOL, {"result_id": result_id, "format": format}
        )
        status = 200 if outcome.status is Status.OK else 400
        return JSONResponse(outcome.for_model(), status_code=status)
    if format != "csv":
        raise HTTPException(501, "Only CSV export is available on this server.")
    chosen = _columns(rows, columns)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(chosen)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in chosen])
    name = f"{stored.tool.replace('.', '-')}-{result_id}.csv"
    return Response(
        buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
