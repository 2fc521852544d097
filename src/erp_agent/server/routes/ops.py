"""Health (store + ERP) and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from erp_agent.server.routes._deps import State

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="Store and ERP reachable?")
async def healthz(state: State) -> JSONResponse:
    checks: dict[str, Any] = {}
    try:
        await state.runtime.store.list_conversations("__healthz__", limit=1)
        await state.db.ping()
        checks["store"] = "ok"
    except Exception as exc:  # a health check reports every failure instead of raising
        checks["store"] = f"failed: {type(exc).__name__}"
    try:
        await state.erp_ping()
        checks["erp"] = "ok"
    except Exception as exc:
        checks["erp"] = f"failed: {type(exc).__name__}"
    healthy = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if healthy else "degraded", **checks}, 200 if healthy else 503
    )


@router.get("/metrics", summary="Prometheus metrics")
async def metrics(state: State) -> Response:
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
